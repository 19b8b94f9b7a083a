"""Implausible spectra built from real shared-corpus files (issue 10, item 6): each is refused with a
SpectrumReadError naming the file and the problem, or read correctly when it is legitimate (a
descending LAMOST log-linear axis, a frequency or energy axis). Vetting and verification refuse
spectra with too few finite pixels to judge instead of answering with confidence."""
import re

import numpy as np
import pytest
from astropy.io import fits

from agents.spectra import SpectrumReadError, read_spectrum, write_fits
from agents.spectra.core import MIN_FINITE_PIXELS, WAVE_MAX_AA, WAVE_MIN_AA

LAMOST_DR7, SDSS_LEGACY = "LAMOST_DR7", "SDSS_LEGACY"


def _raises(path, problem, target=None):
    with pytest.raises(SpectrumReadError, match=problem) as info:
        read_spectrum(path, target=target)
    err = info.value
    assert str(err).startswith(path.name + ": ") and err.path == str(path)
    assert "unreadable (" not in err.problem  # a diagnosis, not a wrapped bare exception
    return err


def _edit_fits(real, tmp_path, rel, name, edit):
    out = tmp_path / name
    with fits.open(real(rel)) as hdul:
        hdul.readall()
        edit(hdul)
        hdul.writeto(out)
    return out


def _table(tmp_path, name, comments, columns, rows):
    """A CSV with `# key: value` comments, a header row and the given columns."""
    out = tmp_path / name
    lines = [f"# {k}: {v}" for k, v in comments.items()] + [",".join(columns)]
    lines += [",".join(repr(float(x)) for x in row) for row in zip(*rows, strict=True)]
    out.write_text("\n".join(lines) + "\n")
    return out


@pytest.fixture(scope="module")
def lamost(real):
    spec = read_spectrum(real(LAMOST_DR7))
    return (spec.spectral_axis.to_value("Angstrom"), np.asarray(spec.flux.value, float),
            np.asarray(spec.uncertainty.array, float), np.asarray(spec.mask, bool))


# -- wavelength units and range --------------------------------------------------------------

@pytest.mark.parametrize("unit, first", [("pc", "1.142e+30"), ("lyr", "3.5e+29")])
def test_a_distance_unit_gives_implausible_wavelengths(tmp_path, lamost, unit, first):
    wave, flux, *_ = lamost
    path = _table(tmp_path, f"{unit}.csv", {"wavelength_unit": unit}, ("wavelength", "flux"),
                  (wave, flux))  # the Angstrom numbers labelled parsec / light year: ~1e30 A
    err = _raises(path, rf"wavelengths {re.escape(first)}-.* A \(wavelength unit '{unit}'\) lie outside "
                        r"the plausible spectroscopic range 100-1e\+06 A")
    assert "is the wavelength unit right?" in err.problem


def test_a_unit_that_is_not_a_wavelength_frequency_or_energy_is_refused(tmp_path, lamost):
    wave, flux, *_ = lamost
    path = _table(tmp_path, "kg.csv", {"wavelength_unit": "kg"}, ("wavelength", "flux"), (wave, flux))
    err = _raises(path, r"wavelength unit 'kg' is not a wavelength, frequency or energy")
    assert "kg" in err.problem


@pytest.mark.parametrize("unit, convert", [
    ("nm", lambda w: w / 10.0),
    ("Hz", lambda w: 2.99792458e18 / w),
    ("eV", lambda w: 12398.419843320026 / w),
])
def test_frequency_and_energy_axes_read_as_ascending_angstrom(tmp_path, lamost, unit, convert):
    wave, flux, ivar, _ = lamost
    path = _table(tmp_path, f"{unit}.csv", {"wavelength_unit": unit}, ("wavelength", "flux", "ivar"),
                  (convert(wave), flux, ivar))
    spec = read_spectrum(path)
    got = spec.spectral_axis.to_value("Angstrom")
    assert np.allclose(got, wave, rtol=1e-9)
    assert np.array_equal(spec.flux.value, flux) and np.allclose(spec.uncertainty.array, ivar)


