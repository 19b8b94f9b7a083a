"""ReviewerSession: wires the store and the components for one browser session.

Layouts (the `layouts` package) decide where the components go; this module only connects them.
The store is process-wide (one DuckDB connection per process); everything here is per session.
"""
from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from pathlib import Path

import panel as pn
import param

from agents.spectra import SpectrumReadError, read_spectrum, write_csv, write_fits
from agents.tools.render import render_png
from reviewer.components.controls import Controls
from reviewer.components.metadata import MetadataPanel
from reviewer.components.spectrum_list import SpectrumList
from reviewer.components.spectrum_plot import SpectrumPlot
from reviewer.store import Store, ingest_paths

log = logging.getLogger(__name__)

DEMO_DIR = Path(__file__).resolve().parents[1] / "assets" / "demo"
_seed_lock = threading.Lock()
_spectrum_cache: OrderedDict = OrderedDict()  # (path, target, mtime) -> Spectrum; shared by sessions
_CACHE_SIZE = 64


DEMO_TASKS = ("a", "wd", "mg", "cv")  # vet tasks run on the demo spectra so the queue has real items


def seed_demo_if_empty(store: Store, demo_dir: Path = DEMO_DIR) -> int:
    """First run: an empty database gets the bundled real demo spectra, and trajectories of the
    offline agents on them (the `rules` vet policy, renders deferred). Returns spectra added."""
    with _seed_lock:
        if store.count_spectra() > 0 or not demo_dir.is_dir():
            return 0
        summary = ingest_paths(store, [demo_dir], progress=False)
        for path, problem in summary.failed:
            log.warning("demo spectrum not loaded: %s: %s", path, problem)
        seed_demo_trajectories(store)
        return summary.added


def seed_demo_trajectories(store: Store) -> int:
    """Run the offline agents (vet `rules` on DEMO_TASKS, the FORMA verification pipeline) on every
    stored spectrum that has no trajectory of theirs yet."""
    from agents.verify import verify_spectrum
    from agents.vet import vet_spectrum

    made = 0
    for rec in store.list_spectra(limit=1000):
        try:
            spec = load_spectrum(rec["source_path"], rec.get("target"))
        except (SpectrumReadError, OSError) as err:
            log.warning("demo trajectory skipped: %s", err)
            continue
        for task in DEMO_TASKS:
            if store.find_trajectory(rec["spectrum_id"], task, "rules") is None:
                store.save_trajectory(vet_spectrum(spec, task, "rules", spectrum_id=rec["spectrum_id"]))
                made += 1
        if store.find_trajectory(rec["spectrum_id"], "verify", "rules", "forma-rules-0.1.0") is None:
            store.save_trajectory(verify_spectrum(spec, spectrum_id=rec["spectrum_id"]))
            made += 1
    return made


def load_spectrum(source_path: str, target: str | None):
    """read_spectrum with a small process-wide LRU cache (spectra are immutable once read)."""
    try:
        mtime = Path(source_path).stat().st_mtime_ns
    except OSError:
        mtime = None
    key = (source_path, target, mtime)
    if key in _spectrum_cache:
        _spectrum_cache.move_to_end(key)
        return _spectrum_cache[key]
    spec = read_spectrum(source_path, target=target)
    _spectrum_cache[key] = spec
    while len(_spectrum_cache) > _CACHE_SIZE:
        _spectrum_cache.popitem(last=False)
    return spec


class ReviewerSession(param.Parameterized):
    """Per-session state: which spectrum is open, and the components that show it."""

    error = param.String(default="", doc="last problem shown to the user (the app keeps serving)")
    record = param.Dict(default={})

    def __init__(self, store: Store, **params):
        super().__init__(**params)
        self.store = store
        self.plot = SpectrumPlot()
        self.metadata = MetadataPanel()
        self.spectra = SpectrumList()
        self.controls = Controls(plot=self.plot, export_png=self._export_png,
                                 export_csv=self._export_csv, export_fits=self._export_fits)
        self.error_alert = pn.pane.Alert(self.param.error, alert_type="danger", visible=False,
                                         css_classes=["sr-error"], sizing_mode="stretch_width")
        self.param.watch(lambda e: setattr(self.error_alert, "visible", bool(e.new)), "error")
        self.spectra.param.watch(self._on_search, "search")
        self.spectra.param.watch(self._on_select, "selected_id")
        self.refresh_list()

    # ---- list and selection -------------------------------------------------------------------
    def refresh_list(self) -> None:
        self.spectra.records = self.store.list_spectra(search=self.spectra.search or None, limit=5000)

    def _on_search(self, _event):
        self.refresh_list()

    def _on_select(self, event):
        if event.new and event.new != self.record.get("spectrum_id"):
            self.open_spectrum(event.new)

    def open_spectrum(self, spectrum_id: str) -> bool:
        """Show a spectrum; on bad input show the message and keep the previous view."""
        record = self.store.get_spectrum(spectrum_id)
        if record is None:
            self.error = f"Spectrum {spectrum_id} is not in the database."
            return False
        try:
            spec = load_spectrum(record["source_path"], record.get("target"))
        except SpectrumReadError as err:
            self.error = f"Cannot show this spectrum: {err}"
            return False
        except OSError as err:  # moved or unreadable file: same treatment
            self.error = f"Cannot show this spectrum: {Path(record['source_path']).name}: {err.strerror or err}"
            return False
        self.error = ""
        self.record = record
        self.metadata.record = record
        z = record.get("pipeline_z")
        self.plot.param.update(spectrum=spec, z=float(z) if z is not None else 0.0, x_range=None)
        self.controls.export_name = (record.get("object_id") or "spectrum").replace("/", "_")
        if self.spectra.selected_id != spectrum_id:
            self.spectra.selected_id = spectrum_id
        return True

    def open_first(self) -> None:
        if self.spectra.records:
            self.open_spectrum(self.spectra.records[0]["spectrum_id"])

    # ---- exports --------------------------------------------------------------------------------
    def _export_png(self) -> bytes:
        spec = self.plot.spectrum
        if spec is None:
            return b""
        lo, hi = self.plot.x_range or (None, None)
        if self.plot.rest_frame and lo is not None:  # the renderer works in observed wavelengths
            lo, hi = lo * (1 + self.plot.z), hi * (1 + self.plot.z)
        return render_png(spec, lo, hi)

    def _export_csv(self) -> bytes:
        import io
        buf = io.StringIO()
        write_csv(self.plot.spectrum, buf)
        return buf.getvalue().encode()

    def _export_fits(self) -> bytes:
        import io
        buf = io.BytesIO()
        write_fits(self.plot.spectrum, buf)
        return buf.getvalue()
