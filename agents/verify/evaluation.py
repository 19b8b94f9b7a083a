"""Agreement of verify briefs with survey pipeline labels, per credibility tier (FORMA 2.13).

Labels are used here only, never by the pipeline. A manifest row counts as labelled when its
label comes from the survey's own pipeline (LAMOST header, SDSS SPECOBJ/SPALL, an official DESI
redrock file): class STAR / GALAXY / QSO and a numeric z. Rows whose label is DERIVED (a redrock
re-run), absent, or a library spectral type without a redshift are not labelled.
"""
from __future__ import annotations

from dataclasses import dataclass

TIERS = ("HIGH", "MEDIUM", "LOW")
DZ_MAX = 0.01


def is_labelled(row: dict) -> bool:
    source = (row.get("label_source") or "").strip()
    if not source or source.lower().startswith(("derived", "none")):
        return False
    if (row.get("class") or "").upper() not in ("STAR", "GALAXY", "QSO"):
        return False
    try:
        float(row.get("z"))
    except (TypeError, ValueError):
        return False
    return True


def split_file(entry: str) -> tuple[str, str | None]:
    """Manifest `file` column: `path#TARGET` for multi-spectrum files."""
    path, _, target = entry.partition("#")
    return path, (target or None)


@dataclass
class Row:
    source: str
    label_class: str
    label_z: float
    type: str
    redshift: float | None
    credibility: str

    @property
    def class_ok(self) -> bool:
        return self.type == self.label_class

    @property
    def agrees(self) -> bool:
        return self.class_ok and self.redshift is not None and abs(self.redshift - self.label_z) <= DZ_MAX


def summarise(rows: list[Row]) -> dict:
    """Per tier and per gate (>= tier): n, coverage, class agreement, full agreement; per class too."""
    n = len(rows)
    out = {"n": n, "tiers": {}, "gates": {}, "per_class": {}}
    for t in TIERS:
        sel = [r for r in rows if r.credibility == t]
        out["tiers"][t] = _stats(sel, n)
    for i, t in enumerate(TIERS):
        sel = [r for r in rows if r.credibility in TIERS[: i + 1]]
        out["gates"][t] = _stats(sel, n)
    for cls in sorted({r.label_class for r in rows}):
        sel = [r for r in rows if r.label_class == cls]
        gate = [r for r in sel if r.credibility in ("HIGH", "MEDIUM")]
        out["per_class"][cls] = {"all": _stats(sel, len(sel)), "medium_or_high": _stats(gate, len(sel))}
    return out


def _stats(sel: list[Row], total: int) -> dict:
    k = len(sel)
    return {"n": k, "coverage": k / total if total else 0.0,
            "class_agreement": sum(r.class_ok for r in sel) / k if k else None,
            "agreement": sum(r.agrees for r in sel) / k if k else None}


def format_summary(s: dict) -> str:
    def pct(x):
        return "   -  " if x is None else f"{100 * x:5.1f}%"
    lines = [f"{s['n']} labelled spectra",
             "tier     n   class   |dz|<=0.01",]
    for t in TIERS:
        st = s["tiers"][t]
        lines.append(f"{t:<6} {st['n']:4d}  {pct(st['class_agreement'])}  {pct(st['agreement'])}")
    lines.append("gate        n  coverage  agreement")
    for t in TIERS:
        st = s["gates"][t]
        lines.append(f">= {t:<6} {st['n']:4d}  {pct(st['coverage'])}   {pct(st['agreement'])}")
    lines.append("class    n   all-agree  >=MEDIUM n  coverage  agreement")
    for cls, st in s["per_class"].items():
        a, g = st["all"], st["medium_or_high"]
        lines.append(f"{cls:<7}{a['n']:4d}   {pct(a['agreement'])}   "
                     f"{g['n']:6d}   {pct(g['coverage'])}  {pct(g['agreement'])}")
    return "\n".join(lines)
