"""What the judges-against-people report and the failure-mode counts (issue 47, items 4-5) add to each
Stats computation, when an LLM judge has scored every trajectory and people a few: a fresh database
with N judge scores and H people's scores (two people on H/2 trajectories each), written in bulk as the
kept current scores are (ratings and current_ratings), and S step judgments; then, `--repeats` times
after one untimed read, stats.judge_report, the failure-mode counts, and the whole stats.review_stats.

Run: nice .venv/bin/python bench/bench_judge_report.py [--n 100000] [--people 400] [--steps 2000]
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path


def machine() -> str:
    import platform

    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
            f"load average {os.getloadavg()[0]:.1f}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")


def seed(store, n: int, people: int, steps: int) -> None:
    """Bulk rows (a benchmark's fixture, not the app's write path): trajectories t0..t{n-1}, a judge's score of
    each, two people's scores of the first `people`, and `steps` judged steps on the first trajectories."""
    x = store.db.execute
    x("INSERT INTO trajectories (id, task, agent_name, backend, n_steps, n_tool_calls, schema_version, created_at, "
      "saved_at) SELECT 't' || i, 'a', 'vet', 'rules', 10, 3, 1, now(), now() FROM range(?) r(i)", [n])
    for who, kind, count in (("llm:m", "llm", n), ("ann", "human", people // 2), ("bo", "human", people // 2)):
        x("INSERT INTO ratings (id, trajectory_id, rater, rater_kind, score, rubric_version, created_at) "
          "SELECT ? || i, 't' || i, ?, ?, (i * 7 + length(?)) % 6, '1', now() FROM range(?) r(i)",
          [who, who, kind, who, count])
    x("INSERT INTO current_ratings SELECT trajectory_id, rater, rubric_version, rater_kind, score, created_at, seq "
      "FROM ratings")
    x("INSERT INTO step_judgments (id, trajectory_id, step_idx, reviewer, judgment, tags, taxonomy_version, "
      "created_at) SELECT 'j' || i, 't' || (i // 5), i % 5, 'ann', CASE WHEN i % 3 = 0 THEN 'correct' ELSE "
      "'incorrect' END, CASE WHEN i % 3 = 0 THEN [] ELSE ['wrong_z', 'premature_answer'] END, '1', now() "
      "FROM range(?) r(i)", [steps])


def main() -> None:
    from reviewer.services import stats
    from reviewer.store import Store

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--people", type=int, default=400)
    ap.add_argument("--steps", type=int, default=2_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "judge.duckdb") as store:
        seed(store, args.n, args.people, args.steps)
        parts = {"judge_report": lambda: stats.judge_report(store),
                 "failure_modes": lambda: stats.failure_modes(store.step_judgments.failure_mode_counts()),
                 "review_stats (all of it)": lambda: stats.review_stats(store)}
        print(machine())
        print(f"{args.n} judge scores, {args.people} people's, {args.steps} step judgments")
        for name, call in parts.items():
            call()  # warm-up
            times = []
            for _ in range(args.repeats):
                t = time.perf_counter()
                call()
                times.append(1000 * (time.perf_counter() - t))
            print(f"{name}: median {statistics.median(times):.1f} ms, max {max(times):.1f} ms ({args.repeats} runs)")


if __name__ == "__main__":
    main()