def test_a_lamost_wavelength_solution_far_outside_the_range_is_refused(real, tmp_path):
    def edit(hdul):
        hdul[0].header["COEFF0"] = 30.0  # log10(lambda) = 30: 1e30 A
    path = _edit_fits(real, tmp_path, LAMOST_DR7, "coeff0-30.fits", edit)
    err = _raises(path, r"outside the plausible spectroscopic range")
    assert "1e+30" in err.problem


def test_a_fits_table_in_parsec_is_refused(real, tmp_path):
    spec = read_spectrum(real(LAMOST_DR7))
    ok = tmp_path / "ok.fits"
    write_fits(spec, ok)
    with fits.open(ok) as hdul:
        hdul.readall()
        hdul["SPECTRUM"].columns["WAVELENGTH"].unit = "pc"
        hdul["SPECTRUM"].header["TUNIT1"] = "pc"
        hdul.writeto(tmp_path / "pc.fits")
    _raises(tmp_path / "pc.fits", r"\(wavelength unit 'pc'\) lie outside the plausible spectroscopic range")


def test_the_range_limits_are_documented_and_inclusive_of_every_corpus_survey():
    assert WAVE_MIN_AA == 100.0 and WAVE_MAX_AA == 1.0e6
    import agents.spectra as pkg
    assert "100" in pkg.__doc__ and "1e6" in pkg.__doc__.replace("1e+06", "1e6")


# -- flux units ------------------------------------------------------------------------------

def test_an_unknown_flux_unit_is_refused_naming_it(tmp_path, lamost):
    wave, flux, *_ = lamost
    path = _table(tmp_path, "banana.csv", {"flux_unit": "banana"}, ("wavelength", "flux"), (wave, flux))
    err = _raises(path, r"flux unit 'banana'")
    assert "not a unit" in err.problem


def test_a_unit_that_is_not_a_flux_density_or_counts_is_refused(tmp_path, lamost):
    wave, flux, *_ = lamost
    path = _table(tmp_path, "km.csv", {"flux_unit": "km"}, ("wavelength", "flux"), (wave, flux))
    _raises(path, r"flux unit 'km' is not a spectral flux density or counts")


def test_an_sdss_bunit_banana_is_refused(real, tmp_path):
    def edit(hdul):
        hdul[0].header["BUNIT"] = "banana"
    path = _edit_fits(real, tmp_path, SDSS_LEGACY, "spec-banana.fits", edit)
    _raises(path, r"flux unit 'banana'")


@pytest.mark.parametrize("unit", ["erg / (s cm2 Angstrom)", "1e-17 erg/s/cm^2/Ang", "Jy", "mJy", "erg / (s cm2 Hz)",
                                  "W / (m2 um)", "ct", "electron / s", "adu", ""])
def test_flux_densities_counts_and_relative_fluxes_are_accepted(tmp_path, lamost, unit):
    wave, flux, *_ = lamost
    comments = {"flux_unit": unit} if unit else {}
    spec = read_spectrum(_table(tmp_path, "ok.csv", comments, ("wavelength", "flux"), (wave, flux)))
    assert spec.flux.size == wave.size


# -- numeric overflow ------------------------------------------------------------------------

def test_a_flux_of_1e300_names_the_field_and_value(tmp_path, lamost):
    wave = lamost[0]
    huge = 1e300 * (1.0 + 0.1 * np.sin(np.arange(wave.size)))  # no error column: DER_SNR would overflow
    path = _table(tmp_path, "huge.csv", {}, ("wavelength", "flux"), (wave, huge))
    err = _raises(path, r"flux value 1e\+300 .* overflow")
    assert "OverflowError" not in str(err)


def test_a_lamost_image_with_a_1e300_pixel_is_refused(real, tmp_path):
    def edit(hdul):
        data = hdul[0].data.astype(np.float64)
        data[0, 200] = -1e300
        hdul[0].data = data
    path = _edit_fits(real, tmp_path, LAMOST_DR7, "huge-pixel.fits", edit)
    err = _raises(path, r"flux value -1e\+300 at .* \(pixel 200\)")
    assert "overflow" in err.problem


