"""SpecVI-Bench rows (HF Maxwell-Jia/SpecVI-Bench, verl RL format) <-> spectra.

A row: `data_source` (carbon/cv/gm/ss/wd), `prompt` (system + user messages, the user text starts
with `<image>`), `images` [overview], `ability`/`agent_name`, `reward_model` {ground_truth, style},
`extra_info` {index, name, tools_kwargs.spectral_visualization_tool.create_kwargs {wavelength, flux,
redshift}}; SpecReview's exports add `claims` (the reviewed trajectory's claim results). Importing keeps
every non-array field in `meta["specvi_row"]`, so exporting the spectrum again gives back the same row.
"""
from __future__ import annotations

import copy
from typing import Any

import astropy.units as u
import numpy as np
from astropy.nddata import InverseVariance
from specutils import Spectrum

from agents.interop.rowcheck import RowError, check_text_sizes, kind_of, need, need_type, numbers

TOOL = "spectral_visualization_tool"
DATA_SOURCE_TASKS = {"carbon": "cs", "cc": "cs", "cv": "cv", "gm": "mg", "ss": "ss", "wd": "wd"}
TASK_DATA_SOURCES = {"cs": "carbon", "cv": "cv", "mg": "gm", "ss": "ss", "wd": "wd"}


CREATE_KWARGS = f"extra_info.tools_kwargs.{TOOL}.create_kwargs"


def check_specvi_row(row: Any) -> tuple[np.ndarray, np.ndarray]:
    """(wavelength, flux) of a row, or RowError naming the field and what was expected: an object
    with `reward_model.ground_truth` and `extra_info.tools_kwargs.<tool>.create_kwargs` holding
    `wavelength` and `flux` arrays of numbers of one length (at least one pixel), and no text field
    (a prompt message, a name) longer than agents.trajectory.MAX_STEP_TEXT_BYTES (1 MB)."""
    if not isinstance(row, dict):
        raise RowError(f"expected a JSON object, got {kind_of(row)}")
    need(need(row, "reward_model"), "ground_truth", "reward_model")
    node, where = row, ""
    for key in ("extra_info", "tools_kwargs", TOOL, "create_kwargs"):
        node = need(node, key, where)
        where = f"{where}.{key}" if where else key
    need_type(node, dict, CREATE_KWARGS, "an object {wavelength, flux, redshift}")
    wave = numbers(need(node, "wavelength", CREATE_KWARGS), "create_kwargs.wavelength")
    flux = numbers(need(node, "flux", CREATE_KWARGS), "create_kwargs.flux")
    if len(wave) != len(flux):
        raise RowError(f"create_kwargs: 'wavelength' has {len(wave)} values, 'flux' has {len(flux)} "
                       "(expected one flux per wavelength)")
    if not wave:
        raise RowError("create_kwargs: 'wavelength' and 'flux' are empty (no pixels)")
    z = node.get("redshift")
    if z is not None and (isinstance(z, bool) or not isinstance(z, (int, float))):
        raise RowError(f"create_kwargs.redshift: expected a number or null, got {kind_of(z)}")
    extra = row["extra_info"]
    need_type(extra, dict, "extra_info", "an object")
    check_text_sizes(row)
    return np.asarray(wave, dtype=float), np.asarray(flux, dtype=float)


def specvi_row_to_spectrum(row: dict[str, Any]) -> Spectrum:
    """The row's spectrum; `meta` carries the task id, ground truth and the row minus its arrays.
    A malformed row raises RowError naming the field (check_specvi_row)."""
    wave, flux = check_specvi_row(row)
    kwargs = row["extra_info"]["tools_kwargs"][TOOL]["create_kwargs"]
    rest = copy.deepcopy(row)
    ck = rest["extra_info"]["tools_kwargs"][TOOL]["create_kwargs"]
    ck.pop("wavelength")
    ck.pop("flux")
    order = np.argsort(wave, kind="stable")
    name = str(row["extra_info"].get("name") or row["extra_info"].get("index"))
    meta = {
        "survey": "LAMOST-LRS", "object_id": name, "target": None, "ra": None, "dec": None,
        "pipeline_class": None, "pipeline_subclass": None, "pipeline_z": None, "snr": None,
        "source_path": name, "format": "specvi-bench-row", "wavelength_medium": "vacuum", "header": {},
        "task": DATA_SOURCE_TASKS.get(row.get("data_source")), "ground_truth": row["reward_model"]["ground_truth"],
        "redshift": kwargs.get("redshift"), "specvi_row": rest,
        # the row's own order, in case it was not ascending (restored on export)
        "specvi_order": None if np.all(order == np.arange(wave.size)) else order.tolist(),
    }
    return Spectrum(spectral_axis=wave[order] * u.AA, flux=flux[order] * u.dimensionless_unscaled,
                    uncertainty=InverseVariance(np.zeros(wave.size)), mask=~np.isfinite(flux[order]), meta=meta)


def spectrum_to_specvi_row(spec: Spectrum, task_id: str | None = None, ground_truth: str | None = None,
                           prompt: list[dict] | None = None, images: list | None = None,
                           index: str | None = None) -> dict[str, Any]:
    """A SpecVI-Bench row for a spectrum; a spectrum imported from a row gives that row back."""
    wave = spec.spectral_axis.to_value("Angstrom")
    flux = np.asarray(getattr(spec.flux, "value", spec.flux), dtype=float)
    meta = spec.meta or {}
    order = meta.get("specvi_order")
    if order is not None:  # undo the ascending sort of the import
        inv = np.empty(len(order), dtype=int)
        inv[np.asarray(order)] = np.arange(len(order))
        wave, flux = wave[inv], flux[inv]
    if meta.get("specvi_row") is not None:
        row = copy.deepcopy(meta["specvi_row"])
    else:
        from agents.vet.prompt import SYSTEM_TEXT, task_prompt

        task_id = task_id or meta.get("task")
        row = {
            "data_source": TASK_DATA_SOURCES.get(task_id, task_id),
            "prompt": prompt or [{"role": "system", "content": SYSTEM_TEXT},
                                 {"role": "user", "content": "<image>" + task_prompt(task_id)}],
            "images": images or [],
            "ability": "spectral_vetting",
            "reward_model": {"ground_truth": ground_truth, "style": "rule"},
            "agent_name": "tool_agent",
            "extra_info": {"index": index or str(meta.get("object_id")), "name": meta.get("object_id"),
                           "tools_kwargs": {TOOL: {"create_kwargs": {"redshift": meta.get("redshift")}}}},
        }
    ck = row["extra_info"]["tools_kwargs"][TOOL]["create_kwargs"]
    ck["wavelength"] = [float(w) for w in wave]
    ck["flux"] = [float(f) for f in flux]
    if ground_truth is not None:
        row["reward_model"]["ground_truth"] = ground_truth
    return row
