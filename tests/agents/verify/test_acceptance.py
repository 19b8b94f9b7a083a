"""Acceptance over every labelled spectrum of the shared data (official survey labels only):
among MEDIUM-or-HIGH credibility results >= 95 % agree with the pipeline (class and |dz| <= 0.01)
while covering >= 30 %, and agreement does not fall as the tier rises."""
import pytest

from agents.verify.evaluation import Row, is_labelled, split_file, summarise


@pytest.mark.slow
@pytest.mark.timeout(1200)  # the whole corpus: minutes on a busy 2-core machine
def test_credible_results_agree_with_survey_pipelines(shared_spectra, manifest, template_dir):
    from agents.spectra import read_spectrum
    from agents.verify import verify_spectrum

    labelled = [r for r in manifest if is_labelled(r)]
    assert len(labelled) >= 200
    rows = []
    for r in labelled:
        path, target = split_file(r["file"])
        traj = verify_spectrum(read_spectrum(shared_spectra / path, target), template_dir=template_dir)
        b = traj.outcome["brief"]
        if traj.outcome.get("status") != "unjudgeable":  # a refused spectrum (agents/tools/judgeable.py) has no report
            assert traj.outcome["report"].count("## §") == 6
        rows.append(Row(r["file"], r["class"], float(r["z"]), b["type"], b["redshift"], b["credibility"]))
    s = summarise(rows)
    gate = s["gates"]["MEDIUM"]
    assert gate["coverage"] >= 0.30, s
    assert gate["agreement"] >= 0.95, s
    tiers = s["tiers"]
    assert tiers["LOW"]["agreement"] <= tiers["MEDIUM"]["agreement"], s
    if tiers["HIGH"]["n"]:
        assert tiers["MEDIUM"]["agreement"] <= tiers["HIGH"]["agreement"], s


def test_labelled_rows_exclude_derived_and_unlabelled():
    assert is_labelled({"label_source": "LAMOST pipeline header (CLASS/SUBCLASS/Z)", "class": "STAR", "z": "0.0001"})
    assert not is_labelled({"label_source": "DERIVED: redrock run here", "class": "QSO", "z": "1.2"})
    assert not is_labelled({"label_source": "library spectral type", "class": "STAR", "z": ""})
    assert not is_labelled({"label_source": "LAMOST pipeline header", "class": "Unknown", "z": ""})
