"""The sample the package ships: the Khronos "Fox" character and its spring rig, found
wherever the caller runs from (a source checkout, an editable install or a wheel).

>>> from gpu_jiggle.data import fox_path, fox_rig_path
>>> from gpu_jiggle.character.gltf.loader import Character
>>> from gpu_jiggle.character.rig.reader import load_rig
>>> fox = Character.load(fox_path())
>>> rig = load_rig(fox_rig_path(), fox.skeleton)

The files live in ``gpu_jiggle/data/fox/``: ``Fox.gltf`` (buffers and texture embedded),
``LICENSE.md`` (its source and credits: the rigging and animation are CC-BY 4.0 and their
attribution must travel with the file and any work made from it) and ``fox.toml`` (this
project's rig, tuned on the Run clip). A source checkout also reaches them as
``data/fox/Fox.gltf`` and ``rigs/fox.toml`` (links to these files).
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["SAMPLES", "sample", "fox_path", "fox_rig_path", "fox_license_path"]

#: The bundled samples: name → (model, rig, licence), file names in the sample's folder.
SAMPLES = {"fox": ("Fox.gltf", "fox.toml", "LICENSE.md")}


def _folder(name: str) -> Path:
    """The folder of sample ``name`` as a file-system path."""
    folder = resources.files(__name__).joinpath(name)
    if not folder.is_dir():  # a package installed without its data files
        raise FileNotFoundError(f"gpu_jiggle's sample {name!r} is missing from the installed package ({folder})")
    return Path(str(folder))


def sample(name: str = "fox") -> tuple[Path, Path, Path]:
    """The files of a bundled sample: ``(model, rig, licence)`` paths.

    Raises:
        KeyError: an unknown sample, naming the known ones.
        FileNotFoundError: the package was installed without its data files.
    """
    if name not in SAMPLES:
        raise KeyError(f"no sample {name!r}; the samples are {', '.join(sorted(SAMPLES))}")
    folder = _folder(name)
    return tuple(folder / file for file in SAMPLES[name])


def fox_path() -> Path:
    """``Fox.gltf``: the Khronos Fox (24 joints, clips Survey, Walk and Run; about 1 unit = 1 cm).

    Raises: FileNotFoundError when the package was installed without its data files."""
    return sample("fox")[0]


def fox_rig_path() -> Path:
    """``fox.toml``: the spring rig of the Fox (tail, ear tufts, mane; lengths in the model's unit).

    Raises: FileNotFoundError when the package was installed without its data files."""
    return sample("fox")[1]


def fox_license_path() -> Path:
    """``LICENSE.md``: the Fox's source and credits (CC0 model, CC-BY 4.0 rigging and animation).

    Raises: FileNotFoundError when the package was installed without its data files."""
    return sample("fox")[2]
