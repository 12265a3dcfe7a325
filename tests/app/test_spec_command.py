"""``gpu-jiggle spec``: the shipped model specification, whole or one section, its path, and
the refusal of a section it does not have; every section an error message cites exists."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from gpu_jiggle import spec
from gpu_jiggle.app import cli
from gpu_jiggle.sim.spring import check_stable

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "gpu_jiggle"


def run(capsys, *argv):
    status = cli.main(["spec", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_whole_spec_is_printed(capsys):
    status, out, err = run(capsys)
    assert status == 0 and not err
    assert out == (ROOT / "docs" / "SPEC.md").read_text(encoding="utf-8")


def test_one_section_is_printed_with_its_subsections_only(capsys):
    status, out, _ = run(capsys, "4")
    assert status == 0
    headings = [line for line in out.splitlines() if line.startswith("#")]
    assert headings == ["## 4. Point chains (3D)", "### 4.1 Wind", "### 4.2 Colliders"]
    status, out, _ = run(capsys, "4.2")
    assert status == 0 and out.startswith("### 4.2 Colliders\n") and "## 5." not in out and "4.1 Wind" not in out
    assert run(capsys, "1.")[1].startswith("## 1. One damped spring\n")  # a trailing dot as in the heading


def test_an_unnumbered_heading_is_found_by_its_title(capsys):
    status, out, _ = run(capsys, "what changed from v1")
    assert status == 0 and out.startswith("## What changed from v1\n") and "## 0." not in out


def test_an_unknown_section_exits_2_naming_it_and_listing_the_sections(capsys):
    status, out, err = run(capsys, "3.9")
    assert status == 2 and not out
    assert err.startswith("gpu-jiggle spec: docs/SPEC.md has no section '3.9' (section 3 may hold it); its sections: ")
    for label in ("0 Conventions", "1 One damped spring", "4.2 Colliders", "9 Forms chosen"):
        assert label in err
    status, _, err = run(capsys, "42")
    assert status == 2 and "no section '42';" in err


def test_path_prints_the_file_found(capsys):
    status, out, _ = run(capsys, "--path")
    assert status == 0
    assert Path(out.strip()) == spec.spec_path() and Path(out.strip()).samefile(ROOT / "docs" / "SPEC.md")
    status, out, err = run(capsys, "--path", "2")
    assert status == 2 and "--path takes no SECTION" in err


def test_a_missing_file_exits_2_in_one_line(capsys, monkeypatch):
    def missing():
        raise FileNotFoundError("gpu_jiggle's docs/SPEC.md was not found (looked in the package and at /nowhere)")
    monkeypatch.setattr(spec, "spec_path", missing)
    status, _, err = run(capsys, "1")
    assert status == 2 and err.count("\n") == 1 and "was not found" in err


def test_sections_ignore_headings_in_code_and_end_at_the_same_level():
    text = "# T\n\n## 1. A\na\n```\n## 2. not a heading\n```\n### 1.1 B\nb\n## 2. C\nc\n"
    found = spec.sections(text)
    assert [(s.number, s.title) for s in found] == [("1", "A"), ("1.1", "B"), ("2", "C")]
    assert spec.find_section("1", text).text == "## 1. A\na\n```\n## 2. not a heading\n```\n### 1.1 B\nb\n"
    assert spec.find_section("1.1", text).text == "### 1.1 B\nb\n"
    with pytest.raises(KeyError, match="no section '3'"):
        spec.find_section("3", text)


def test_a_section_is_found_by_the_start_of_its_title():
    text = "# T\n## What changed from v1\nw\n## 1. Point chains\np\n### 1.1 Colliders\nc\n### 1.2 Collisions\nd\n"
    assert spec.find_section("what changed", text).title == "What changed from v1"
    assert spec.find_section("POINT", text).number == "1"
    assert spec.find_section("collide", text).number == "1.1"
    with pytest.raises(KeyError, match=r"'coll' starts several docs/SPEC.md sections: 1.1 Colliders; 1.2 Collisions"):
        spec.find_section("coll", text)


def test_messages_cite_the_file_a_user_has():
    assert spec.cite(1) == "docs/SPEC.md section 1" and spec.cite("4.2") == "docs/SPEC.md section 4.2"
    with pytest.raises(ValueError, match=r"34\.57 Hz \(docs/SPEC\.md section 1\); lower the frequency"):
        check_stable([80.0], [0.1], 1 / 120)


def test_every_section_cited_in_code_exists():
    """``cite(N)`` calls and "docs/SPEC.md section N" in strings (messages, help texts) name real sections."""
    numbers = {s.number for s in spec.sections()}
    cited = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "cite" and node.args:
                cited.append((path.name, str(ast.literal_eval(node.args[0]))))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                cited += [(path.name, n) for n in re.findall(r"docs/SPEC\.md section (\d+(?:\.\d+)*)", node.value)]
    assert len({c for _, c in cited}) >= 3, cited
    assert [c for c in cited if c[1] not in numbers] == []


def test_an_item_of_a_numbered_list_is_found_as_a_subsection(capsys):
    """"8.2" is the rest property, item 2 of section 8's list, as docstrings and messages cite
    it; an item the list does not have is refused like any unknown section."""
    assert cli.main(["spec", "8.2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("2. Rest:") and "3. Frame rates" not in out
    item = spec.find_section("3.4")
    assert item.number == "3.4" and item.title == "Precision" and item.text.startswith("4. Precision")
    assert cli.main(["spec", "8.99"]) == 2
    assert "no section '8.99' (section 8 may hold it)" in capsys.readouterr().err
