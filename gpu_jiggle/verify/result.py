"""What one SPEC section 8 check measured: :class:`CheckResult`."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class CheckResult:
    """What one check measured.

    Attributes:
        name: short id (``"decay"``, ``"rest"``, ...), also the plot's file name.
        title: the line of the table, e.g. ``"1 free decay"``.
        figure: the measured number the check is judged on (see ``measure``), in ``unit``.
        limit: the bound on the figure: ``figure < limit``, or ``figure <= limit`` where
            ``bound`` is ``"<="``.
        passed: True or False; None when the check could not run (see ``note``).
        measure: what ``figure`` is, in words.
        unit: the unit of ``figure`` and ``limit`` ("" for a ratio).
        details: further measured numbers, by name (each also part of the verdict unless
            its name says otherwise).
        traces: numpy arrays for the plots, by name.
        note: why a check was skipped, or what else it held.
        bound: ``"<"`` or ``"<="``, how ``figure`` is held to ``limit``.
    """

    name: str
    title: str
    figure: float
    limit: float
    passed: bool | None
    measure: str
    unit: str = ""
    details: dict = field(default_factory=dict)
    traces: dict = field(default_factory=dict)
    note: str = ""
    bound: str = "<"

    @property
    def status(self) -> str:
        """``"pass"``, ``"FAIL"`` or ``"skipped"`` (``passed`` is None)."""
        return "skipped" if self.passed is None else ("pass" if self.passed else "FAIL")
