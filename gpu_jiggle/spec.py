"""The model specification the package ships (``docs/SPEC.md``): where it is, its sections,
and how messages cite it.

Error messages name a section as ``docs/SPEC.md section N`` (:func:`cite`); an installed user
reads it with ``gpu-jiggle spec N`` (:mod:`gpu_jiggle.app.spec`). The wheel ships the file as
package data of ``gpu_jiggle.docs`` (read through :mod:`importlib.resources`); a source
checkout or an editable install finds ``docs/SPEC.md`` beside the package.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

#: How messages name the file: its path in the source tree and on GitHub.
SPEC_FILE = "docs/SPEC.md"

_HEADING = re.compile(r"^(#{2,6})\s+(?:(\d+(?:\.\d+)*)\.?\s+)?(.+?)\s*$")


def cite(section) -> str:
    """``"docs/SPEC.md section N"``: a section (a number such as ``1`` or ``"4.2"``) as an
    error message cites it."""
    return f"{SPEC_FILE} section {section}"


def spec_path() -> Path:
    """The shipped ``SPEC.md``: the installed package's copy, else ``docs/SPEC.md`` of the source
    checkout the package runs from.

    Raises: FileNotFoundError when neither exists (naming where it looked)."""
    try:
        shipped = resources.files("gpu_jiggle.docs").joinpath("SPEC.md")
        if shipped.is_file():
            return Path(str(shipped))
    except ModuleNotFoundError:  # an editable install or a checkout: no gpu_jiggle.docs package
        pass
    checkout = Path(__file__).resolve().parent.parent / SPEC_FILE
    if not checkout.is_file():
        raise FileNotFoundError(f"gpu_jiggle's {SPEC_FILE} was not found (looked in the package and at {checkout})")
    return checkout


def spec_text() -> str:
    """The whole of ``SPEC.md`` (UTF-8). Raises: FileNotFoundError as :func:`spec_path`."""
    return spec_path().read_text(encoding="utf-8")


@dataclass(frozen=True)
class Section:
    """One heading of the SPEC (level 2 and below) and its text up to the next heading of the
    same or a higher level (so section 4 holds 4.1 and 4.2)."""

    number: str | None  #: "4.2"; None for an unnumbered heading ("What changed from v1")
    title: str  #: the heading's words after the number
    text: str  #: the heading line and the section's lines, ending with a newline

    @property
    def label(self) -> str:
        """``"4.2 Colliders"``, or the title alone for an unnumbered heading."""
        return f"{self.number} {self.title}" if self.number else self.title


def sections(text: str | None = None) -> list[Section]:
    """The sections of ``text`` (default the shipped SPEC), in file order; headings inside
    fenced code blocks are not headings."""
    lines = (spec_text() if text is None else text).splitlines(keepends=True)
    heads, fenced = [], False
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        if match:
            heads.append((i, len(match.group(1)), match.group(2), match.group(3)))
    found = []
    for k, (start, level, number, title) in enumerate(heads):
        end = next((h[0] for h in heads[k + 1:] if h[1] <= level), len(lines))
        body = "".join(lines[start:end]).rstrip("\n") + "\n"
        found.append(Section(number, title, body))
    return found


def find_section(name: str, text: str | None = None) -> Section:
    """The section whose heading number is ``name`` (``"4"``, ``"4.2"``; a trailing dot is
    allowed), or whose unnumbered heading is ``name`` (case ignored), else item k of section
    N's numbered list for ``"N.k"`` (``"8.2"``, the rest property), else the one section
    whose title starts with ``name`` (case ignored: ``"what changed"``, ``"colliders"``).

    Raises: KeyError naming ``name`` and listing the sections (those it starts, when several)."""
    all_sections = sections(text)
    wanted = str(name).strip().rstrip(".")
    for section in all_sections:
        if section.number == wanted or (section.number is None and section.title.lower() == wanted.lower()):
            return section
    starting = [s for s in all_sections if wanted and s.title.lower().startswith(wanted.lower())]
    if len(starting) == 1:
        return starting[0]
    if starting:
        raise KeyError(f"{name!r} starts several {SPEC_FILE} sections: {'; '.join(s.label for s in starting)}")
    item = _numbered_item(all_sections, wanted)
    if item is not None:
        return item
    listing = "; ".join(section.label for section in all_sections)
    parent = next((s.number for s in reversed(all_sections) if s.number and wanted.startswith(s.number + ".")), None)
    hint = f" (section {parent} may hold it)" if parent else ""
    raise KeyError(f"{SPEC_FILE} has no section {name!r}{hint}; its sections: {listing}")


def _numbered_item(all_sections: list, wanted: str):
    """Item k of section N's numbered list ("k. ..." at the start of a line) as a Section
    numbered "N.k", for ``wanted`` = "N.k"; None when there is no such item."""
    match = re.fullmatch(r"(\d+)\.(\d+)", wanted)
    parent = next((s for s in all_sections if match and s.number == match.group(1)), None)
    if parent is None:
        return None
    lines = parent.text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.startswith(f"{match.group(2)}. ")), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"\d+\. |#", lines[i])), len(lines))
    first = lines[start][len(match.group(2)) + 2:]
    title = first.split(":")[0].strip() if ":" in first else first.strip()
    return Section(wanted, title, "".join(lines[start:end]).rstrip("\n") + "\n")
