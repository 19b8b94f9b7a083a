"""One redshift hypothesis (z, class, score and where it came from): what the built-in engine
(hypotheses.py) and Redrock's adapter (redrock_adapter.py) both return. Below both, so that neither
imports the other for it (issue 49: the two imported each other)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Hypothesis:
    z: float
    spectype: str  # STAR / GALAXY / QSO
    subtype: str = ""
    score: float = 0.0
    source: str = "template"  # template / lines / redrock
    chi2: float | None = None
    delta_chi2: float | None = None  # scaled chi2 above the best template fit
    matched: list[str] = field(default_factory=list)  # line names (line matching)
    z_err: float | None = None  # statistical 1-sigma of a refined template z (chi2 + 1, scaled)
    z_scan: float | None = None  # the scan's z before refinement
    refined: dict | None = None  # how it was refined (templates.Refined.as_dict)

    def as_dict(self) -> dict:
        out = {"z": round(self.z, 6), "class": self.spectype, "subtype": self.subtype,
               "score": round(self.score, 2), "source": self.source,
               "chi2": None if self.chi2 is None else round(self.chi2, 1),
               "delta_chi2": None if self.delta_chi2 is None else round(self.delta_chi2, 1),
               "matched": self.matched}
        if self.z_err is not None or self.refined is not None:
            out.update(z_err=None if self.z_err is None else round(float(self.z_err), 6),
                       z_scan=None if self.z_scan is None else round(self.z_scan, 6), refined=self.refined)
        return out
