"""Generate the claim-checker evaluation set (issue 20, item 3) from measured facts of real spectra.

    .venv/bin/python bench/claims_eval/generate.py [--out bench/claims_eval/claims_eval.jsonl]
        [--phrasings bench/claims_eval/phrasings.yaml]

`--phrasings` takes another template file of the same structure (`names:` and `templates:`), e.g.
phrasings_blind.yaml, written without reading the extractor, for claims_eval_blind.jsonl.

For every readable spectrum of the shared corpus (shared/data/spectra/MANIFEST.csv) the lines that
its class can show are measured here, with code of this file only (not the checker's): a straight
continuum through the medians of two side bands, the equivalent width as the integral of 1 - F/C
over the core, its error from the pixel errors (1/sqrt(ivar); without ivar the side bands' robust
scatter) plus the continuum's error. A line is a *fact* only when the measurement is unambiguous:
  strong: |EW| >= 2 A (>= 8 A for broad QSO lines) at >= 8 sigma;
  flat:   |EW| < 0.5 A with a 3-sigma error under 1 A (a well-measured flat continuum).
Lines in between give no sentence. Each fact gives one true and one false sentence in a phrasing
drawn from phrasings.yaml (seeded by the spectrum, so the set is reproducible):
  a value: true = the measured EW (hedged, rounded); false = x3 or x1/4 of it;
  a range / bound: true brackets the measured value; false excludes it by a factor >= 2.5;
  present / absent: true or false according to strong / flat (and the sign of the EW);
  order: two strong lines whose EWs differ by > 40 % and > 6 sigma: the true order and its inverse;
  redshift (galaxies and QSOs with a trusted pipeline z and >= 2 strong lines at it; stars with
  >= 2 strong lines at rest): the pipeline z (stars: 0) and a z at which none of the strong lines
  falls within 25 A of a major line;
  broad width (QSOs): the FWHM of the broad line (half maximum of the smoothed profile) and a
  width 4x smaller or larger.
Stars get no redshift in their context (the checker must place their lines at rest); galaxies and
QSOs get the pipeline z, as a verify trajectory's best hypothesis would give it.

The spectra are split by a hash of the file name: one in three is HELD OUT (`holdout_spectrum`),
and so are the phrasings marked `holdout: true`; neither was looked at while the checker was improved.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import warnings
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "tests"))

from shared_data import manifest_rows, spectra_dir  # noqa: E402

from agents.spectra import read_spectrum  # noqa: E402

HERE = Path(__file__).resolve().parent
OUT = HERE / "claims_eval.jsonl"
C_KMS = 299792.458

# rest wavelengths (vacuum, Angstrom), core half-width (rest), what the line can be in which class
STAR_LINES = {"H-alpha": 6564.6, "H-beta": 4862.7, "H-gamma": 4341.7, "H-delta": 4102.9, "Ca II K": 3934.8,
              "Na D": 5895.6, "Mg b": 5176.7, "Ca II 8542": 8544.4}
GALAXY_LINES = {"H-alpha": 6564.6, "H-beta": 4862.7, "[O III] 5008": 5008.2, "[O II]": 3728.5,
                "[N II] 6585": 6585.3, "Ca II K": 3934.8, "Na D": 5895.6, "Mg b": 5176.7}
QSO_BROAD = {"Mg II": 2800.0, "H-beta": 4862.7, "H-alpha": 6564.6, "C III]": 1908.7, "C IV": 1549.5}
MAJOR = [1216.0, 1549.0, 1909.0, 2800.0, 3727.0, 3934.8, 3969.6, 4102.9, 4305.6, 4341.7, 4862.7, 5008.2,
         5176.7, 5895.6, 6564.6, 6585.3, 8544.4]
HALF = {"narrow": 12.0, "broad": 60.0}
# Absorption lines are measured with published index bands (air, Angstrom; (core, blue, red)):
# Lick indices (Worthey et al. 1994; Worthey & Ottaviani 1997) for H-beta, H-gamma_A, H-delta_A, Mg b,
# Na D; the Ca II triplet line 8542 band and continua of Cenarro et al. (2001); H-alpha and Ca II K
# with a 30 / 20 A core and clean continua on both sides. Not the checker's kb windows.
BANDS = {"H-beta": ((4847.875, 4876.625), (4827.875, 4847.875), (4876.625, 4891.625)),
         "H-gamma": ((4319.75, 4363.5), (4283.5, 4319.75), (4367.25, 4419.75)),
         "H-delta": ((4083.5, 4122.25), (4041.6, 4079.75), (4128.5, 4161.0)),
         "Mg b": ((5160.125, 5192.625), (5142.625, 5161.375), (5191.375, 5206.375)),
         "Na D": ((5876.875, 5909.375), (5860.625, 5875.625), (5922.125, 5948.125)),
         "Ca II 8542": ((8527.0, 8557.0), (8474.0, 8484.0), (8563.0, 8577.0)),
         "H-alpha": ((6548.0, 6578.0), (6510.0, 6540.0), (6590.0, 6620.0)),
         "Ca II K": ((3924.0, 3944.0), (3903.0, 3923.0), (4000.0, 4020.0))}


def survey_of(row: dict) -> str:
    s = row["survey"].split()[0]
    return "SDSS" if s.startswith("SDSS") else "LAMOST" if s.startswith("LAMOST") else s


def holdout_spectrum(file: str) -> bool:
    return int(hashlib.sha1(file.encode()).hexdigest(), 16) % 3 == 0


class Facts:
    """Independent measurements of one spectrum (observed frame)."""

    def __init__(self, spec):
        w = np.asarray(spec.spectral_axis.to_value("Angstrom"), float)
        f = np.asarray(getattr(spec.flux, "value", spec.flux), float)
        bad = np.zeros(f.shape, bool) if spec.mask is None else np.asarray(spec.mask, bool)
        ivar = None
        if spec.uncertainty is not None:
            ivar = np.asarray(spec.uncertainty.represent_as(type(spec.uncertainty)).array, float)
            if type(spec.uncertainty).__name__ != "InverseVariance":
                from astropy.nddata import InverseVariance
                ivar = np.asarray(spec.uncertainty.represent_as(InverseVariance).array, float)
            if not np.any(ivar > 0):
                ivar = None
        good = np.isfinite(w) & np.isfinite(f) & ~bad
        if ivar is not None:
            good &= ivar > 0
        o = np.argsort(w)
        self.w, self.f, self.good = w[o], f[o], good[o]
        self.sig = None if ivar is None else 1.0 / np.sqrt(np.where(ivar[o] > 0, ivar[o], np.nan))

    def band(self, a: float, b: float):
        i = self.good & (self.w >= a) & (self.w <= b)
        return i

    def ew(self, centre: float, half: float, bands=None, factor: float = 1.0):
        """(EW absorption-positive, sigma, relative extreme) or None when the windows lack pixels.
        `bands`: rest-frame (core, blue, red) moved by `factor`; else core +-half with side bands."""
        gap, side = 0.5 * half, max(1.5 * half, 25.0)
        if bands is None:
            bands = ((centre - half, centre + half), (centre - half - gap - side, centre - half - gap),
                     (centre + half + gap, centre + half + gap + side))
        else:
            bands = tuple((a * factor, b * factor) for a, b in bands)
        (c0, c1), (b0, b1), (r0, r1) = bands
        half = 0.5 * (c1 - c0)
        core = self.band(c0, c1)
        bl = self.band(b0, b1)
        rd = self.band(r0, r1)
        n_core_all = ((self.w >= c0) & (self.w <= c1)).sum()
        if bl.sum() < 5 or rd.sum() < 5 or core.sum() < 5 or core.sum() < 0.8 * n_core_all:
            return None
        xb, xr = np.median(self.w[bl]), np.median(self.w[rd])
        yb, yr = np.median(self.f[bl]), np.median(self.f[rd])
        if yb <= 0 or yr <= 0:
            return None
        wc, fc = self.w[core], self.f[core]
        cont = yb + (yr - yb) * (wc - xb) / (xr - xb)
        dl = np.gradient(wc)
        ew = float(np.sum((1.0 - fc / cont) * dl))
        if self.sig is not None:
            s_pix = self.sig[core]
            noise_b = np.median(self.sig[bl]) / np.sqrt(bl.sum())
            noise_r = np.median(self.sig[rd]) / np.sqrt(rd.sum())
        else:
            def mad(i):
                d = np.diff(self.f[i])
                return 1.4826 * np.median(np.abs(d - np.median(d))) / np.sqrt(2.0)
            s = 0.5 * (mad(bl) + mad(rd))
            s_pix = np.full(wc.size, s)
            noise_b, noise_r = s / np.sqrt(bl.sum()), s / np.sqrt(rd.sum())
        var_pix = float(np.sum((s_pix / cont * dl) ** 2))
        rel_c = np.hypot(noise_b / yb, noise_r / yr) / np.sqrt(2.0)
        var_cont = (rel_c * (2 * half - ew)) ** 2
        sigma = float(np.sqrt(var_pix + var_cont))
        r = fc / cont - 1.0
        from scipy.ndimage import median_filter
        r = median_filter(r, size=3, mode="nearest")
        extreme = float(-r.min()) if ew > 0 else float(r.max())
        return ew, sigma, extreme, (wc, r)

    def fwhm_kms(self, centre: float, half: float):
        m = self.ew(centre, half)
        if m is None or m[0] >= 0:
            return None
        wc, r = m[3]
        from scipy.ndimage import uniform_filter1d
        r = uniform_filter1d(r, 5)
        i = int(np.argmax(r))
        if r[i] <= 0:
            return None
        hm = r[i] / 2
        lo, hi = i, i
        while lo > 0 and r[lo] > hm:
            lo -= 1
        while hi < r.size - 1 and r[hi] > hm:
            hi += 1
        if lo == 0 or hi == r.size - 1:
            return None
        return float((wc[hi] - wc[lo]) / wc[i] * C_KMS)


def classify(ew, sigma, extreme, broad=False) -> str | None:
    if abs(ew) >= (8.0 if broad else 2.0) and abs(ew) >= 8.0 * sigma and extreme >= 0.1:
        return "strong_abs" if ew > 0 else "strong_em"
    if abs(ew) < 0.5 and 3.0 * sigma < 1.0 and abs(extreme) < 0.1:
        return "flat"
    return None


def fmt(v: float) -> str:
    a = abs(v)
    return f"{v:.0f}" if a >= 20 else f"{v:.1f}" if a >= 1 else f"{v:.2f}"


def fmt_z(z: float, star: bool = False) -> str:
    """A star's z is 0 (its RV is within the checker's tolerance); a galaxy's to 3 significant digits."""
    return "0.000" if star else f"{z:.3f}" if z >= 0.1 else f"{z:.4f}"


