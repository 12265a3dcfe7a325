"""Where the tuning panel docks: a pass-through Dear ImGui dock space over the whole window
(the scene shows through all of it but the panel), in which the panel may sit along the left
or right edge, dragged there by its title or asked with :meth:`PanelDock.ask`.

Asked, it docks at the width it fits its content with, and is docked again at the new fitted
width when the window is resized, unless the user has dragged the splitter since: then their
width stays. ``imgui_bundle`` is passed in, not imported here.
"""
from __future__ import annotations

__all__ = ["DOCK_SIDES", "PANEL_WINDOW", "PanelDock", "check_dock_side"]

DOCK_SIDES = ("left", "right")  # the edges PanelDock.ask docks the panel to
PANEL_WINDOW = "###panel"       # the panel's ImGui window id (its title shown before the ###)
UNDOCK = "float"                # asked: leave the dock space
SPLITTER_SLOP = 2.0             # px the docked width may differ from the one asked and still be it


def check_dock_side(side, name: str = "side"):
    """``side`` when it is one of :data:`DOCK_SIDES` or None (not docked).

    Raises:
        ValueError: another value, named as ``name``."""
    if side is not None and side not in DOCK_SIDES:
        raise ValueError(f"{name} = {side!r}: expected one of {', '.join(DOCK_SIDES)} or None")
    return side


class PanelDock:
    """The dock space and the panel's place in it, for one ImGui context (docking enabled).

    Attributes:
        docked: the panel sat in the dock space last frame (set by the panel: :meth:`seen`).
    """

    def __init__(self, imgui):
        self.imgui = imgui
        self.docked = False
        self._asked = None      # a side (or UNDOCK) asked, done at the next frame
        self._id = None         # the dock space's ImGui id
        self._placed = None     # (side, width px) the panel was docked at when asked
        self._display = None    # the last frame's display size, px

    def ask(self, side) -> None:
        """Dock the panel at ``side`` ("left" or "right") from the next frame on; None undocks it.

        Raises:
            ValueError: ``side`` is not one of :data:`DOCK_SIDES` or None."""
        self._asked = check_dock_side(side) or UNDOCK

    def frame(self, fitted_width, shown_width) -> None:
        """The dock space for this frame (after ``new_frame``, before the panel's window):
        ``fitted_width()`` px is the width the panel fits its content with, ``shown_width``
        px its width last frame."""
        imgui, internal = self.imgui, self.imgui.internal
        viewport = imgui.get_main_viewport()
        flags = imgui.DockNodeFlags_.passthru_central_node
        if self._id is None:
            self._id = imgui.get_id("gpu_jiggle dock space")
        side, self._asked = self._asked, None
        display = (viewport.size.x, viewport.size.y)
        if side is None and self.docked and self._placed and self._display not in (None, display) \
                and abs(shown_width - self._placed[1]) <= SPLITTER_SLOP:  # resized, the splitter untouched
            side = self._placed[0]
        self._display = display
        if side == UNDOCK:
            internal.dock_builder_dock_window(PANEL_WINDOW, 0)
            self._placed = None
        elif side is not None:  # the dock builder's nodes are made before the dock space is
            internal.dock_builder_remove_node(self._id)
            internal.dock_builder_add_node(self._id, flags | internal.DockNodeFlagsPrivate_.dock_space)
            internal.dock_builder_set_node_size(self._id, viewport.size)
            ratio = min(max(fitted_width() / max(viewport.size.x, 1.0), 0.05), 0.95)
            direction = imgui.Dir.left if side == "left" else imgui.Dir.right
            split = internal.dock_builder_split_node(self._id, direction, ratio)
            internal.dock_builder_dock_window(PANEL_WINDOW, split.id_at_dir)
            internal.dock_builder_finish(self._id)
            self._placed = (side, ratio * viewport.size.x)
        imgui.dock_space_over_viewport(self._id, viewport, flags)

    def seen(self) -> bool:
        """Inside the panel's window: note whether it is docked; returns whether it was last frame."""
        was, self.docked = self.docked, self.imgui.is_window_docked()
        return was
