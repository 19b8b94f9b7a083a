"""Other formats <-> SpecReview: Spec-o3 cold-start SFT sharegpt rows and SpecVI-Bench RL rows (here);
SpecReview's own trajectory files (trajectory_file.py), OpenAI-style chat logs (chat.py) and FORMA
output folders (forma.py, forma_steps.py), imported by `specreview import`."""
from agents.interop.rowcheck import RowError
from agents.interop.sft import check_sft_row, sft_row_to_trajectory, trajectory_to_sft_row
from agents.interop.specvi import DATA_SOURCE_TASKS, check_specvi_row, spectrum_to_specvi_row, specvi_row_to_spectrum

__all__ = ["DATA_SOURCE_TASKS", "RowError", "check_sft_row", "check_specvi_row", "sft_row_to_trajectory",
           "spectrum_to_specvi_row", "specvi_row_to_spectrum", "trajectory_to_sft_row"]
