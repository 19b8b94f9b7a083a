"""A trajectory whose reasoning the real claim checker contradicts, for tests of what reads contradicted
claims (the offline agents' own reasoning on the demo holds none the checker contradicts)."""
from __future__ import annotations

# Said of the demo's LAMOST A1IV star (H-beta EW ~16 A, H-alpha ~8 A in absorption): the checker
# measures both and contradicts them (tests/ui/test_claims_browser.py says the same through a model).
A_STAR_FALSE_CLAIMS = ("In the H-beta zoom the absorption is shallow: the H-beta equivalent width is 1.5 Å. "
                       "The H-alpha absorption equivalent width is 60 Å.")


def add_contradicted_claims(store) -> str:
    """A copy of a demo vet trajectory of the A star whose reasoning makes two false claims, stored
    and checked by the real claim checker (the offline agents' own reasoning holds none the checker
    contradicts); its id. Tests of what reads contradicted claims start from it."""
    from reviewer.services.claims import check_and_store
    from reviewer.services.spectra_cache import load_spectrum

    spectrum = next(s for s in store.spectra.list_spectra(limit=100) if "B6212_sp01-001" in s["file_name"])
    tid = next(r["id"] for r in store.trajectories.list_trajectories(spectrum_id=spectrum["spectrum_id"])
               if r["task"] == "a")
    traj = store.trajectories.load_trajectory(tid).model_copy(deep=True, update={"id": "false-claims-" + tid[:8]})
    think = next(s for s in traj.steps if s.kind == "think")
    think.text = A_STAR_FALSE_CLAIMS
    store.trajectories.save_trajectory(traj)
    record = store.spectra.get_spectrum(spectrum["spectrum_id"])
    results = check_and_store(store, traj, load_spectrum(record["source_path"], record.get("target")))
    assert sum(r.verdict == "contradicted" for r in results) == 2, [(r.claim.text, r.verdict) for r in results]
    return traj.id
