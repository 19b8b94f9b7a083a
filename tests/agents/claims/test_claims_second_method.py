"""A measurement claim is judged by a second method (issue 50, item 7): the number an agent quotes
under a kb measurement's name is measured again with another continuum and another estimator
(agents.claims.second), never by the function that produced it (agents.tools.measure, through the
Monte-Carlo draws of agents.claims.draws). Real spectra of the shared corpus; which code runs is read
off the interpreter's own call events (sys.setprofile), nothing is replaced."""
import sys
from pathlib import Path

import pytest

from agents.claims import Measurer, check_text, check_trajectory
from agents.claims.check import Context
from agents.spectra import read_spectrum
from agents.vet import vet_spectrum

AGENT_MODULES = ("agents/tools/measure.py", "agents/claims/draws.py")
SECOND = "agents/claims/second.py"


def _a_star(manifest, shared_spectra):
    row = next(r for r in manifest if r["subclass"].startswith("A7"))
    path, _, target = row["file"].partition("#")
    return read_spectrum(shared_spectra / path, target or None)


def _files_called(fn):
    """(result of fn(), the source files of every Python function called while it ran)."""
    seen: set[str] = set()

    def profile(frame, event, _arg):
        if event == "call":
            seen.add(Path(frame.f_code.co_filename).as_posix())

    sys.setprofile(profile)
    try:
        out = fn()
    finally:
        sys.setprofile(None)
    return out, seen


def _quoted(traj, name):
    step = next(s for s in traj.steps if s.kind == "think" and f"{name} = " in s.text)
    return float(step.text.split(f"{name} = ")[1].split(" ")[0].rstrip(".,;"))


@pytest.mark.parametrize("name", ["H-beta equivalent width", "H-delta equivalent width",
                                  "mean Balmer equivalent width (H-delta, H-gamma, H-beta)"])
def test_the_agents_number_is_supported_and_a_wrong_one_contradicted_by_a_second_method(manifest, shared_spectra,
                                                                                        name):
    spec = _a_star(manifest, shared_spectra)
    traj = vet_spectrum(spec, "a")
    right = _quoted(traj, name)
    ctx = Context(Measurer.from_spectrum(spec), z=0.0, z_source="stellar task", task="a")

    def check(value):
        return check_text(f"{name} = {value:.2f} Å", ctx)

    (ok,), called = _files_called(lambda: check(right))
    assert ok.verdict == "supported", ok.reason
    assert ok.details.get("second_method") is True and "least-squares side-band continuum" in ok.details["method"]
    assert ok.measured != pytest.approx(right, abs=1e-6)  # another estimator: close, not the same number
    assert not [f for f in called if f.endswith(AGENT_MODULES)], "the agent's measuring code ran"
    assert any(f.endswith(SECOND) for f in called)
    for wrong in (right * 3, right + 10 * ok.details["sigma"] + 1.0, right * 0.4):
        (bad,) = check(wrong)
        assert bad.verdict == "contradicted", (wrong, bad.reason)


def test_a_rules_trajectory_is_checked_without_the_agents_measuring_code(manifest, shared_spectra):
    spec = _a_star(manifest, shared_spectra)
    traj = vet_spectrum(spec, "a")
    measurer = Measurer.from_spectrum(spec)
    # the quantity and feature claims of a trajectory may use the shared vocabulary; its MEASURE claims may not
    results, called = _files_called(lambda: [r for r in check_trajectory(traj, spec, measurer=measurer)
                                             if r.claim.kind == "measure"])
    # a ratio whose denominator is consistent with zero at this S/N is undefined: unverifiable, not judged
    assert sum(r.verdict == "supported" for r in results) >= 10 and all(r.verdict != "contradicted" for r in results), \
        [(r.claim.text, r.reason) for r in results if r.verdict != "supported"]
    assert all(r.details.get("second_method") for r in results)
    assert any(f.endswith(SECOND) for f in called)


@pytest.mark.parametrize("kind_name", ["TiO 7054 band depth", "flux ratio 4000-4500 A / 6800-7300 A",
                                       "H-alpha depth", "H-beta full width at half depth"])
def test_band_depths_ratios_depths_and_widths_have_a_second_method(manifest, shared_spectra, kind_name):
    """Every kind of the rules agent's numbers: a cool star's TiO depth, a continuum ratio, a line depth,
    a width; the agent's value supported, a far one contradicted, none by the agent's function."""
    rows = [r for r in manifest if r["subclass"][:1] in ("M", "A") and "LAMOST" in r["survey"]]
    for row in rows:
        path, _, target = row["file"].partition("#")
        spec = read_spectrum(shared_spectra / path, target or None)
        for task in ("mg", "a", "wd", "o", "b", "ss", "cs", "cv"):
            traj = vet_spectrum(spec, task)
            if not any(s.kind == "think" and f"{kind_name} = " in s.text for s in traj.steps):
                continue
            right = _quoted(traj, kind_name)
            ctx = Context(Measurer.from_spectrum(spec), z=0.0, z_source="stellar task", task=task)
            (ok,), called = _files_called(lambda ctx=ctx, right=right: check_text(f"{kind_name} = {right:.2f}", ctx))
            assert ok.verdict == "supported", ok.reason
            assert not [f for f in called if f.endswith(AGENT_MODULES)]
            far = right + max(1.0, abs(right)) + 5 * ok.details["sigma"]
            (bad,) = check_text(f"{kind_name} = {far:.2f}", ctx)
            assert bad.verdict == "contradicted", bad.reason
            return
    pytest.fail(f"no rules trajectory quotes {kind_name}")
