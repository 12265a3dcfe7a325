"""Optional dependencies: the solver core needs numpy and moderngl only; the character pipeline,
the windows, videos and plots need extras (``pyproject.toml``):

- ``[character]``: tomli on Python 3.10 (TOML rigs; glTF files are read with the standard
  library) and tomlkit (writing TOML rigs: ``gpu-jiggle rig``);
- ``[app]``: glfw and imgui-bundle (windows and their panel), Pillow (images), imageio and
  imageio-ffmpeg (videos), tqdm (progress bars), matplotlib (verify's plots);
- ``[draco]``: DracoPy (glTF meshes compressed with ``KHR_draco_mesh_compression``);
- ``[batch]``: dask[distributed], for ``gpu-jiggle bake-many`` (a library baked on a Dask
  cluster, a local one by default);
- ``[bench]``: numba and warp-lang, for ``gpu-jiggle bench --peers`` (the same step written
  with them, timed beside ours; not part of ``[all]``);
- ``[all]``: character, app, draco and batch.

Modules import an optional package through :func:`require`, where it is used, so that a
missing one is reported as the extra to install.
"""
from __future__ import annotations

import importlib

#: Import name → (extra, distribution name) of every optional package.
OPTIONAL = {
    "tomli": ("character", "tomli"),
    "tomlkit": ("character", "tomlkit"),
    "DracoPy": ("draco", "DracoPy"),
    "glfw": ("app", "glfw"),
    "imgui_bundle": ("app", "imgui-bundle"),
    "PIL": ("app", "pillow"),
    "imageio": ("app", "imageio"),
    "imageio_ffmpeg": ("app", "imageio-ffmpeg"),
    "tqdm": ("app", "tqdm"),
    "matplotlib": ("app", "matplotlib"),
    "numba": ("bench", "numba"),
    "warp": ("bench", "warp-lang"),
    "dask": ("batch", "dask[distributed]"),
    "distributed": ("batch", "dask[distributed]"),
}


class MissingExtra(ImportError):
    """An optional package is not installed; the message names the extra that brings it."""


def require(module: str, what: str):
    """Import ``module`` (a name of :data:`OPTIONAL`, or a submodule of one) for ``what``.

    Raises:
        MissingExtra: it is not installed; the message says ``pip install 'gpu-jiggle[extra]'``.
    """
    top = module.split(".")[0]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != top:
            raise
        raise MissingExtra(missing(top, what)) from None


def missing(module: str, what: str) -> str:
    """The words for a missing optional ``module`` that ``what`` needs."""
    extra, distribution = OPTIONAL[module.split(".")[0]]
    return (f"{what} needs {distribution}, which is not installed: pip install 'gpu-jiggle[{extra}]' "
            f"(or '[all]')")
