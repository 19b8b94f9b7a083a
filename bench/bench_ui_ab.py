"""`j` and `n` of two trees, measured in turns: is this tree's p95 worse than an earlier revision's?

One bench_ui.py run gives 40 timings; its p95 is its second-slowest, which moves by a third from one run
to the next on a 2-core machine (docs/benchmarks.md). So the two trees are measured in alternating
rounds (the load drifts over both alike), every timing is pooled per tree, and the p95 and median of
each come with a bootstrap 95 % interval of the difference (this tree minus the earlier one). Both
trees are timed by this tree's bench_ui.py (copied into a worktree of the revision): the same
measurement, two products.

Run: .venv/bin/python bench/bench_ui_ab.py --before eb11cea [--rounds 4] [--repeats 40]
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESAMPLES = 4000


def timed_round(tree: Path, repeats: int, out: Path) -> dict:
    subprocess.run([sys.executable, str(tree / "bench" / "bench_ui.py"), "--only", "step,item",
                    "--repeats", str(repeats), "--samples", str(out)], check=True, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())


def difference(after: list[float], before: list[float], stat, rng) -> tuple[float, float, float]:
    """stat(after) - stat(before) and its bootstrap 95 % interval (each pool resampled on its own)."""
    a, b = np.asarray(after), np.asarray(before)
    draws = [stat(rng.choice(a, a.size)) - stat(rng.choice(b, b.size)) for _ in range(RESAMPLES)]
    return stat(a) - stat(b), *np.percentile(draws, [2.5, 97.5])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the earlier revision (a commit)")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=40)
    args = parser.parse_args()
    pools = {name: {"j": [], "n": []} for name in ("before", "after")}
    with tempfile.TemporaryDirectory() as tmp:
        worktree = Path(tmp) / "before"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(worktree), args.before],
                       check=True)
        try:
            for name in ("bench_ui.py", "ui_timing.py"):
                shutil.copy(HERE / name, worktree / "bench" / name)
            trees = {"before": worktree, "after": REPO}
            for r in range(args.rounds):
                for name in (("before", "after") if r % 2 == 0 else ("after", "before")):
                    got = timed_round(trees[name], args.repeats, Path(tmp) / f"{name}{r}.json")
                    for key in ("j", "n"):
                        pools[name][key] += got[key]
                    print(f"round {r + 1} {name}: {got['machine']}", flush=True)
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(worktree)], check=False)
    rng = np.random.default_rng(0)
    p95 = lambda v: float(np.percentile(v, 95))  # noqa: E731
    print(f"\nbefore {args.before}, after the working tree; {args.rounds} rounds of {args.repeats} each, "
          "in turns\n")
    print("| key | n | before median / p95 ms | after median / p95 ms | p95 after - before [95 % CI] | "
          "median after - before [95 % CI] |\n|---|---|---|---|---|---|")
    for key in ("j", "n"):
        b, a = pools["before"][key], pools["after"][key]
        dp, dm = difference(a, b, p95, rng), difference(a, b, np.median, rng)
        print(f"| `{key}` | {len(b)} / {len(a)} | {np.median(b):.0f} / {p95(b):.0f} | {np.median(a):.0f} / {p95(a):.0f} | "
              f"{dp[0]:+.0f} [{dp[1]:+.0f}, {dp[2]:+.0f}] | {dm[0]:+.0f} [{dm[1]:+.0f}, {dm[2]:+.0f}] |")


if __name__ == "__main__":
    main()