class Writer:
    def __init__(self, phr: dict, rng: random.Random, base: dict):
        self.phr, self.rng, self.base, self.rows = phr, rng, base, []

    def name(self, line: str) -> str:
        return self.rng.choice(self.phr["names"][line])

    def template(self, kind: str, **need):
        opts = [t for t in self.phr["templates"][kind]
                if not (t.get("absorption_only") and need.get("em_ab") != "absorption")]
        return self.rng.choice(opts)

    def add(self, kind: str, truth: bool, fact: str, **slots):
        t = self.template(kind, **slots)
        text = t["t"]
        for k in ("line", "line_a", "line_b"):
            if k in slots:
                slots[k] = self.name(slots[k])
        text = text.format(**slots)
        text = text[0].upper() + text[1:]
        self.rows.append(dict(self.base, kind=kind, truth=truth, text=text, fact=fact,
                              holdout_phrasing=bool(t.get("holdout")), template=t["t"]))


def spectrum_rows(row: dict, spec, phr: dict) -> list[dict]:
    cls = (row["class"] or "").upper()
    if cls not in ("STAR", "GALAXY", "QSO"):
        return []
    facts = Facts(spec)
    if facts.good.sum() < 500:
        return []
    mz = float(row["z"]) if row["z"] not in ("", None) else None
    star = cls == "STAR"
    z_true = (mz or 0.0) if star else mz
    if z_true is None:
        return []
    trusted_z = star or "not truth" not in row["label_source"]
    base = {"file": row["file"], "survey": survey_of(row), "class": cls,
            "context_z": None if star else z_true, "holdout_spectrum": holdout_spectrum(row["file"])}
    rng = random.Random(int(hashlib.sha1(row["file"].encode()).hexdigest(), 16))
    wr = Writer(phr, rng, base)
    lines = dict(STAR_LINES if star else GALAXY_LINES)
    measured = {}
    for name, rest in lines.items():
        bands = BANDS.get(name) if star or name in ("Ca II K", "Na D", "Mg b") else None
        m = facts.ew(rest * (1 + z_true), HALF["narrow"] * (1 + z_true), bands, 1 + z_true)
        if m is None:
            continue
        st = classify(*m[:3])
        if star and st == "strong_em" and name != "H-alpha":
            continue  # a negative index of a star's absorption line is its continuum bands' doing, not emission
        if st:
            measured[name] = (m[0], m[1], st)
    broad = {}
    if cls == "QSO":
        for name, rest in QSO_BROAD.items():
            m = facts.ew(rest * (1 + z_true), HALF["broad"] * (1 + z_true))
            if m is None:
                continue
            st = classify(*m[:3], broad=True)
            if st:
                broad[name] = (m[0], m[1], st, facts.fwhm_kms(rest * (1 + z_true), HALF["broad"] * (1 + z_true)))
                measured.pop(name, None)
    strong = {k: v for k, v in measured.items() if v[2] != "flat"}
    flat = {k: v for k, v in measured.items() if v[2] == "flat"}
    picks = list(strong.items())
    rng.shuffle(picks)
    for name, (ew, sig, st) in picks[:3]:
        em_ab = "absorption" if st == "strong_abs" else "emission"
        a = abs(ew)
        kind = rng.choice(["ew_value", "ew_value", "ew_range", "ew_atleast", "ew_atmost", "present", "absent"])
        fact = f"{name} EW {ew:.2f} +- {sig:.2f} A ({em_ab})"
        if kind == "ew_value":
            wr.add(kind, True, fact, line=name, v=fmt(a), em_ab=em_ab)
            wrong = a * rng.choice([3.0, 4.0]) if a < 15 else a / 4.0
            wr.add(kind, False, fact, line=name, v=fmt(wrong), em_ab=em_ab)
        elif kind == "ew_range":
            wr.add(kind, True, fact, line=name, lo=fmt(0.8 * a), hi=fmt(1.2 * a), em_ab=em_ab)
            f = rng.choice([3.0, 0.25])
            wr.add(kind, False, fact, line=name, lo=fmt(0.8 * a * f), hi=fmt(1.2 * a * f), em_ab=em_ab)
        elif kind == "ew_atleast":
            wr.add(kind, True, fact, line=name, v=fmt(0.6 * a), em_ab=em_ab)
            wr.add(kind, False, fact, line=name, v=fmt(3.0 * a), em_ab=em_ab)
        elif kind == "ew_atmost":
            wr.add(kind, True, fact, line=name, v=fmt(1.6 * a), em_ab=em_ab)
            wr.add(kind, False, fact, line=name, v=fmt(a / 3.0), em_ab=em_ab)
        elif kind == "present":
            wr.add(kind, True, fact, line=name, em_ab=em_ab)
            wr.add("absent", False, fact, line=name, em_ab=em_ab)
        else:
            other = "emission" if em_ab == "absorption" else "absorption"
            wr.add("absent", True, fact, line=name, em_ab=other)
            wr.add("present", False, fact, line=name, em_ab=other)
    if len(strong) >= 2:  # a line pair: values, or an order
        (na, (ea, sa, _)), (nb, (eb, sb, _)) = picks[0], picks[1]
        fact = f"{na} EW {ea:.2f} +- {sa:.2f}; {nb} EW {eb:.2f} +- {sb:.2f}"
        same = np.sign(ea) == np.sign(eb)
        if same and abs(abs(ea) - abs(eb)) > max(0.4 * max(abs(ea), abs(eb)), 6 * np.hypot(sa, sb)) \
                and rng.random() < 0.5:
            big, small = (na, nb) if abs(ea) > abs(eb) else (nb, na)
            em_ab = "absorption" if ea > 0 else "emission"
            wr.add("order", True, fact, line_a=big, line_b=small, em_ab=em_ab)
            wr.add("order", False, fact, line_a=small, line_b=big, em_ab=em_ab)
        else:
            wr.add("ew_pair", True, fact, line_a=na, line_b=nb, va=fmt(abs(ea)), vb=fmt(abs(eb)))
            wr.add("ew_pair", False, fact, line_a=na, line_b=nb, va=fmt(abs(ea)), vb=fmt(abs(eb) * 4.0))
    for name, (ew, sig, _st) in list(flat.items())[:1]:  # presence / absence on a flat continuum
        fact = f"{name} flat: EW {ew:.2f} +- {sig:.2f} A"
        em_ab = rng.choice(["emission", "absorption"]) if not star or not name.startswith("H-") else "emission"
        wr.add("absent", True, fact, line=name, em_ab=em_ab)
        wr.add("present", False, fact, line=name, em_ab=em_ab)
    for name, (ew, sig, st, fw) in list(broad.items())[:2]:  # broad QSO lines
        fact = f"broad {name} EW {ew:.1f} +- {sig:.1f} A, FWHM {fw or float('nan'):.0f} km/s"
        if st != "strong_em":
            continue
        if fw and 1500 < fw < 15000 and rng.random() < 0.5:
            wr.add("broad_width", True, fact, line=name, v=f"{round(fw, -2):.0f}")
            wrong = fw / 4 if fw > 3000 else fw * 4
            wr.add("broad_width", False, fact, line=name, v=f"{round(wrong, -2):.0f}")
        else:
            wr.add("present", True, fact, line=name, em_ab="emission")
            wr.add("absent", False, fact, line=name, em_ab="emission")
    sig_lines = [(k, v) for k, v in {**strong, **{k: v[:3] for k, v in broad.items()}}.items() if v[2] != "flat"]
    # the stated z must place the strong narrow lines where they are (their extremes within 0.2 %)
    offsets = []
    for k, (ew, _s, _st) in strong.items():
        c = lines[k] * (1 + z_true)
        i = facts.band(c - 15 * (1 + z_true), c + 15 * (1 + z_true))
        if i.sum() >= 5:
            r = facts.f[i] * (1 if ew < 0 else -1)
            offsets.append(abs(facts.w[i][int(np.argmax(r))] / c - 1))
    lines_agree = bool(offsets) and float(np.median(offsets)) < 0.002
    if trusted_z and lines_agree and len(sig_lines) >= 2:
        rest_all = {**lines, **QSO_BROAD}
        obs = [rest_all[k] * (1 + z_true) for k, _ in sig_lines]
        wrong = None
        for _ in range(200):
            zc = rng.uniform(0.02, 0.6) if star else max(0.0, z_true + rng.uniform(-0.6, 0.8))
            if abs(zc - z_true) < 0.05:
                continue
            if all(min(abs(o - r * (1 + zc)) for r in MAJOR) > 25.0 for o in obs):
                wrong = zc
                break
        if wrong is not None:
            fact = f"z {z_true:.4f}; strong lines {', '.join(k for k, _ in sig_lines)}"
            wr.add("redshift", True, fact, z=fmt_z(z_true, star))
            wr.add("redshift", False, fact, z=fmt_z(wrong))
    return wr.rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--phrasings", type=Path, default=HERE / "phrasings.yaml",
                    help="template file (names: and templates:)")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    base = spectra_dir()
    if base is None:
        sys.exit("shared/data/spectra not found (set SPECREVIEW_SHARED_DATA)")
    phr = yaml.safe_load(args.phrasings.read_text(encoding="utf-8"))
    rows = []
    for row in manifest_rows():
        path, _, target = row["file"].partition("#")
        try:
            spec = read_spectrum(base / path, target or None)
        except Exception as exc:  # an unreadable file gives no sentence
            print(f"skip {row['file']}: {exc}", file=sys.stderr)
            continue
        rows += spectrum_rows(row, spec, phr)
    with open(args.out, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    n_spec = {}
    for r in rows:
        n_spec.setdefault(r["survey"], set()).add(r["file"])
    print(f"{len(rows)} sentences ({sum(not r['truth'] for r in rows)} false) over "
          f"{sum(len(v) for v in n_spec.values())} spectra: "
          + ", ".join(f"{k} {len(v)}" for k, v in sorted(n_spec.items())))


if __name__ == "__main__":
    main()
