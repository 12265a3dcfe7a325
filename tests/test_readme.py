"""The README and docs/*.md, checked as a reader would use them: every Python example runs as
written, every TOML example parses (docs/RIG.md's load together as one rig on the Fox), every
relative link and anchor resolves, every ``gpu-jiggle`` command line parses with the real
command line, every page of docs/ has its line in the README, and the API reference
(docs/API.md) names what the solvers offer.

A code block that cannot run here follows an ``<!-- not run: why -->`` comment."""
from __future__ import annotations

import contextlib
import io
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
CHARACTERS = (ROOT / "docs" / "CHARACTERS.md").read_text(encoding="utf-8")
API_DOC = (ROOT / "docs" / "API.md").read_text(encoding="utf-8")
#: Every page a reader is pointed to: the README, then docs/ (docs/SPEC.md included).
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TEXTS = {page: page.read_text(encoding="utf-8") for page in PAGES}
#: The README's upper bound: a page to read first, the rest in docs/.
README_MAX_BYTES = 10 * 1024
NOT_RUN = re.compile(r"<!--\s*not run:(.*?)-->")


@dataclass
class Block:
    """A fenced code block: its page, the line of its opening fence, language and text, and
    the reason given by an ``<!-- not run: why -->`` comment on the line before (or None)."""
    page: Path
    line: int
    language: str
    code: str
    not_run: str | None

    def __str__(self):
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list:
    """The fenced code blocks of ``page``, in order."""
    found, lines, i = [], TEXTS[page].splitlines(), 0
    while i < len(lines):
        if lines[i].startswith("```"):
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            before = next((lines[k].strip() for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            marker = NOT_RUN.fullmatch(before)
            found.append(Block(page, i + 1, lines[i][3:].strip(), "\n".join(lines[i + 1:end]) + "\n",
                               marker.group(1).strip() if marker else None))
            i = end
        i += 1
    return found


BLOCKS = [b for page in PAGES for b in blocks(page)]
PYTHON = [b for b in BLOCKS if b.language == "python" and b.not_run is None]
TOML = [b for b in BLOCKS if b.language == "toml"]
SHELL = [b for b in BLOCKS if b.language == "sh" and b.not_run is None]
RIG_DOC = ROOT / "docs" / "RIG.md"


def prose(page: Path) -> str:
    """``page`` without its fenced code blocks (each line kept, as an empty one)."""
    out, inside = [], False
    for line in TEXTS[page].splitlines():
        if line.startswith("```"):
            inside = not inside
            out.append("")
        else:
            out.append("" if inside else line)
    return "\n".join(out)


# -- Python examples ------------------------------------------------------------------------

@pytest.mark.parametrize("block", PYTHON, ids=str)
def test_doc_example_runs(block, gl, tmp_path, monkeypatch):
    """Each example runs from a scratch folder that sees the checkout's data/ and rigs/, as
    its relative paths expect, and does what its comments say."""
    for name in ("data", "rigs"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__doc_example__"}
    exec(compile(block.code, str(block), "exec"), namespace)
    if "solver" in namespace:  # the README's chains
        assert namespace["solver"].backend == "gpu"
        assert namespace["solver"].sim_time > 4.9
    elif "godette" in namespace:  # the VRM example
        assert len(namespace["rig"].chains) == len(namespace["springs"].springs) == 8
    elif "frame" in namespace:  # the character example
        assert namespace["frame"].skinning_matrices[0].shape == (24, 4, 4)
    elif "rig" in namespace:  # docs/RIG.md: the Fox's rig, a chain per [[chain]] and per strand
        tables = tomllib.loads((ROOT / "rigs" / "fox.toml").read_text(encoding="utf-8"))
        assert len(namespace["rig"].chains) == len(tables["chain"]) + sum(s["count"] for s in tables["strands"])


def test_readme_has_examples():
    assert len([b for b in PYTHON if b.page.name == "README.md"]) >= 2 and len(PYTHON) >= 5


def test_not_run_markers_say_why_and_stand_before_a_block():
    for page in PAGES:
        lines = TEXTS[page].splitlines()
        for i, line in enumerate(lines):
            if re.match(r"\s*<!--\s*not run", line):
                after = next((x for x in lines[i + 1:] if x.strip()), "")
                marker = NOT_RUN.fullmatch(line.strip())
                assert marker and marker.group(1).strip(), \
                    f"{page.name}:{i + 1}: a not-run marker gives its reason: <!-- not run: why -->"
                assert after.startswith("```"), f"{page.name}:{i + 1}: a not-run marker stands before a code block"


# -- TOML examples --------------------------------------------------------------------------

@pytest.mark.parametrize("block", TOML, ids=str)
def test_toml_example_parses(block):
    tomllib.loads(block.code)


def _rig_tables() -> dict:
    return tomllib.loads("".join(b.code for b in TOML if b.page == RIG_DOC))


def test_rig_examples_load_together_as_one_rig_on_the_fox(fox):
    from gpu_jiggle.character.rig.reader import rig_from_dict

    tables = _rig_tables()
    rig = rig_from_dict(tables, fox.skeleton, "docs/RIG.md")
    assert len(rig.chains) == len(tables["chain"]) + sum(s["count"] for s in tables["strands"])
    assert len(rig.colliders) == len(tables["collider"])
    assert len(rig.constraints) == len(tables["look_at"]) + len(tables["two_bone_ik"])
    assert rig.wind is not None and rig.integrator == tables["solver"]["integrator"]


def test_rig_examples_show_every_table_and_key_the_reader_takes():
    """Each key a table takes is set in docs/RIG.md's examples or shown there commented out
    (``# key = ...``); a strand group's spring keys are a chain's."""
    from gpu_jiggle.character.rig import reader
    from gpu_jiggle.character.rig.specs import WIND_DEFAULTS

    shown = {}
    for block in (b for b in TOML if b.page == RIG_DOC):
        table = None
        for line in block.code.splitlines():
            header = re.match(r"\[\[?([a-z_]+)\]\]?", line)
            if header:
                table = header.group(1)
                shown.setdefault(table, set())
            key = re.match(r"#?\s*([a-z_]+)\s*=", line)
            if key and table:
                shown[table].add(key.group(1))
    expected = {"solver": reader.SOLVER_KEYS, "wind": tuple(WIND_DEFAULTS), "chain": reader.CHAIN_KEYS,
                "strands": [k for k in reader.STRAND_KEYS if k not in reader.SPRING_KEYS],
                "collider": reader.COLLIDER_KEYS, "look_at": reader.LOOK_AT_KEYS, "two_bone_ik": reader.TWO_BONE_KEYS}
    assert sorted(shown) == sorted(reader.TOP_KEYS) == sorted(expected)
    assert {t: sorted(set(keys) - shown[t]) for t, keys in expected.items() if set(keys) - shown[t]} == {}


def test_rig_bounds_are_the_code_s():
    from gpu_jiggle.character.rig import model, reader
    from gpu_jiggle.sim.clock import MAX_SUBSTEPS

    bounds = TEXTS[RIG_DOC].split("\n## Bounds\n", 1)[1]
    for name, value in (("MAX_SUBSTEPS", MAX_SUBSTEPS), ("MAX_COLLIDERS", model.MAX_COLLIDERS),
                        ("MAX_COLLIDER_GROUPS", model.MAX_COLLIDER_GROUPS),
                        ("MAX_RIG_SEGMENTS", model.MAX_RIG_SEGMENTS)):
        assert re.search(rf"{name}`\s+\({value}\)", bounds), name
    assert f"{reader.MAX_RIG_FILE_BYTES // 2**20} MiB" in bounds


# -- links ----------------------------------------------------------------------------------

def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation but ``-`` and ``_`` dropped,
    spaces as ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set:
    """The anchors of ``page``'s headings (a repeated one numbered ``-1``, ``-2``, ...)."""
    seen, out = {}, set()
    for heading in re.findall(r"^#{1,6} (.+)$", prose(page), re.M):
        base = slug(heading)
        out.add(base if base not in seen else f"{base}-{seen[base]}")
        seen[base] = seen.get(base, 0) + 1
    return out


LINKS = [(page, target) for page in PAGES
         for target in re.findall(r"\]\(([^)\s]+)\)", re.sub(r"`[^`\n]*`", "", prose(page)))
         if not re.match(r"[a-z]+:", target)]


def test_the_slug_is_github_s():
    assert slug("A library bake (`app/bake_many.py`, `app/bake_workers.py`)") == \
        "a-library-bake-appbake_manypy-appbake_workerspy"
    assert slug("How close (Godette's hair under the built-in head shake)") == \
        "how-close-godettes-hair-under-the-built-in-head-shake"


def test_every_relative_link_and_anchor_resolves():
    assert len(LINKS) > 20
    broken = []
    for page, target in LINKS:
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{page.name}: {target}: no such file")
        elif anchor and (file.suffix != ".md" or anchor not in anchors(file)):
            broken.append(f"{page.name}: {target}: no such heading")
    assert broken == []


# -- the README -----------------------------------------------------------------------------

def test_the_readme_opens_with_the_two_commands_for_a_fresh_machine():
    first = blocks(ROOT / "README.md")[0]
    assert first.language == "sh" and [line.split()[:2] for line in first.code.splitlines()] == [
        ["make", "demo"], ["make", "test"]]
    assert README.split(first.code, 1)[0].strip().endswith("```sh") and README.startswith("# gpu_jiggle\n")


def test_the_readme_stays_short():
    size = len(README.encode("utf-8"))
    assert size <= README_MAX_BYTES, f"README.md is {size} bytes: move the detail into docs/, a line and a link here"


def test_every_page_of_docs_has_its_line_in_the_readme():
    section = README.split("\n## Documentation\n", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^- \[[^]]+\]\(docs/([^)#]+)\)", section, re.M)
    assert sorted(listed) == sorted(p.name for p in (ROOT / "docs").glob("*.md"))


# -- gpu-jiggle command lines ---------------------------------------------------------------

def _parser():
    from gpu_jiggle.app.cli import build_parser

    return build_parser()


def _commands(parser) -> dict:
    import argparse

    return next(a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def shell_commands() -> list:
    """Every ``gpu-jiggle`` command of the shell examples, as (block, its arguments)."""
    found = []
    for block in SHELL:
        for line in block.code.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            for i, word in enumerate(words):
                if word == "gpu-jiggle" or word.endswith("/gpu-jiggle"):
                    rest = words[i + 1:]
                    end = next((j for j, w in enumerate(rest) if w in ("&", "&&", "|", "||", ";")), len(rest))
                    found.append((block, rest[:end]))
    return found


def test_every_shell_gpu_jiggle_command_parses():
    """Each command line of a shell example, as the real parser reads it: the command, its
    options and their values (nothing runs)."""
    from gpu_jiggle.app.cli import parse

    commands = shell_commands()
    assert len(commands) >= 10
    refused = []
    for block, argv in commands:
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                parse(_parser(), argv)
        except SystemExit:
            refused.append(f"{block}: gpu-jiggle {' '.join(argv)}: {err.getvalue().strip().splitlines()[-1]}")
    assert refused == []


def test_every_inline_gpu_jiggle_command_names_a_real_command_and_its_options():
    """`gpu-jiggle COMMAND --option ...` in the text: the command exists and takes each option
    named (placeholders such as MODEL or [--rig RIG] allowed)."""
    parser = _parser()
    commands = _commands(parser)
    top = {o for a in parser._actions for o in a.option_strings}
    wrong, spans = [], [(page, span) for page in PAGES
                        for span in re.findall(r"`(?:\S+=\S+ )?(?:\S*/)?gpu-jiggle( [^`]*)?`", TEXTS[page])]
    assert len(spans) >= 20
    for page, span in spans:
        words = span.split()
        while words and words[0].startswith("-"):
            if words.pop(0) not in top:
                wrong.append(f"{page.name}: `gpu-jiggle{span}`")
        if not words or not re.fullmatch(r"[a-z][a-z-]*", words[0]):
            continue  # a placeholder (COMMAND)
        if words[0] not in commands:
            wrong.append(f"{page.name}: `gpu-jiggle{span}`: no command {words[0]!r}")
            continue
        options = {o for a in commands[words[0]]._actions for o in a.option_strings}
        named = re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", " ".join(words[1:]))
        wrong += [f"{page.name}: `gpu-jiggle{span}`: no option {o}" for o in named if o not in options]
    assert wrong == []


API = API_DOC.split("\n## API\n", 1)[1].split("\n## ", 1)[0]
#: The first cell of each row of the API table: what a row names.
API_NAMES = [row[2:].split(" | ")[0] for row in API.splitlines() if row.startswith("| `")]
#: Public names of the solvers that the table leaves out: class constants and test helpers.
NOT_IN_TABLE = {"CHAIN_SET", "DIM", "FRAME_PARAMS", "KIND", "RECORDS", "chain_set_from_state", "state"}


def test_the_api_table_names_every_public_solver_name_and_only_real_ones():
    from gpu_jiggle import AngleChainSet, PointChainSet, Solver

    solvers = [Solver(AngleChainSet([1], 1.0, 2.0, 0.5), backend="cpu"), Solver(PointChainSet([1], 2.0, 0.5),
                                                                                 backend="cpu")]
    named = {name for cell in API_NAMES for name in re.findall(r"[sS]olver\.([a-z_]+)", cell)}
    assert [n for n in named if not any(hasattr(s, n) for s in solvers)] == []
    public = {n for s in solvers for n in dir(s) if not n.startswith("_")} - NOT_IN_TABLE
    assert sorted(public - named) == []


def test_the_set_parameters_rows_give_each_chain_kinds_names():
    from gpu_jiggle import AngleChainSet, PointChainSet

    rows = [re.findall(r"([a-z_]+)=…", cell) for cell in API_NAMES if cell.startswith("`solver.set_parameters(")]
    assert rows == [list(AngleChainSet.PARAMETERS), [*PointChainSet.PARAMETERS, "rest_lengths"]]


def test_live_tuning_names_what_pipeline_set_parameters_takes():
    from gpu_jiggle.character.rig.model import LIVE_PARAMETERS

    bullet = CHARACTERS.split("- **Live tuning:**", 1)[1].split("\n- ", 1)[0].split("\n\n", 1)[0]
    assert [name for name in LIVE_PARAMETERS if f"`{name}`" not in bullet] == []
