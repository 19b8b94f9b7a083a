"""Register every SpecReview reader with specutils, so `Spectrum.read(path)` works too.

One loader per format label (sniff.ALL_FORMATS); each identifier asks the cached content sniffer
(no file names involved). Priority 30 outranks specutils' own loaders (<= 20) when both claim a
file (e.g. its "SDSS-III/IV spec" loader on SDSS files), so `Spectrum.read` returns the same
spectrum, with the same meta, as `read_spectrum`. `Spectrum.read(path, target=...)` selects a
DESI target; `format="desi-coadd"` etc. force a label and fail if the file is something else.
The DESI loaders also register a SpectrumList reader returning every target of the file.
"""
from __future__ import annotations

import os

from specutils import Spectrum, SpectrumList
from specutils.io.registers import data_loader

from .read import list_targets, read_spectrum
from .sniff import ALL_FORMATS, DESI_COADD, DESI_SPECTRA, identify

PRIORITY = 30
_EXTENSIONS = {
    "lamost-lrs-image": ["fits", "fits.gz", "fit", "fit.gz"],
    "lamost-lrs-table": ["fits", "fits.gz"],
    "lamost-mrs": ["fits", "fits.gz"],
    "sdss-spec": ["fits", "fits.gz"],
    "desi-coadd": ["fits", "fits.gz"],
    "desi-spectra": ["fits", "fits.gz"],
    "specreview-table": ["fits"],
    "pickles-ascii": ["dat", "txt"],
    "ecsv-table": ["ecsv"],
    "ascii-table": ["csv", "txt", "dat", "tsv"],
}
_registered = False


def _identifier(label: str):
    def identify_label(origin, path, fileobj, *args, **kwargs):
        return origin == "read" and identify(path if path is not None else _as_path(fileobj)) == label
    identify_label.__name__ = f"identify_{label.replace('-', '_')}"
    return identify_label


def _as_path(source):
    """astropy hands readers an open (possibly gunzipped) stream; the path names errors better."""
    name = getattr(source, "name", None)
    return name if isinstance(name, str) and os.path.isfile(name) else source


def _reader(label: str):
    def read_label(source, target=None, **kwargs):
        return read_spectrum(_as_path(source), target=target, expected_format=label)
    read_label.__name__ = f"read_{label.replace('-', '_')}"
    return read_label


def _list_reader(label: str):
    def read_all(source, **kwargs):
        source = _as_path(source)
        return SpectrumList([read_spectrum(source, target=t, expected_format=label)
                             for t in list_targets(source)])
    read_all.__name__ = f"read_all_{label.replace('-', '_')}"
    return read_all


def register() -> None:
    """Idempotent: safe to call again (a module reload re-registers with force)."""
    global _registered
    if _registered:
        return
    for label in ALL_FORMATS:
        multi = label in (DESI_COADD, DESI_SPECTRA)
        data_loader(label, identifier=_identifier(label), dtype=Spectrum,
                    extensions=_EXTENSIONS.get(label), priority=PRIORITY, force=True,
                    autogenerate_spectrumlist=not multi)(_reader(label))
        if multi:
            data_loader(label, identifier=_identifier(label), dtype=SpectrumList,
                        extensions=_EXTENSIONS.get(label), priority=PRIORITY,
                        force=True)(_list_reader(label))
    _registered = True
