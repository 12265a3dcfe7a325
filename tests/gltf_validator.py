"""The Khronos glTF validator for the tests: ``validate(path)`` runs
``tools/gltf-validator/validate.js`` (node, with the npm package ``gltf-validator`` that
``make setup`` installs into ``tools/gltf-validator/node_modules``) and returns its report.

The ``gltf_validator`` fixture in ``conftest.py`` gives :func:`validate` when node and the
package are there; without them a test skips locally and fails with ``CI=true`` (CI installs
them, so a missing validator there is a broken machine, not a reason to skip).
"""
from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "tools" / "gltf-validator"
SCRIPT = FOLDER / "validate.js"
PACKAGE = FOLDER / "node_modules" / "gltf-validator" / "package.json"
SEVERITIES = ("error", "warning", "info", "hint")   # the report's severity 0..3
TIMEOUT_SECONDS = 120


@dataclass
class Report:
    """A validation report: ``errors``, ``warnings``, ``infos``, ``hints`` (counts) and
    ``messages`` (the validator's dicts: code, message, severity 0..3, pointer)."""

    path: Path
    errors: int
    warnings: int
    infos: int
    hints: int
    messages: list

    def lines(self, worst: int = 3) -> list[str]:
        """One line per message of severity ``worst`` or worse (0 error .. 3 hint)."""
        return [f"{SEVERITIES[m['severity']]} {m['code']} at {m.get('pointer', '')}: {m['message']}"
                for m in self.messages if m["severity"] <= worst]

    def summary(self) -> str:
        codes = sorted({f"{SEVERITIES[m['severity']]} {m['code']}" for m in self.messages})
        return (f"{self.path.name}: {self.errors} errors, {self.warnings} warnings, {self.infos} infos, "
                f"{self.hints} hints" + (f" ({', '.join(codes)})" if codes else ""))


def missing() -> str | None:
    """Why the validator cannot run here (None when it can)."""
    if shutil.which("node") is None:
        return "node is not installed (tools/setup-system.sh installs Debian's nodejs and npm)"
    if not PACKAGE.is_file():
        return f"the npm package gltf-validator is not installed in {FOLDER} (make setup runs npm ci there)"
    return None


def validate(path) -> Report:
    """Validate the ``.gltf``/``.glb`` at ``path`` (external files read from its folder).

    Raises: RuntimeError when the validator cannot run or does not answer."""
    why = missing()
    if why:
        raise RuntimeError(f"the glTF validator cannot run: {why}")
    path = Path(path)
    done = subprocess.run(["node", str(SCRIPT), str(path)], capture_output=True, text=True,
                          timeout=TIMEOUT_SECONDS, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the glTF validator failed on {path} (exit {done.returncode}): {done.stderr.strip()}")
    issues = json.loads(done.stdout)["issues"]
    return Report(path, issues["numErrors"], issues["numWarnings"], issues["numInfos"], issues["numHints"],
                  issues["messages"])


PRINTED_PER_CODE = 3


def assert_valid(path, validator=validate) -> Report:
    """Validate ``path``, print the report (a summary, then up to :data:`PRINTED_PER_CODE`
    messages of each warning and info code), and fail on any error, listing them."""
    report = validator(path)
    print(report.summary())
    shown = {}
    for line in report.lines(worst=2):
        code = line.split(" ", 2)[1]
        shown[code] = shown.get(code, 0) + 1
        if shown[code] <= PRINTED_PER_CODE:
            print("  " + line)
    assert report.errors == 0, f"{report.summary()}:\n" + "\n".join(report.lines(worst=0)[:20])
    return report
