"""Whole trajectories: the zoom in force at each step, and the rules policy's own trajectories,
whose every quoted number is measured, have no contradicted claim."""
import time

import pytest

import kb
from agents.claims import check_trajectory, step_window, summarize
from agents.trajectory import AgentInfo, Trajectory
from agents.vet import vet_spectrum


def _read(manifest, shared_spectra, rows):
    from agents.spectra import read_spectrum

    for row in rows:
        path, _, target = row["file"].partition("#")
        try:
            yield row, read_spectrum(shared_spectra / path, target or None)
        except Exception as exc:
            print(f"skip {row['file']}: {exc}")


def test_step_window_follows_zooms_and_rest_frame():
    traj = Trajectory(task="a", agent=AgentInfo(name="vet", backend="openai"))
    traj.add("prompt", text="p", data={"tool_state": {"redshift": 0.5}})
    traj.add("think", text="overview")
    traj.add("tool_call", tool_name="spectral_visualization_tool", tool_args={"wavelength_range": [4800, 5100]})
    traj.add("tool_result", tool_name="spectral_visualization_tool", tool_args={"wavelength_range": [4800, 5100]})
    traj.add("think", text="zoomed")
    traj.add("tool_call", tool_name="spectral_visualization_tool", tool_args={"wavelength_range": [1, 2]})
    traj.add("tool_result", tool_name="spectral_visualization_tool", tool_args={"wavelength_range": [1, 2]},
             is_error=True)
    traj.add("think", text="after a failed zoom")
    assert step_window(traj, 1).range is None
    view = step_window(traj, 4)
    assert view.range == (7200.0, 7650.0) and view.rest_plot  # rest-frame range times 1 + z
    assert step_window(traj, 7).range == (7200.0, 7650.0)  # the failed zoom changed nothing
    verify = Trajectory(task="verify", agent=AgentInfo(name="verify", backend="rules"))
    verify.add("tool_call", tool_name="render", tool_args={"wave_min": 6400.0, "wave_max": 6700.0, "label": "x"})
    verify.add("tool_result", tool_name="render", tool_args={"wave_min": 6400.0, "wave_max": 6700.0, "label": "x"})
    verify.add("think", text="t")
    assert step_window(verify, 2).range == (6400.0, 6700.0) and not step_window(verify, 2).rest_plot


def _rules_run(pairs, counts=None):
    steps, elapsed, bad = 0, 0.0, []
    counts = {} if counts is None else counts
    for row, spec in pairs:
        for task_id in kb.tasks():
            traj = vet_spectrum(spec, task_id)
            t0 = time.perf_counter()
            results = check_trajectory(traj, spec)
            elapsed += time.perf_counter() - t0
            steps += len(traj.steps)
            counts["measure"] = counts.get("measure", 0) + sum(r.claim.kind == "measure" for r in results)
            bad += [(row["file"], task_id, r.claim.text, r.reason, r.claim.kind) for r in results
                    if r.verdict == "contradicted"]
    return steps, elapsed, bad


def test_rules_trajectories_have_no_contradicted_claims_fast(manifest, shared_spectra):
    picks = [r for r in manifest if r["survey"].startswith(("LAMOST", "SDSS", "DESI", "Pickles"))]
    picks = picks[:: max(1, len(picks) // 10)][:10]
    steps, _, bad = _rules_run(_read(manifest, shared_spectra, picks))
    assert steps > 100 and bad == []


@pytest.mark.slow
@pytest.mark.timeout(1200)  # the whole corpus: minutes on a busy 2-core machine
def test_rules_trajectories_over_the_whole_corpus_have_no_contradicted_claims(manifest, shared_spectra):
    """Every claim but the quoted measurements is supported; those are judged by a second method
    (agents.claims.second, issue 50 item 7), not by the function that made them, and two estimators of a
    shallow blended line's width (or a ratio of two near-zero depths) may disagree: at most 0.1 % of them
    (11 of ~34,000 on 2026-12-07, docs/benchmarks.md)."""
    counts = {}
    steps, _, bad = _rules_run(_read(manifest, shared_spectra, manifest), counts)
    measured = [b for b in bad if b[4] == "measure"]
    assert steps > 1000 and [b for b in bad if b[4] != "measure"] == []
    assert counts["measure"] > 10000 and len(measured) <= 0.001 * counts["measure"], measured


def test_a_false_number_in_rules_wording_is_contradicted(manifest, shared_spectra):
    ((_row, spec),) = list(_read(manifest, shared_spectra, [r for r in manifest if r["subclass"].startswith("A7")][:1]))
    traj = vet_spectrum(spec, "a")
    honest = check_trajectory(traj, spec)
    step = next(s for s in traj.steps if s.kind == "think" and "H-beta equivalent width = " in s.text)
    quoted = step.text.split("H-beta equivalent width = ")[1].split(" ")[0]
    step.text = step.text.replace(f"H-beta equivalent width = {quoted}",
                                  f"H-beta equivalent width = {float(quoted) * 3:.2f}")
    lied = check_trajectory(traj, spec)
    assert summarize(honest)["contradicted"] == 0
    flagged = [r for r in lied if r.verdict == "contradicted"]
    assert len(flagged) == 1 and flagged[0].step_index == step.index and flagged[0].view == [4640.0, 5090.0]


def _identities(value) -> set[int]:
    """The ids of every mutable container inside `value` (what a copy must not share)."""
    found: set[int] = set()
    if isinstance(value, (dict, list)):
        found.add(id(value))
    for item in value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ():
        found |= _identities(item)
    return found


def test_a_results_dict_is_a_deep_copy_equal_to_asdicts(manifest, shared_spectra):
    """ClaimResult.to_dict is written out by hand (dataclasses.asdict was a quarter of a campaign's claim
    check): on every result of real trajectories for every task it equals asdict's, types included, and
    shares no list or dict with the result."""
    import dataclasses

    import numpy as np

    from agents.claims import ClaimResult, extract_claims

    picks = [r for r in manifest if r["survey"].startswith(("LAMOST", "SDSS", "DESI"))][::40][:6]
    results = [res for _row, spec in _read(manifest, shared_spectra, picks) for task_id in kb.tasks()
               for res in check_trajectory(vet_spectrum(spec, task_id), spec)]
    claim = extract_claims("Hβ FWHM ~ 2000 km/s.")[0]
    results.append(ClaimResult(claim, "supported", 1.0, 0.5, [1.0, 2.0], None, "r", 2,
                               {"nested": {"pair": (1, [2.0, np.float64(3.5)]), "none": None}, "n": np.int64(4)}))
    assert len(results) > 200 and {r.verdict for r in results} >= {"supported", "unverifiable"}
    for res in results:
        plain, reference = res.to_dict(), dataclasses.asdict(res)
        assert plain == reference and repr(plain) == repr(reference)
        own = _identities([res.details, res.window, res.view, res.claim.lines])
        assert not _identities(plain) & own