def test_an_error_so_small_its_inverse_variance_overflows_is_refused(tmp_path, lamost):
    wave, flux, *_ = lamost
    err = np.full(wave.size, 1e-200)
    path = _table(tmp_path, "tiny-err.csv", {}, ("wavelength", "flux", "error"), (wave, flux, err))
    _raises(path, r"error value 1e-200 .* overflow")


# -- descending axes -------------------------------------------------------------------------

def test_a_descending_coeff1_is_read_ascending_with_every_array_turned_around(real, tmp_path, lamost):
    wave, flux, ivar, mask = lamost

    def edit(hdul):
        h, n = hdul[0].header, hdul[0].data.shape[1]
        c0, c1 = float(h["COEFF0"]), float(h["COEFF1"])
        h["COEFF0"], h["COEFF1"] = c0 + c1 * (n - 1), -c1
        hdul[0].data = hdul[0].data[:, ::-1].copy()
    path = _edit_fits(real, tmp_path, LAMOST_DR7, "descending.fits", edit)
    spec = read_spectrum(path)
    got = spec.spectral_axis.to_value("Angstrom")
    assert np.all(np.diff(got) > 0)
    assert np.allclose(got, wave, rtol=1e-9)
    assert np.array_equal(spec.flux.value, flux)
    assert np.array_equal(spec.uncertainty.array, ivar)
    assert np.array_equal(spec.mask, mask) and mask.any() and not mask.all()


def test_a_zero_coeff1_is_refused_as_having_no_step(real, tmp_path):
    def edit(hdul):
        hdul[0].header["COEFF1"] = 0.0
    _raises(_edit_fits(real, tmp_path, LAMOST_DR7, "flat.fits", edit), r"COEFF1 = 0")


# -- too few pixels to judge -----------------------------------------------------------------

def _few(tmp_path, lamost, n):
    wave, flux, ivar, _ = lamost
    return _table(tmp_path, f"px{n}.csv", {}, ("wavelength", "flux", "ivar"),
                  (wave[1000:1000 + n], flux[1000:1000 + n], ivar[1000:1000 + n]))


@pytest.mark.parametrize("n", [1, 2, MIN_FINITE_PIXELS - 1])
def test_vetting_refuses_too_few_pixels(tmp_path, lamost, n):
    from agents.vet import vet_spectrum

    path = _few(tmp_path, lamost, n)
    spec = read_spectrum(path)  # reading is not judging: the file is shown as it is
    with pytest.raises(SpectrumReadError, match=rf"only {n} pixels? with finite flux.*at least {MIN_FINITE_PIXELS}") as info:
        vet_spectrum(spec, "a")
    assert str(info.value).startswith(path.name + ": ")


@pytest.mark.parametrize("n", [1, 2])
def test_verification_refuses_too_few_pixels(tmp_path, lamost, n):
    from agents.verify import verify_spectrum

    path = _few(tmp_path, lamost, n)
    with pytest.raises(SpectrumReadError, match=rf"{path.name}: only {n} pixels? with finite flux"):
        verify_spectrum(read_spectrum(path))


def test_the_minimum_itself_is_enough(tmp_path, lamost):
    from agents.vet import vet_spectrum

    traj = vet_spectrum(read_spectrum(_few(tmp_path, lamost, MIN_FINITE_PIXELS)), "a")
    # vetted, not raised; 20 pixels near 4700 A cannot cover task a's lines: refused with the reason
    # (agents/tools/judgeable.py), a trajectory and not a NO
    assert traj.outcome["status"] == "unjudgeable" and "does not cover" in traj.outcome["reason"]


def test_vet_cli_reports_a_two_pixel_spectrum_and_stores_no_answer(tmp_path, lamost, capsys):
    from reviewer.cli import main
    from reviewer.store import Store

    path = _few(tmp_path, lamost, 2)
    db = tmp_path / "v.duckdb"
    assert main(["vet", "--db", str(db), "--task", "a", "--no-progress", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path.name}: only 2 pixels with finite flux" in out
    with Store(db) as store:
        assert store.trajectories.count_trajectories(task="a") == 0
