"""Read survey spectra into `specutils.Spectrum`, one contract for every format.

    from agents.spectra import read_spectrum, list_targets, SpectrumReadError, blank_pipeline_labels
    spec = read_spectrum("spec-58575-...-010.fits")            # single-spectrum file
    spec = read_spectrum("coadd-5-169.fits", target="39633300968442591")   # DESI: one target
    list_targets("coadd-5-169.fits")  -> ['-1695072', '39633297352951412', ...]  ([] if single)

Formats (identified from content, never from the file name; label = meta['format'] = the
specutils loader name, so `Spectrum.read(path)` and `Spectrum.read(path, format=label)` work):

    lamost-lrs-image  LAMOST LRS DR1-DR7, primary 5xN image, log-linear COEFF0/COEFF1 (.fits/.gz)
    lamost-lrs-table  LAMOST LRS DR8+ v2.0, one-row binary table FLUX/IVAR/WAVELENGTH/ANDMASK
    lamost-mrs        LAMOST MRS med-*.fits coadds: COADD_B + COADD_R concatenated
    sdss-spec         SDSS legacy / BOSS spec-*.fits: COADD HDU, labels from SPECOBJ or SPALL
    desi-coadd        DESI coadd-*: B/R/Z merged (inverse-variance weighted in overlaps), one
    desi-spectra      spectrum per TARGETID; spectra-* (per exposure) rows combined the same way;
                      labels from redrock-<suffix>.fits beside it when present
    ascii-table       CSV / whitespace tables: wavelength, flux[, ivar | error][, mask]
    ecsv-table        astropy ECSV with the same column names (units honoured)
    pickles-ascii     Pickles (1998) UVILIB library .dat files (air wavelengths)
    specreview-table  the FITS table written by write_fits

meta keys (always present): survey, object_id (str), target (str|None), ra, dec (float|None),
pipeline_class, pipeline_subclass (str|None), pipeline_z (float|None), snr (median flux*sqrt(ivar)
over good pixels; 0.0 when none), source_path, format, wavelength_medium ("vacuum" | "air" |
"unknown" for tables that do not say), header (dict[str, str]: the raw primary header, or the
comment metadata of a table), n_pixels, n_good_pixels, flux_unit. Often present: labels_source
(where the pipeline labels came from; None when there are none), pipeline_z_err,
pipeline_zwarn, objtype (target type from the input catalogue / fibermap, not a classification),
data_release, specobjid, fibermap (DESI row as str dict), fiberstatus, arms, arm_pixels (DESI and
LAMOST MRS: each arm's run of pixels, blue to red; arm_ids(spec) gives one id per pixel), ivar_estimated,
fiber_flags (SDSS: fibre-level SPPIXMASK bits set, {name: {"fraction", "wavelength": [min, max]}}).

meta['survey'] values (a manifest survey string starts with the value): "LAMOST-LRS DR<n>"
(or "LAMOST-LRS" when the header has no DATA_V), "LAMOST-MRS DR<n>", "SDSS" (original
spectrograph), "SDSS-III BOSS", "SDSS-IV eBOSS", "DESI", "Pickles 1998 stellar flux library",
"table" (tables whose comments name no survey).

Arrays: spectral_axis in Angstrom, ascending; flux with the file's unit (SDSS and DESI 1e-17
erg/s/cm2/A, from the header or, if absent, the survey's data model; LAMOST and Pickles
dimensionless); uncertainty InverseVariance; mask True = bad (ivar <= 0, non-finite flux, or
a survey bit meaning the pixel has no usable data, read as each data model defines it: SDSS and_mask
FULLREJECT / NOSKY / BRIGHTSKY / NODATA, never its fibre-level bits 0-15; DESI MASK != 0; LAMOST
ANDMASK != 0, never ORMASK alone; see sdss.py, desi.py, lamost.py). Masked pixels keep their flux.

Documented behaviour of edge cases:
- a spectrum with no good pixel (all ivar 0: SDSS ZWARNING=6 fibres, DESI sky/empty/NODATA
  fibres) reads fine: mask all True, n_good_pixels 0, snr 0.0;
- a multi-target DESI file read without target= raises SpectrumReadError telling you to pass
  target= and to call list_targets(path); target= on a single-spectrum file raises;
- LAMOST Z = -9999 (class "Unknown") gives pipeline_z None; LAMOST MRS has no pipeline labels
  (meta['objtype'] carries the input catalogue's type);
- DESI files without a redrock file beside them have no pipeline labels.

Plausibility (agents/spectra/core.py): wavelengths, after the file's own unit (a length, or a
frequency / energy / wavenumber converted with astropy's spectral equivalency) and any log10, must
lie within 100 A .. 1e6 A (extreme UV to 100 micron: every UV/optical/IR spectrograph; a distance
unit such as pc or lyr gives ~1e30 A); a flux unit must be a spectral flux density (F_lambda, F_nu,
Jy, ...), counts (ct, electron, adu, per second or not) or absent (relative flux), else the unit is
named and refused, never silently made dimensionless; |flux| above 1e150 is refused naming the
value and pixel (its squares would overflow float64), as is an error so small that 1/error**2
overflows. A descending axis (a LAMOST COEFF1 < 0, a frequency axis, a reversed table, a DESI or
LAMOST MRS arm written red to blue) is turned around with flux, ivar and mask (core.ascending: one
rule for every format; a non-monotonic axis is refused, naming the arm in a multi-arm file).
Reading does not judge: vet_spectrum / verify_spectrum refuse a spectrum with fewer than
MIN_FINITE_PIXELS = 20 pixels of finite flux (core.require_judgeable), and record a spectrum too poor
to judge (too few usable pixels, a task's lines not covered, no signal) as an "unjudgeable"
trajectory with the reason (agents/tools/judgeable.py).

Errors: every bad input raises SpectrumReadError (agents/spectra/errors.py), a ValueError whose
message is "<file name>: <problem>" (missing file, empty file, non-FITS junk, truncated FITS or
gzip, unknown layout, missing HDU/column, zero-length arrays, mismatched lengths, non-monotonic
or non-positive wavelength, implausible wavelength range, unknown flux unit, overflowing flux,
all-NaN flux, target not in file, ...). No astropy/numpy exception
escapes read_spectrum or list_targets.

Also: blank_pipeline_labels(spec) (the copy agents see), write_csv / write_fits (exports that
read back through read_spectrum; a multi-arm spectrum per arm: an `arm` column, SPECTRUM_<arm>
tables, see export.py), merge_arms (the DESI arm merge, pure numpy).
"""
from .arms import arm_ids
from .desi import merge_arms
from .errors import SpectrumReadError
from .export import write_csv, write_fits
from .labels import blank_pipeline_labels
from .loaders import register as _register_loaders
from .read import FileSpectra, file_format, list_targets, read_spectrum

_register_loaders()

__all__ = [
    "FileSpectra",
    "SpectrumReadError",
    "arm_ids",
    "blank_pipeline_labels",
    "file_format",
    "list_targets",
    "merge_arms",
    "read_spectrum",
    "write_csv",
    "write_fits",
]
