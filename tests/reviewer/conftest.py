import struct
import zlib
from datetime import UTC, datetime, timedelta

import pytest

from agents.trajectory import AgentInfo, Trajectory, Verdict
from reviewer.store import Store


def make_png(width: int, height: int, shade: int = 0) -> bytes:
    """A real (decodable) greyscale PNG, different bytes for each shade."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + bytes([(shade + x) % 256 for x in range(width)]) for _ in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "review.duckdb")
    yield s
    s.close()


@pytest.fixture
def make_trajectory():
    """A trajectory with every step kind, two renders, nested args and distinct step times."""
    def build(spectrum_id: str = "spec0001", task: str = "a", backend: str = "rules", model: str | None = None):
        t0 = datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
        traj = Trajectory(
            spectrum_id=spectrum_id, source_path="lamost/spec-55859-F5902_sp01-001.fits", target=None, task=task,
            agent=AgentInfo(name="vet", backend=backend, model=model, version="0.1.0"), created_at=t0,
        )
        full = traj.add_image(make_png(40, 20, shade=1))
        zoom = traj.add_image(make_png(30, 10, shade=2))
        when = iter(t0 + timedelta(milliseconds=17 * i) for i in range(100))
        traj.add("prompt", text="Is this a white dwarf? Look at the Balmer lines.", image_sha=full, created_at=next(when))
        traj.add("think", text="Broad H-beta wings <b>suspected</b> & deep.", created_at=next(when))
        traj.add("tool_call", tool_name="zoom", tool_args={"wave_min": 4700.0, "wave_max": 5000, "note": ["a", 1]},
                 label="H-beta", created_at=next(when))
        traj.add("tool_result", image_sha=zoom, text="EW = 38.2 A", data={"ew": 38.2, "fwhm": [120.5, 3]},
                 created_at=next(when))
        traj.add("tool_result", text="zoom failed: range outside spectrum", is_error=True, created_at=next(when))
        traj.add("verdict", verdict=Verdict(who="feature_auditor", value="KEEP", rule="R3", credibility="HIGH",
                                            evidence=["step:3"], target="H-beta"), created_at=next(when))
        traj.add("answer", answer={"answer": "YES", "credibility": "HIGH"}, text="YES", created_at=next(when))
        traj.outcome = {"answer": "YES", "credibility": "HIGH", "z": 0.0012}
        return traj

    return build


SAMPLE_FILES = (
    "lamost_sbc/101030.fits",
    "sdss_lime/sdss_dr18_0358-51818-0504.fits",
    "desi_fastspecfit/coadd-4-80613-thru20210324.fits",
    "desi_fastspecfit/redrock-4-80613-thru20210324.fits",  # label sidecar: used, not ingested
    "desi_specutils/coadd-5-169-thru20210419.fits",  # five targets
    "pickles_pyhdust/o5v.dat",
    "pickles_pyhdust/ReadMe_Pickles1998.txt",  # documentation: skipped
)


@pytest.fixture
def sample_folder(tmp_path, shared_spectra):
    """A folder of real files copied from the shared corpus (nested, with a sidecar and a ReadMe)."""
    import shutil

    root = tmp_path / "incoming"
    for rel in SAMPLE_FILES:
        dest = root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shared_spectra / rel, dest)
    return root


def assert_signals_stored_as_computed(store, n_trajectories: int) -> None:
    """No spectrum's triage signals are stale, and the stored signals of the store's `n_trajectories`
    trajectories are those computed in full (reviewer.services.triage.compute_signals)."""
    from reviewer.services import triage

    assert store.triage.stale_signal_spectra() == []
    stored = store.triage.cached_signals(columns=triage.SIGNALS_OUT, ordered=False).set_index("trajectory_id")
    computed = triage.compute_signals(store)
    assert len(stored) == len(computed) == n_trajectories
    def values(column):  # NaN (a missing margin) as None: NaN equals nothing, itself included
        return [None if v != v else v for v in column.tolist()]

    for column in ("task", "agent", "answer", "n_contradicted", "margin", *(f for f in triage.FEATURES if f != "seen")):
        assert values(stored[column].reindex(computed.index)) == values(computed[column]), column

