"""Other formats <-> SpecReview: Spec-o3 cold-start SFT sharegpt rows and SpecVI-Bench RL rows (here);
SpecReview's own trajectory files (trajectory_file.py), OpenAI-style chat logs (chat.py) and FORMA
output folders (forma.py, forma_steps.py), imported by `specreview import`.

The names below are imported when first used: a light module of the package (jsonrows, which the
command line reads at start) does not bring specutils with it (~2 s)."""
from agents.lazy_exports import lazy_exports

_HOME = {
    "RowError": "agents.interop.rowcheck",
    "check_sft_row": "agents.interop.sft",
    "sft_row_to_trajectory": "agents.interop.sft",
    "trajectory_to_sft_row": "agents.interop.sft",
    "DATA_SOURCE_TASKS": "agents.interop.specvi",
    "check_specvi_row": "agents.interop.specvi",
    "spectrum_to_specvi_row": "agents.interop.specvi",
    "specvi_row_to_spectrum": "agents.interop.specvi",
}
__all__ = sorted(_HOME)
__getattr__ = lazy_exports(__name__, _HOME)
