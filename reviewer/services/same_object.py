"""Every spectrum of an object: a sky cross-match that groups spectra across epochs and surveys.

Two spectra are of one object when their coordinates (stored at ingest from each survey's header:
LAMOST RA/DEC, SDSS PLUG_RA/PLUG_DEC, DESI TARGET_RA/TARGET_DEC) lie within `radius` of each other
(astropy `SkyCoord.search_around_sky`); groups are the connected sets of such pairs, so a chain of
close pairs is one object. 1.5 arcsec is a fibre's size (LAMOST 3.3", SDSS 3" / 2", DESI 1.5"
diameters): the corpus's repeat observations agree within 0.6", and its nearest distinct objects
are arcminutes apart. Set another radius with SPECREVIEW_MATCH_ARCSEC or `--match-radius`.

The groups are kept in the store (queue filter, Same-object panel): `add_to_groups` matches the
spectra an ingest added, `refresh_groups` recomputes every group (another radius), and
`ensure_groups` (the app, on opening) does so when the store gained spectra some other way.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from agents.settings import MATCH_ARCSEC
from reviewer.services.sky import mjd_to_date

log = logging.getLogger(__name__)
DEFAULT_RADIUS_ARCSEC = 1.5
MAX_RADIUS_ARCSEC = 60.0  # beyond this a "match" joins neighbours, not epochs of one object
PAIRS_CHUNK = 20_000  # distinct positions whose neighbours are searched at once
MAX_LISTED = 50  # spectra of one object a page lists (the one on screen and those nearest it in date)


def match_radius(radius_arcsec: float | None = None) -> float:
    """The radius to use: the one given, else $SPECREVIEW_MATCH_ARCSEC, else 1.5 arcsec."""
    if radius_arcsec is None:
        text = MATCH_ARCSEC.raw()
        try:
            radius_arcsec = float(text) if text else DEFAULT_RADIUS_ARCSEC
        except ValueError:
            raise ValueError(f"match radius: SPECREVIEW_MATCH_ARCSEC is not a number of arcsec: {text[:40]!r}") from None
    radius = float(radius_arcsec)
    if not 0 < radius <= MAX_RADIUS_ARCSEC:
        raise ValueError(f"match radius must be in (0, {MAX_RADIUS_ARCSEC:g}] arcsec; got {radius_arcsec}")
    return radius


def group_positions(positions: Sequence[tuple[str, float, float]], radius_arcsec: float | None = None
                    ) -> list[list[str]]:
    """Groups (two or more ids each, sorted; groups sorted) of (id, ra deg, dec deg) within the radius."""
    radius = match_radius(radius_arcsec)
    if len(positions) < 2:
        return []
    import astropy.units as u
    from astropy.coordinates import SkyCoord

    ids = [p[0] for p in positions]
    radec = np.array([(p[1], p[2]) for p in positions], dtype=float)
    # Spectra at the very same position (repeat visits of a catalogue target: LAMOST and DESI store the
    # input catalogue's coordinates) are one object before any search: the pairs search then runs over
    # distinct positions only, a chunk of them at a time. Searching all pairs at once holds every pair in
    # memory: 200k copies of 13 positions made ~3e9 pairs, and the server was killed for memory.
    unique, where = np.unique(radec, axis=0, return_inverse=True)
    where = where.reshape(-1)
    parent = list(range(len(unique)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    coords = SkyCoord(unique[:, 0] * u.deg, unique[:, 1] * u.deg)
    for start in range(0, len(unique), PAIRS_CHUNK):
        # (indices into coords, indices into the chunk): the method is the chunk's, coords searched around
        anywhere, in_chunk, _, _ = coords[start:start + PAIRS_CHUNK].search_around_sky(coords, radius * u.arcsec)
        for a, b in zip(anywhere.tolist(), (in_chunk + start).tolist(), strict=True):
            if a != b:
                parent[root(a)] = root(b)
    groups: dict[int, list[str]] = {}
    for i, sid in enumerate(ids):
        groups.setdefault(root(int(where[i])), []).append(sid)
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)


def refresh_groups(store, radius_arcsec: float | None = None) -> list[list[str]]:
    """Cross-match every spectrum with coordinates and store the groups; returns them."""
    radius = match_radius(radius_arcsec)
    positions = store.objects.sky_positions()
    groups = group_positions(positions, radius)
    store.objects.replace_groups(groups, radius, len(positions))
    return groups


def add_to_groups(store, spectrum_ids: Sequence[str], radius_arcsec: float | None = None) -> None:
    """Match newly ingested spectra against the store, each by a cone around it, and merge the groups
    they join: an ingest of a few files into a large store costs a few small queries, not a whole
    cross-match (~3 s at 100k spectra). The whole match runs instead when there is none stored yet,
    or it was made at another radius."""
    import astropy.units as u
    from astropy.coordinates import SkyCoord

    radius = match_radius(radius_arcsec)
    last = store.objects.last_match()
    if last is None or last["radius_arcsec"] != radius:
        refresh_groups(store, radius)
        return
    box = radius / 3600.0 * 1.01
    with store.transaction():
        for sid, ra, dec in store.objects.positions_of(list(spectrum_ids)):
            near = [n for n in store.objects.positions_near(ra, dec, box) if n[0] != sid]
            if not near:
                continue
            here = SkyCoord(ra * u.deg, dec * u.deg)
            there = SkyCoord(np.array([n[1] for n in near]) * u.deg, np.array([n[2] for n in near]) * u.deg)
            close = [n[0] for n, sep in zip(near, here.separation(there).arcsec, strict=True) if sep <= radius]
            if close:
                store.objects.merge_group(sorted(store.objects.group_members([sid, *close])))
        store.objects.record_match(radius, store.objects.count_positioned())


def ensure_groups(store, radius_arcsec: float | None = None) -> bool:
    """Match again when spectra were added (or the radius changed) since the last match; whether it did."""
    from reviewer.store import WRITE_FAILURES

    try:
        radius = match_radius(radius_arcsec)
    except ValueError as err:  # a bad setting must not keep the page from opening
        log.warning("%s; using %g arcsec", err, DEFAULT_RADIUS_ARCSEC)
        radius = DEFAULT_RADIUS_ARCSEC
    last = store.objects.last_match()
    if last is not None and last["radius_arcsec"] == radius and last["n_spectra"] == store.objects.count_positioned():
        return False
    try:
        refresh_groups(store, radius)
    except WRITE_FAILURES as err:  # a read-only store still opens: its last groups are shown
        log.warning("same-object cross-match not stored: %s", err)
        return False
    return True


def nearest_members(store, spectrum_id: str, most: int | None = None) -> tuple[list[dict], int]:
    """(this spectrum's object's spectra, at most `most` of them: this one and those nearest it in
    date, by date; how many more the object has). A page lists an object's epochs, not every copy of
    it: a well-observed object has tens of spectra, a bench that copies 13 spectra has 15,000 each."""
    most = MAX_LISTED if most is None else most
    rows = store.objects.members(spectrum_id)
    if len(rows) <= most:
        return rows, 0
    here = next((r.get("obs_mjd") for r in rows if r["spectrum_id"] == spectrum_id), None)
    by_distance = sorted(range(len(rows)), key=lambda i: (
        rows[i]["spectrum_id"] != spectrum_id,
        abs(rows[i]["obs_mjd"] - here) if here is not None and rows[i].get("obs_mjd") is not None else float("inf"), i))
    kept = sorted(by_distance[:most])
    return [rows[i] for i in kept], len(rows) - most


def same_object_rows(store, spectrum_id: str) -> tuple[list[dict], int]:
    """(the spectra of this one's object, itself included, by date, each with the agents' answers on it
    (`answers`: [{task, agent_name, answer, ...}]), at most MAX_LISTED of them; how many more were left
    out). ([], 0) when it has no other spectrum."""
    rows, more = nearest_members(store, spectrum_id)
    answers = store.objects.answers([r["spectrum_id"] for r in rows])
    return [{**r, "answers": answers.get(r["spectrum_id"], [])} for r in rows], more


def trajectories_of_object(store, spectrum_id: str) -> list[dict]:
    """Trajectories on this spectrum, then on the object's other spectra (other epochs, surveys; the
    MAX_LISTED nearest in date), each of those marked with where it comes from ("elsewhere": survey and date)."""
    rows = store.trajectories.trajectories_on_spectrum(spectrum_id)
    for member in nearest_members(store, spectrum_id)[0]:
        if member["spectrum_id"] != spectrum_id:
            date = mjd_to_date(member.get("obs_mjd")) or member.get("object_id") or member["spectrum_id"]
            rows += [{**r, "elsewhere": f"{member.get('survey') or '?'} {date}"}
                     for r in store.trajectories.trajectories_on_spectrum(member["spectrum_id"])]
    return rows
