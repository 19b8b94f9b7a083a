"""A high-z QSO's right z is not contradicted by its own absorption (issue 50, item 7): the Ly-alpha
forest blueward of Ly-alpha at the object's z, and broad absorption troughs up to 0.1 c blueward of
its N V, Si IV, C IV and Al III, are explained by that z. Right verify answers of the shared corpus
were contradicted for them (BOSS QSOs of sdss_picca and sdss_squeze, catalogue z 2.2-2.7). A wrong z
is still contradicted. And the verify report's "QSO-NO-BROAD: no permitted line broader than 1500 km/s
(H-alpha 318 km/s)" bounds a width: it does not say H-alpha is absent."""
import pytest

from agents.claims import Measurer, check_text, extract_claims
from agents.claims.check import Context

QSOS = ["sdss_picca/spec-3655-55240-0714.fits",  # forest only
        "sdss_picca/spec-3655-55240-0002.fits",  # forest, Si IV and C IV troughs
        "sdss_picca/spec-3655-55240-0352.fits",  # forest, C IV trough
        "sdss_squeze/spec-7102-56666-0354.fits",  # forest, Si IV trough
        "sdss_picca/spec-3655-55240-0156.fits"]  # forest, Al III trough


@pytest.mark.parametrize("entry", QSOS)
def test_the_catalogue_z_of_a_high_z_qso_is_supported_and_a_wrong_one_contradicted(entry, shared_spectra, manifest):
    from agents.spectra import read_spectrum

    (row,) = [r for r in manifest if r["file"] == entry]
    z = float(row["z"])
    ctx = Context(Measurer.from_spectrum(read_spectrum(shared_spectra / entry)), object_class="QSO")
    (right,) = check_text(f"Redshift: {z:.6f}", ctx)
    assert right.verdict == "supported", right.reason
    (wrong,) = check_text("z = 0.9000", ctx)
    assert wrong.verdict == "contradicted", wrong.reason


def test_a_bound_on_widths_is_not_an_absence():
    text = ("- RA-SUPPORT: allows LOW - 3 credible key line(s): [O II], [O III] 5008, H-alpha; fatal: QSO-NO-BROAD: "
            "no permitted line broader than 1500 km/s (H-alpha 318 km/s)")
    assert not [c for c in extract_claims(text) if c.polarity < 0]
    assert [c.polarity for c in extract_claims("There is no H-alpha emission.")] == [-1]
