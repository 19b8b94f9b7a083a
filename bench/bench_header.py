"""Time a spectrum's header text against its number of cards (issue 45, finding 1: 150,000 HISTORY cards
held the server ~75 s when the text was joined card by card).

    .venv/bin/python bench/bench_header.py [--cards 9400 30000 150000] [--repeat 5]

Each size is the demo's SDSS spectrum with that many more HISTORY cards (tests/security/payloads.py,
header_bomb): `header_text` over the raw header (the median of --repeat), and `read_spectrum` of the
file (refused past fitsraw.MAX_HEADER_CARDS). Results go into docs/benchmarks.md by hand.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.append(str(REPO / "tests"))  # appended: tests/agents must not shadow the agents package

from security.payloads import header_bomb  # noqa: E402

from agents.spectra import SpectrumReadError, read_spectrum  # noqa: E402
from agents.spectra.core import header_text  # noqa: E402
from agents.spectra.fitsraw import RawHeader  # noqa: E402


def timed(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cards", type=int, nargs="+", default=[9_400, 30_000, 150_000])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    source = (REPO / "assets" / "demo" / "spec-0853-52374-0240.fits").read_bytes()
    print("| HISTORY cards added | header_text (ms) | read_spectrum (ms) | read |")
    print("| --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as folder:
        for cards in args.cards:
            raw = header_bomb(source, cards)
            header = RawHeader(raw[:raw.index(b"END     ")].decode("ascii"))
            path = Path(folder) / f"history-{cards}.fits"
            path.write_bytes(raw)
            outcome = []

            def read(path=path, outcome=outcome):
                try:
                    read_spectrum(str(path))
                    outcome.append("read")
                except SpectrumReadError as err:
                    outcome.append(f"refused: {err.problem.split(' (')[0]}")

            text_s, read_s = timed(lambda h=header: header_text(h), args.repeat), timed(read, args.repeat)
            print(f"| {cards:,} | {text_s * 1000:.1f} | {read_s * 1000:.1f} | {outcome[-1]} |")


if __name__ == "__main__":
    main()
