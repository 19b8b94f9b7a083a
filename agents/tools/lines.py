"""Which kb lines fall in a window, at a redshift, in the observed or the rest frame, and which of their
labels are drawn where they crowd (the interactive plot and the marked step renders use the same rule).
A star's lines come from its own list (kb/stellar_lines.yaml), chosen by its spectral type."""
from __future__ import annotations

import re

import kb

LINE_KINDS = ("emission", "absorption", "sky")


def lines_in_window(
    wave_min: float,
    wave_max: float,
    *,
    z: float = 0.0,
    kinds: tuple[str, ...] | list[str] = LINE_KINDS,
    rest_frame: bool = False,
    major_only: bool = False,
    object_class: str | None = None,
    spectral_type: str | None = None,
) -> list[dict]:
    """Lines to draw on an axis spanning [wave_min, wave_max].

    The axis is observed wavelength unless ``rest_frame`` (then it is observed / (1+z)). Emission and
    absorption lines sit at rest * (1+z) on an observed axis; sky lines are fixed in the observed
    frame, so on a rest-frame axis they move to sky / (1+z). Returns dicts with name, kind, rest
    (catalogue wavelength) and x (position on the axis), sorted by x. ``object_class`` (STAR /
    GALAXY / QSO; None: all lines) keeps the lines that class shows: a QSO's emission lines (and the
    sky), a galaxy's lines without the purely stellar ones, a star those of its ``spectral_type`` (the
    pipeline's subclass, e.g. M5III, DA, Carbon, K7; `stellar_lines_for`).
    """
    one_plus_z = 1.0 + float(z or 0.0)
    out = []
    for line in lines_for(object_class, spectral_type):
        if line["kind"] not in kinds or (major_only and not line.get("major", False)):
            continue
        if line["kind"] == "sky":
            x = line["wave"] / one_plus_z if rest_frame else line["wave"]
        else:
            x = line["wave"] if rest_frame else line["wave"] * one_plus_z
        if wave_min <= x <= wave_max:
            out.append({"name": line["name"], "kind": line["kind"], "rest": line["wave"], "x": x,
                        "major": bool(line.get("major", False))})
    out.sort(key=lambda ln: ln["x"])
    return out


def lines_for(object_class: str | None, spectral_type: str | None = None) -> list[dict]:
    """The catalogue of lines an object of this class (and, for a star, spectral type) shows: a star's own
    lines by its type (`stellar_lines_for`) and the sky's; for the others the lines `shown_for` keeps."""
    if (object_class or "").upper() == "STAR":
        return stellar_lines_for(spectral_type) + kb.lines("sky")
    return [line for line in kb.lines() if shown_for(line, object_class)]


def shown_for(line: dict, object_class: str | None) -> bool:
    cls = (object_class or "").upper()
    if cls == "QSO":
        return line["kind"] != "absorption"
    if cls == "GALAXY":
        return not line.get("stellar", False)
    return True


_MK = re.compile(r"^(?:ESD|USD|SD|D|G|S)?([OBAFGKMLTY])")


def stellar_groups(spectral_type: str | None) -> tuple[str, bool, bool]:
    """A star's spectral type (a survey's subclass: M5III, dM1, K7, A1IV, B9e, WD, DA, DB, Carbon, CV...) as
    (the kb/stellar_lines.yaml groups that apply, '' when unknown; whether it shows emission lines; whether
    nebular, forbidden, ones too)."""
    t = re.sub(r"\s*\(.*\)", "", str(spectral_type or "")).strip().upper()
    nebular = bool(re.search(r"PN|NEBUL", t))
    emission = nebular or "CV" in t or "EMISSION" in t or bool(re.match(r"^(?:SD|D|G)?[OBAFGKM][0-9.]*(?:[IV]+)?E\b", t))
    if "CARBON" in t or re.match(r"^(C|CH|C-[A-Z]+|DQ)\d*$", t):
        return "C", emission, nebular
    if re.match(r"^D[BO]", t):
        return "H", emission, nebular
    if t.startswith("WD") or re.match(r"^D[ACZX]?(\d|$|[^A-Z])", t) or re.match(r"^D[ACZX]", t):
        return "W", emission, nebular
    if "CV" in t:  # a cataclysmic variable: its disc's emission, no photospheric type
        return "", emission, nebular
    found = _MK.match(t)
    if found is None:
        return "", emission, nebular
    letter = found.group(1)
    return ("M" if letter in "LTY" else letter), emission, nebular


def stellar_lines_for(spectral_type: str | None) -> list[dict]:
    """The lines labelled on a star of this type: the absorption features of its group (all of them when the
    type is unknown: those of A to M stars), and emission lines only when the type says the star shows them (forbidden lines only
    on a planetary-nebula nucleus). One entry per wavelength and kind."""
    group, emission, nebular = stellar_groups(spectral_type)
    out = []
    for line in kb.stellar_lines():
        if line["kind"] == "emission":
            keep = emission and (nebular or not line.get("nebular", False))
        else:
            # unknown type: the features of the common types (Balmer, metals, TiO), not carbon or helium stars'
            keep = group in line.get("types", "") if group else any(g in line.get("types", "") for g in "AFGKM")
        if keep:
            out.append(line)
    return out


def stagger_labels(xs: list[float], labels: list[str], *, x_span: float, width_px: int = 800,
                   char_px: float = 7.0, levels: int = 5, frame: tuple[float, float] | None = None) -> list[int | None]:
    """Assign each label a vertical level so that labels on one level never overlap.

    Greedy, in the given order (most important first): a label takes the lowest level where its box
    (width estimated from character count at the plot's scale, plus a gap) overlaps no label already
    placed there. A label that fits on no level, or whose box would leave `frame` (the x limits of
    the drawing), gets None and is not drawn (its line still is): zooming in makes room for it.
    """
    per_px = x_span / max(width_px, 1)
    placed: list[list[tuple[float, float]]] = [[] for _ in range(levels)]
    out = []
    for x, text in zip(xs, labels, strict=True):
        half = 0.5 * (len(text) * char_px + 6) * per_px
        start, end = x - half, x + half
        if frame is not None and (start < frame[0] or end > frame[1]):
            out.append(None)
            continue
        level = next((lvl for lvl in range(levels)
                      if all(end <= a or start >= b for a, b in placed[lvl])), None)
        if level is not None:
            placed[level].append((start, end))
        out.append(level)
    return out


def label_candidates(lines: list[dict]) -> list[dict]:
    """One label per wavelength (an emission and an absorption entry at the same place share it),
    major lines first, so that when labels must be thinned the important ones stay."""
    seen, out = set(), []
    for ln in sorted(lines, key=lambda ln: (not ln.get("major", False), ln["x"])):
        key = round(ln["rest"], 0)
        if key not in seen:
            seen.add(key)
            out.append(ln)
    return sorted(out, key=lambda ln: (not ln.get("major", False), ln["x"]))
