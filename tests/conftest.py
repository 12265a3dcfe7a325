"""Shared fixtures: one EGL context for the whole run (for each pytest-xdist worker under
`make test`), the backend parameter, and the wheel built once.

Without an OpenGL 4.3 context a GPU test skips locally, but with CI=true it fails: CI has no
GPU and runs the real shaders on Mesa's llvmpipe, so a missing context there is a broken
machine, not a reason to skip.
"""
from __future__ import annotations

import os

import pytest

from gpu_jiggle.gl.context import get_context

ON_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def gl_context():
    try:
        return get_context()
    except RuntimeError as exc:
        if ON_CI:
            pytest.fail(f"CI must run the GPU tests on llvmpipe, but no OpenGL 4.3 context: {exc}")
        pytest.skip(f"no OpenGL 4.3 context: {exc}")


@pytest.fixture
def gl(gl_context):
    """The shared context, checked for GL errors before and after the test."""
    assert gl_context.error == "GL_NO_ERROR"
    yield gl_context
    assert gl_context.error == "GL_NO_ERROR"


@pytest.fixture(params=["cpu", "gpu"])
def backend(request):
    """Each test body runs once on the numpy reference and once on the compute shaders
    (GL errors checked before and after the GPU run)."""
    if request.param == "gpu":
        request.getfixturevalue("gl")
    return request.param


@pytest.fixture(scope="module")
def fox():
    """The Fox sample character (data/fox/Fox.gltf), loaded once per test module."""
    from demo_support import FOX

    from gpu_jiggle.character.gltf.loader import Character
    return Character.load(FOX)


@pytest.fixture(scope="module")
def rig(fox):
    """rigs/fox.toml on the Fox's skeleton, once per test module (tests may tune it)."""
    from demo_support import FOX_RIG

    from gpu_jiggle.character.rig.reader import load_rig
    return load_rig(FOX_RIG, fox.skeleton)


@pytest.fixture(scope="session")
def gltf_validator():
    """``validate(path) -> Report``: the Khronos glTF validator (tests/gltf_validator.py).
    Missing (no node, or the npm package not installed), a test skips locally and fails with
    CI=true, like the GL context: CI installs it, so missing there is a broken machine."""
    from gltf_validator import missing, validate

    why = missing()
    if why:
        if ON_CI:
            pytest.fail(f"CI must validate every baked file, but the glTF validator cannot run: {why}")
        pytest.skip(f"no glTF validator: {why}")
    return validate


@pytest.fixture
def rig_data():
    """rigs/fox.toml as a dict (the TOML's structure), fresh for each test (tests may change it)."""
    import sys

    from demo_support import FOX_RIG

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    with open(FOX_RIG, "rb") as f:
        return tomllib.load(f)


@pytest.fixture(scope="session")
def installed_wheel(tmp_path_factory):
    """The wheel built from this checkout and installed with ``pip install --target``, once per
    run: (site folder, the names in the wheel). Tests only read and import from it.

    pip builds in the source tree (build/, the egg-info), which two processes must not write at
    once: under pytest-xdist the first worker to need the wheel builds it into the run's shared
    temporary folder, holding a lock there, and the others wait for the lock and reuse it."""
    import fcntl
    import subprocess
    import sys
    import zipfile
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    run_folder = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        run_folder = run_folder.parent  # shared by this run's workers, and by no other run
    tmp, site = run_folder / "wheel", run_folder / "wheel" / "site"
    with open(run_folder / "wheel.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not site.is_dir():
            subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(tmp / "dist"), str(root)], check=True, cwd=run_folder)
            wheel = next((tmp / "dist").glob("gpu_jiggle-*.whl"))
            subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
                            str(wheel)], check=True, cwd=tmp)
        wheel = next((tmp / "dist").glob("gpu_jiggle-*.whl"))
        names = zipfile.ZipFile(wheel).namelist()
    return site, names
