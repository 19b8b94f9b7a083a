"""Round trips between Spec-o3 rows (built here from the documented formats) and SpecReview."""
import copy

import numpy as np

from agents.interop import sft_row_to_trajectory, spectrum_to_specvi_row, specvi_row_to_spectrum, trajectory_to_sft_row
from agents.trajectory import Trajectory
from agents.vet.run import vet_spectrum

PNG = {f"images/lf_cv_0_{i}.png": b"\x89PNG\r\n\x1a\n" + bytes([i]) * 20 for i in range(3)}


def sft_row():
    call = '{"name": "spectral_visualization_tool", "arguments": {"wavelength_range": [6500, 6600], "label": "Hα"}}'
    call2 = '{"name": "spectral_visualization_tool", "arguments": {"wavelength_range": [4800, 4920]}}'
    return {
        "conversations": [
            {"from": "system", "value": "You are a helpful assistant."},
            {"from": "human", "value": "<image>Analyze the provided spectrum to determine if it is a Cataclysmic "
                                        "Variable (CV).\n\nKey Visual Indicators of Cataclysmic Variable (CV):\n"
                                        "1. (Primary) State 1 ..."},
            {"from": "gpt", "value": f"<think>Strong emission near 6563?</think>\n<tool_call>\n{call}\n</tool_call>"},
            {"from": "human", "value": "<tool_response>\n<image>\nGenerated spectral visualization focused on "
                                        "wavelength range (6500, 6600) Å for Hα.\n</tool_response>"},
            {"from": "gpt", "value": f"<think>Broad H-alpha emission. Check H-beta.</think>\n"
                                     f"<tool_call>\n{call2}\n</tool_call>"},
            {"from": "human", "value": "<tool_response>\n<image>\nGenerated spectral visualization focused on "
                                        "wavelength range (4800, 4920) Å.\n</tool_response>"},
            {"from": "gpt", "value": "<think>Both Balmer lines in emission.</think>\n"
                                     "<answer>\\boxed{YES} Quiescent CV.</answer>"},
        ],
        "images": list(PNG),
        "sample_index": 17,
        "source_name": "spec-56414-HD161547N531412F01_sp07-098.fits.gz",
        "ground_truth": "YES",
        "total_iterations": 3,
        "total_tool_calls": 2,
    }


def test_sft_row_round_trip_is_lossless_through_json():
    row = sft_row()
    traj = sft_row_to_trajectory(row, images=PNG)
    assert traj.task == "cv"
    assert [s.kind for s in traj.steps] == ["prompt", "think", "tool_call", "tool_result", "think", "tool_call",
                                          "tool_result", "think", "answer"]
    assert traj.steps[2].tool_args == {"wavelength_range": [6500, 6600], "label": "Hα"}
    assert traj.outcome["prediction"] == "YES" and traj.outcome["format_correct"] is True
    reloaded = Trajectory.from_json(traj.to_json())
    reloaded.images = dict(traj.images)
    back, files = trajectory_to_sft_row(reloaded)
    assert back == row
    assert files == PNG


def test_own_trajectory_exports_as_sft_and_imports_back(shared_spectra, manifest):
    from agents.spectra import read_spectrum

    row = next(r for r in manifest if r["subclass"].startswith("A7") and "LAMOST-LRS" in r["survey"])
    spec = read_spectrum(shared_spectra / row["file"])
    traj = vet_spectrum(spec, "a", eager_renders=True)
    out, files = trajectory_to_sft_row(traj, ground_truth="YES")
    n_calls = sum(s.kind == "tool_call" for s in traj.steps)
    assert out["total_tool_calls"] == n_calls and len(out["images"]) == n_calls + 1 == len(files)
    assert sum(t["value"].count("<image>") for t in out["conversations"]) == len(out["images"])
    again = sft_row_to_trajectory(out, images=files)
    assert [s.tool_args for s in again.steps if s.kind == "tool_call"] == \
        [s.tool_args for s in traj.steps if s.kind == "tool_call"]
    assert [s.text for s in again.steps if s.kind == "tool_result"] == \
        [s.text for s in traj.steps if s.kind == "tool_result"]
    assert again.outcome["prediction"] == traj.outcome["prediction"]
    assert [s.image_sha for s in again.steps if s.kind == "tool_result"] == \
        [s.image_sha for s in traj.steps if s.kind == "tool_result"]


