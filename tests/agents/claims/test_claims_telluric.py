"""A star's right z ~ 0 is not contradicted by Earth's atmosphere (issue 50, item 7): at a claimed
rest frame, the telluric bands (O2 A and B, H2O) and the night-sky OH zone's residual dips are not
features the star's z must explain. Real spectrum: the LAMOST K5 star spec-55862-B6212_sp06-007,
whose three strongest features are over-subtracted OH lines at 8767, 8827 and 8886 A."""
import pytest
from shared_data import shared_data_dir

from agents.claims import Measurer, check_text, check_trajectory
from agents.claims.check import Context
from agents.claims.redshift import atmospheric, strongest_features

K5 = "lamost_learninglamost/spec-55862-B6212_sp06-007.fits"


@pytest.fixture(scope="module")
def k5(shared_spectra, manifest):
    from agents.spectra import read_spectrum

    (row,) = [r for r in manifest if r["file"] == K5]
    return read_spectrum(shared_spectra / K5), float(row["z"])


def test_the_strongest_features_are_the_skys(k5):
    spec, _ = k5
    top = strongest_features(Measurer.from_spectrum(spec))
    assert top and all(atmospheric(f) for f in top)


def test_a_right_stellar_z_is_not_contradicted_by_telluric_or_sky_features(k5):
    spec, z_cat = k5
    ctx = Context(Measurer.from_spectrum(spec), object_class="STAR")
    for text in (f"Redshift: {z_cat:.6f}", "z = 0.0000", "The redshift is z = 0.0001."):
        (r,) = check_text(text, ctx)
        assert r.verdict != "contradicted", (text, r.reason)
    (far,) = check_text("z = 0.05", ctx)  # no star moves at 15,000 km/s: still contradicted
    assert far.verdict == "contradicted"


def test_the_verify_trajectory_of_the_star_has_no_contradicted_claim(k5):
    from agents.verify import verify_spectrum

    spec, z_cat = k5
    traj = verify_spectrum(spec, template_dir=str(shared_data_dir() / "redrock-templates"))
    b = traj.outcome["brief"]
    assert b["type"] == "STAR" and abs(b["redshift"] - z_cat) < 0.001  # a right answer
    bad = [(r.claim.text, r.reason) for r in check_trajectory(traj, spec) if r.verdict == "contradicted"]
    assert bad == []
