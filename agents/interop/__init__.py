"""Spec-o3 data <-> SpecReview: cold-start SFT sharegpt rows and SpecVI-Bench RL rows."""
from agents.interop.sft import sft_row_to_trajectory, trajectory_to_sft_row
from agents.interop.specvi import DATA_SOURCE_TASKS, spectrum_to_specvi_row, specvi_row_to_spectrum

__all__ = ["DATA_SOURCE_TASKS", "sft_row_to_trajectory", "spectrum_to_specvi_row", "specvi_row_to_spectrum",
           "trajectory_to_sft_row"]