def specvi_row(descending=False):
    wave = np.linspace(3700.0, 9100.0, 3909)
    flux = 100 + 10 * np.sin(wave / 40.0)
    if descending:
        wave, flux = wave[::-1], flux[::-1]
    return {
        "data_source": "gm",
        "prompt": [{"role": "system", "content": "You are a helpful assistant."},
                   {"role": "user",
                    "content": "<image>Analyze the provided spectrum to determine if it is a M Giant.\n..."}],
        "images": [{"bytes": b"\x89PNG...", "path": None}],
        "ability": "astro",
        "reward_model": {"ground_truth": "NO", "style": "rule"},
        "agent_name": "tool_agent",
        "extra_info": {"index": "4f0c6d7e-0000-4000-8000-000000000001",
                       "name": "spec-56414-HD161547N531412F01_sp07-098.fits.gz",
                       "tools_kwargs": {"spectral_visualization_tool": {"create_kwargs": {
                           "wavelength": wave.tolist(), "flux": flux.tolist(), "redshift": 0.0}}}},
    }


def test_specvi_row_round_trip_is_lossless():
    for descending in (False, True):
        row = specvi_row(descending)
        spec = specvi_row_to_spectrum(copy.deepcopy(row))
        wave = spec.spectral_axis.value
        assert np.all(np.diff(wave) > 0) and spec.meta["task"] == "mg" and spec.meta["ground_truth"] == "NO"
        assert spectrum_to_specvi_row(spec) == row


def test_specvi_row_spectrum_is_vettable_and_new_rows_follow_the_format():
    spec = specvi_row_to_spectrum(specvi_row())
    traj = vet_spectrum(spec, spec.meta["task"])
    assert traj.outcome["status"] == "answered"
    spec.meta["specvi_row"] = None
    fresh = spectrum_to_specvi_row(spec, "mg", "NO")
    assert fresh["data_source"] == "gm" and fresh["reward_model"] == {"ground_truth": "NO", "style": "rule"}
    assert fresh["prompt"][1]["content"].startswith(
        "<image>Analyze the provided spectrum to determine if it is a M Giant.")
    ck = fresh["extra_info"]["tools_kwargs"]["spectral_visualization_tool"]["create_kwargs"]
    assert ck["wavelength"] == \
        specvi_row()["extra_info"]["tools_kwargs"]["spectral_visualization_tool"]["create_kwargs"]["wavelength"]


def test_text_size_limit_is_bytes_and_names_the_field():
    import pytest

    from agents.interop import RowError, check_sft_row, check_specvi_row
    from agents.trajectory import MAX_STEP_TEXT_BYTES

    assert MAX_STEP_TEXT_BYTES == 1_000_000
    row = sft_row()
    row["conversations"][2]["value"] = "a" * MAX_STEP_TEXT_BYTES  # at the limit: fine
    check_sft_row(row)
    row["conversations"][2]["value"] = "é" * (MAX_STEP_TEXT_BYTES // 2 + 1)  # 2 bytes each in UTF-8
    with pytest.raises(RowError, match=r"conversations\[2\]\.value: text of 1,000,002 bytes is over the "
                                       r"1,000,000-byte limit"):
        check_sft_row(row)
    row = sft_row()
    row["source_name"] = "s" * (MAX_STEP_TEXT_BYTES + 1)  # any text field of the row, not only the turns
    with pytest.raises(RowError, match=r"source_name: text of 1,000,001 bytes"):
        check_sft_row(row)

    spec_row = spectrum_to_specvi_row(sft_row_to_trajectory_spectrum(), task_id="cv", ground_truth="YES")
    spec_row["prompt"][0]["content"] = "z" * (MAX_STEP_TEXT_BYTES + 1)
    with pytest.raises(RowError, match=r"prompt\[0\]\.content: text of 1,000,001 bytes"):
        check_specvi_row(spec_row)


def sft_row_to_trajectory_spectrum():
    import astropy.units as u
    from specutils import Spectrum

    wave = np.linspace(3800, 9000, 50)
    return Spectrum(spectral_axis=wave * u.AA, flux=np.ones(50) * u.dimensionless_unscaled,
                    meta={"object_id": "x"})
