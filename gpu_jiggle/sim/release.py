"""A solver's hold on its backend until :meth:`~Releasable.release`: the GPU buffers and
programs freed now rather than at garbage collection, a context manager that releases on
exit, and a clear error for any use after."""
from __future__ import annotations


class Releasable:
    """``release``, ``_require_live`` and ``with`` for a class that holds its backend in
    ``_backend``."""

    def release(self) -> None:
        """Free the backend's GPU buffers and program now (the solver is unusable after; a
        second call does nothing). A solver that is garbage-collected frees them too."""
        if isinstance(self._backend, _Released):
            return
        self._backend.release()
        self._backend = _Released()

    def _require_live(self, call: str) -> None:
        """RuntimeError naming ``call`` after :meth:`release` (a released solver takes no input)."""
        if isinstance(self._backend, _Released):
            raise RuntimeError(f"{call}() after release(): this {type(self).__name__} was released")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


class _Released:
    """Stands in for a released backend: every use says so."""

    name = "released"

    def __getattr__(self, attr):
        raise RuntimeError("this Solver was released")
