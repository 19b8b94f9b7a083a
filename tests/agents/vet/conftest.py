import re

import pytest


@pytest.fixture(scope="session")
def read_manifest_spectra(shared_spectra, manifest):
    """read(survey_regex, subclass_regex, limit) -> [(row, spectrum)] from the shared data."""
    from agents.spectra import read_spectrum

    cache = {}

    def read(survey: str, subclass: str, limit: int | None = None):
        out = []
        for row in manifest:
            if re.search(survey, row["survey"]) and re.search(subclass, row["subclass"]):
                path, _, target = row["file"].partition("#")
                key = row["file"]
                if key not in cache:
                    cache[key] = read_spectrum(shared_spectra / path, target or None)
                out.append((row, cache[key]))
                if limit and len(out) >= limit:
                    break
        return out

    return read
