"""The one error type every spectrum reader raises for bad input."""
from __future__ import annotations

from pathlib import Path


class SpectrumReadError(ValueError):
    """A file could not be read as a spectrum.

    The message always names the file and the problem, e.g.
    ``spec-1.fits: wavelength is not monotonic``. ``path`` and ``problem`` are kept as attributes
    so callers (the ingest summary, the app) can show them separately.
    """

    def __init__(self, path: str | Path, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{Path(self.path).name}: {problem}")

    def __reduce__(self):  # pickles across worker processes with both arguments
        return (type(self), (self.path, self.problem))
