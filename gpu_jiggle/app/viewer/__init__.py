"""The interactive window and the headless runner of the real-time demos and ``gpu-jiggle play``.

One frame loop serves both: step the demo's solver by the frame time, draw it straight from
the solver's buffers, then either show it in a glfw window or write it to PNGs (and a GIF
or video). The parts, one module each:

- :mod:`~gpu_jiggle.app.viewer.session`: what a demo offers (:class:`Demo`,
  :class:`Parameter`), the :class:`Session` around its frames (pause and single step, the
  frame-rate cap of 30, 60, 144 or none, which does not change the motion, a teleport, a
  debug view) and the timings (frame, solver on the CPU and the GPU, drawing);
- :mod:`~gpu_jiggle.app.viewer.panel`: the tuning panel, Dear ImGui (through
  ``imgui-bundle``) in a window, with a text panel and keys as the fallback (and in
  headless images);
- :mod:`~gpu_jiggle.app.viewer.args`: the demos' shared command line;
- :mod:`~gpu_jiggle.app.viewer.headless`: the offscreen runs (PNGs and a video, or a
  contact strip and a GIF);
- :mod:`~gpu_jiggle.app.viewer.window`: the glfw window, its keys and mouse, and
  :func:`run`, which falls back to the headless run without a display.

A demo is any object with the members of :class:`Demo`; the window and the headless run
build it on their OpenGL context with ``make_demo(ctx, args)``.

Importing this package loads neither ``glfw`` nor ``imgui_bundle``: they are imported by
the functions that open and drive a window.
"""
from __future__ import annotations

from .args import (add_arguments, argument_type, check_arguments, demo_parser, parse_demo_args, parse_fps_cap,
                   parse_frame_list, parse_size)
from .headless import caption, run_headless, run_strip, spread_frames
from .panel import ImGuiPanel, TextPanel, imgui_available
from .session import (FPS_CAPS, STEP_SECONDS, Demo, FrameLimiter, GpuTimer, Parameter, Session, Stats,
                      choose_samples, is_software)
from .window import MAX_FRAME_SECONDS, numbered, open_window, run, run_window, save_screen

__all__ = ["Parameter", "Demo", "GpuTimer", "FrameLimiter", "Stats", "TextPanel", "ImGuiPanel", "Session",
           "FPS_CAPS", "STEP_SECONDS", "MAX_FRAME_SECONDS", "add_arguments", "argument_type", "demo_parser",
           "parse_demo_args", "check_arguments", "parse_size", "parse_fps_cap", "parse_frame_list", "run",
           "run_headless", "run_strip", "spread_frames", "caption", "run_window", "open_window", "save_screen",
           "imgui_available", "is_software", "choose_samples", "numbered"]
