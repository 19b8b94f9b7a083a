from pathlib import Path

import pytest
import yaml

SET_PATH = Path(__file__).with_name("claims_set.yaml")


@pytest.fixture(scope="session")
def claims_set() -> dict:
    with open(SET_PATH, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


@pytest.fixture(scope="session")
def set_measurers(claims_set, shared_spectra):
    """A Measurer per spectrum of the claims set, read from the shared corpus."""
    from agents.claims import Measurer
    from agents.spectra import read_spectrum

    out = {}
    for key, spec in claims_set["spectra"].items():
        path, _, target = spec["file"].partition("#")
        out[key] = Measurer.from_spectrum(read_spectrum(shared_spectra / path, target or None))
    return out
