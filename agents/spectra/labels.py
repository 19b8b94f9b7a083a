"""`blank_pipeline_labels`: the spectrum an agent may see, without the pipeline's answers."""
from __future__ import annotations

import copy
import re

from specutils import Spectrum

# Header keys that carry a pipeline's classification or redshift (LAMOST primary header, SDSS
# SPECOBJ/SPALL copies, redrock columns) or the target selection's guess (OBJTYPE, *_TARGET bits).
_LABEL_KEY = re.compile(
    r"^(CLASS|SUBCLASS|Z|Z_ERR|ZERR|ZWARN|ZWARNING|Z_NOQSO.*|CLASS_NOQSO|SUBCLASS_NOQSO|SPECTYPE|"
    r"SUBTYPE|DELTACHI2|RCHI2|RCHI2DIFF|OBJTYPE|.*_TARGET\d?|VELDISP.*|TEFF|LOGG|FEH|RV|RV_ERR)$",
    re.I)

_LABEL_META = ("pipeline_class", "pipeline_subclass", "pipeline_z", "pipeline_z_err",
               "pipeline_zwarn", "pipeline_deltachi2", "labels_source", "objtype")


def blank_pipeline_labels(spec: Spectrum) -> Spectrum:
    """A copy whose meta has pipeline_class/subclass/z (and z error, zwarn, label source,
    target type) set to None and whose header / fibermap dicts lack label-like keys.
    Arrays are shared with the input (they are not modified); meta is deep-copied."""
    meta = copy.deepcopy(dict(spec.meta or {}))
    for key in _LABEL_META:
        if key in meta:
            meta[key] = None
    for key in ("pipeline_class", "pipeline_subclass", "pipeline_z"):
        meta[key] = None
    for dict_key in ("header", "fibermap"):
        if isinstance(meta.get(dict_key), dict):
            meta[dict_key] = {k: v for k, v in meta[dict_key].items() if not _LABEL_KEY.match(k)}
    return Spectrum(spectral_axis=spec.spectral_axis, flux=spec.flux, uncertainty=spec.uncertainty,
                    mask=spec.mask, meta=meta)
