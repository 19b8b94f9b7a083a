"""Rules policy, leave-one-survey-release-out CV (issue 20, item 4): every task's rule with its
calibrated thresholds fitted on all releases but one and applied unchanged to the one held out, per
fold and pooled, for the task files at a git revision ("before") and in the working tree ("after").

    .venv/bin/python bench/bench_rules_loro.py [--before-rev HEAD] [--holdout DIR] [--write]

Folds: `agents.vet.calibrate.release` of the manifest's survey column (LAMOST DR1, DR5, DR6, DR7, DR8
and the release-less LAMOST rows, SDSS legacy + BOSS, DESI, the Pickles library); truth = each task's
`labels` rule, every readable labelled spectrum of the shared corpus takes part. "holds" says whether
the file's thresholds score the best training F1 in every fold (`calibrate.holds_across`).
`--holdout DIR` also scores the file's thresholds on spectra in DIR that are not in the corpus (labels
from their own headers), spectra no threshold was ever chosen on. `--write` puts the tables into
docs/benchmarks.md between the bench_rules_loro markers (the prose around them is written by hand).
"""
from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# the repo first and tests/ last: tests/agents (a folder without __init__) must not shadow agents/
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "tests"))
from bench_rules_cv import load_corpus, task_at  # noqa: E402  (the same corpus reader)
from shared_data import manifest_rows  # noqa: E402

import kb  # noqa: E402
from agents.spectra import read_spectrum  # noqa: E402
from agents.tools.measure import Arrays  # noqa: E402
from agents.vet import calibrate as cal  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- bench_rules_loro:begin -->", "<!-- bench_rules_loro:end -->"
SUBCLASSES = {"A0-A4": r"^A[0-4]", "A5-A9": r"^A[5-9]", "F0-F4": r"^F[0-4]"}


def labelled(task, rows, arrays):
    keep = [(r, a, t) for r, a in zip(rows, arrays, strict=True) if (t := cal.truth(task, r)) is not None]
    return [r for r, _, _ in keep], [a for _, a, _ in keep], np.array([t for *_, t in keep], bool)


def loro(task, rows, arrays) -> dict:
    rows, arrays, y = labelled(task, rows, arrays)
    groups = [cal.release(r["survey"]) for r in rows]
    folds = cal.release_folds(groups)
    feats = cal.features(task, arrays)
    guard = cal.keep_no_mask(task, rows)
    cv = cal.cross_validate(task, feats, y, keep_no=guard, folds=folds)
    per_fold = []
    for test, chosen in zip(cv.folds, cv.thresholds, strict=True):
        yt, pt = y[test], cv.predicted[test]
        per_fold.append({"release": groups[test[0]], "n": int(test.size), "pos": int(yt.sum()),
                         "tp": int(np.sum(yt & pt)), "fp": int(np.sum(~yt & pt)), "fn": int(np.sum(yt & ~pt)),
                         "f1": cal.f1_score(yt, pt), "chosen": chosen})
    subs = [r["subclass"] for r in rows]
    return {"n": int(y.size), "pos": int(y.sum()), "f1": cv.f1, "folds": per_fold,
            "holds": cal.holds_across(task, feats, y, folds, guard) if cal.tunables(task) else None,
            "subclass": {g.name: (g.yes, g.n) for g in cal.by_subclass(subs, cv.predicted, SUBCLASSES)},
            "misses": [(groups[i], rows[i]["subclass"], rows[i]["file"]) for i in np.flatnonzero(y != cv.predicted)]}


def load_holdout(folder: Path, manifest_rows: list[dict]):
    """LAMOST/SDSS files in `folder` whose names are not in the corpus manifest, labelled by their headers."""
    known = {Path(r["file"].partition("#")[0]).name for r in manifest_rows}
    rows, arrays = [], []
    for path in sorted(folder.iterdir()):
        if path.name in known or not path.is_file():
            continue
        try:
            spec = read_spectrum(path)
        except Exception as exc:  # report, do not stop the bench
            print(f"skip {path.name}: {exc}", file=sys.stderr)
            continue
        rows.append({"file": path.name, "survey": spec.meta.get("survey") or "",
                     "class": spec.meta.get("pipeline_class") or "", "subclass": spec.meta.get("pipeline_subclass") or ""})
        arrays.append(Arrays.from_spectrum(spec))
    return rows, arrays


def holdout_scores(task, rows, arrays) -> dict | None:
    rows, arrays, y = labelled(task, rows, arrays)
    if not y.size:
        return None
    p = cal.predict(task, cal.features(task, arrays))
    subs = [r["subclass"] for r in rows]
    return {"n": int(y.size), "pos": int(y.sum()), "tp": int(np.sum(y & p)), "fp": int(np.sum(~y & p)),
            "fn": int(np.sum(y & ~p)), "f1": cal.f1_score(y, p),
            "subclass": {g.name: (g.yes, g.n) for g in cal.by_subclass(subs, p, SUBCLASSES)},
            "misses": [(rows[i]["subclass"], rows[i]["file"]) for i in np.flatnonzero(y != p)]}


def _same(a, b) -> bool:  # NaN-safe equality of two result records
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def _f(x: float) -> str:
    return "-" if x != x else f"{x:.3f}"


def _frac(pair) -> str:
    yes, n = pair
    return f"{yes}/{n}" if n else "-"


def _fold_cell(f: dict) -> str:
    if not f["pos"]:
        return f"FP {f['fp']}/{f['n']}"
    return f"{_f(f['f1'])} ({f['tp']}/{f['pos']}, FP {f['fp']})"


def report(out: dict) -> str:
    lines = [f"`bench/bench_rules_loro.py`, {out['date']}, {out['machine']}: {out['spectra']} readable corpus "
             f"spectra, one fold per survey release; before = task files at {out['before_rev']}, after = working "
             "tree. A cell is the held-out release's F1 (positives found / positives in it, false YES); a release "
             "without positives shows its false YES over its labelled spectra. The pooled F1 is over every "
             "out-of-fold answer; \"holds\": the file's thresholds score the best training F1 in every fold.", ""]
    releases = sorted({f["release"] for res in out["tasks"].values() for f in res["after"]["folds"]})
    lines.append("| task | rule | n | pos | " + " | ".join(releases) + " | pooled F1 | holds |")
    lines.append("|---" * (len(releases) + 6) + "|")
    for tid, res in out["tasks"].items():
        for label in ("before", "after"):
            r = res[label]
            if r is None or (label == "before" and _same(r, res["after"])):
                continue
            cells = {f["release"]: _fold_cell(f) for f in r["folds"]}
            holds = "-" if r["holds"] is None else ("yes" if all(r["holds"]) else
                                                    f"no ({sum(map(bool, r['holds']))}/{len(r['holds'])})")
            name = "same" if _same(res["before"], res["after"]) else label
            lines.append(f"| {tid} | {name} | {r['n']} | {r['pos']} | "
                         + " | ".join(cells.get(g, "") for g in releases) + f" | {_f(r['f1'])} | {holds} |")
    lines += ["", "Task a out of fold, by subclass (A: answered YES / all; F0-F4 must stay NO):", "",
              "| rule | A0-A4 | A5-A9 | F0-F4 answered YES | pooled F1 | thresholds per held-out release |",
              "|---|---|---|---|---|---|"]
    for label in ("before", "after"):
        r = out["tasks"]["a"][label]
        if r is None:
            continue
        s = r["subclass"]
        chosen = {}
        for f in r["folds"]:
            chosen.setdefault(tuple(sorted(f["chosen"].items())), []).append(f["release"])
        txt = "; ".join(", ".join(f"{v:g}" for _, v in key) + f" ({len(rels)} fold{'s' * (len(rels) > 1)}"
                        + (f": {', '.join(rels)})" if len(chosen) > 1 and len(rels) < 3 else ")")
                        for key, rels in chosen.items())
        lines.append(f"| {label} | {_frac(s['A0-A4'])} | {_frac(s['A5-A9'])} | {_frac(s['F0-F4'])} | {_f(r['f1'])} "
                     f"| {txt} |")
    keys = [t.key + " " + t.measure for t in cal.tunables(kb.task("a"))]
    lines += ["", f"(thresholds in the order {', '.join(keys)}.)", ""]
    for label in ("before", "after"):
        r = out["tasks"]["a"][label]
        if r is not None:
            lines.append(f"Task a missed out of fold, {label}: "
                         + "; ".join(f"{rel} {sub} `{Path(f).name}`" for rel, sub, f in r["misses"]) + ".")
    if out.get("holdout"):
        h = out["holdout"]
        lines += ["", f"Held-out spectra, never measured while a rule or threshold was set: {h['n_files']} "
                  f"files of `{h['name']}` not in the corpus, labels from their headers, thresholds as in the "
                  "task files (fitted on the whole corpus).", "",
                  "| task | rule | n | pos | found | false YES | F1 | A0-A4 | A5-A9 | F0-F4 answered YES |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        quiet = [tid for tid, res in h["tasks"].items() if not any(r and (r["pos"] or r["fp"]) for r in res.values())]
        for tid, res in h["tasks"].items():
            for label in ("before", "after"):
                r = res[label]
                if tid in quiet or r is None or (label == "before" and _same(r, res["after"])):
                    continue
                s = r["subclass"]
                name = "same" if _same(res["before"], res["after"]) else label
                lines.append(f"| {tid} | {name} | {r['n']} | {r['pos']} | {r['tp']} | {r['fp']} | {_f(r['f1'])} "
                             f"| {_frac(s['A0-A4'])} | {_frac(s['A5-A9'])} | {_frac(s['F0-F4'])} |")
        if quiet:
            lines.append(f"\nNo positives and no false YES there for {', '.join(quiet)}.")
        for label in ("before", "after"):
            r = h["tasks"].get("a", {}).get(label)
            if r is not None:
                lines.append(f"\nHeld-out task a misses, {label}: "
                             + ("; ".join(f"{sub} `{f}`" for sub, f in r["misses"]) or "none") + ".")
    return "\n".join(lines)


def write_doc(text: str) -> None:
    doc = DOC.read_text(encoding="utf-8")
    if BEGIN not in doc or END not in doc:
        sys.exit(f"{DOC} has no {BEGIN} ... {END} section to fill")
    head, rest = doc.split(BEGIN, 1)
    DOC.write_text(head + BEGIN + "\n" + text + "\n" + END + rest.split(END, 1)[1], encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before-rev", default="HEAD")
    ap.add_argument("--holdout", type=Path, help="folder of spectra outside the corpus, scored with the file's thresholds")
    ap.add_argument("--holdout-name", help="how the note names the held-out folder (default: its name)")
    ap.add_argument("--write", action="store_true", help="fill the bench_rules_loro section of docs/benchmarks.md")
    args = ap.parse_args()
    rows, arrays = load_corpus()
    machine = f"{platform.system()} {platform.machine()}, {platform.python_version()}"
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.before_rev],
                         capture_output=True, text=True).stdout.strip()
    out = {"date": date.today().isoformat(), "machine": machine, "spectra": len(rows),
           "before_rev": f"{args.before_rev} ({rev})" if rev and rev != args.before_rev else args.before_rev,
           "tasks": {}}
    befores = {tid: task_at(args.before_rev, tid) for tid in kb.tasks()}
    for tid, task in kb.tasks().items():
        after = loro(task, rows, arrays)
        before = loro(befores[tid], rows, arrays) if befores[tid] else None
        out["tasks"][tid] = {"after": after, "before": before}
    if args.holdout:
        h_rows, h_arrays = load_holdout(args.holdout, manifest_rows())
        out["holdout"] = {"name": args.holdout_name or args.holdout.name, "n_files": len(h_rows),
                          "tasks": {tid: {"after": holdout_scores(task, h_rows, h_arrays),
                                          "before": holdout_scores(befores[tid], h_rows, h_arrays)
                                          if befores[tid] else None}
                                    for tid, task in kb.tasks().items()}}
        out["holdout"]["tasks"] = {k: v for k, v in out["holdout"]["tasks"].items() if v["after"]}
    text = report(out)
    print(text)
    if args.write:
        write_doc(text)
        print(f"\nwritten to {DOC.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
