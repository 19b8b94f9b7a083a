"""`specreview export sft|bench|vi|parquet|trajectories|steps`: write the review database out in
Spec-o3, prospect, Parquet and SpecReview's own trajectory forms, and the step judgments as
process-supervision rows and preference pairs. `--session NAME` limits an export to one audit session's
labels (frozen at its close); `trajectories` writes the agents' trajectories as stored
(docs/trajectory.schema.json), which `specreview import trajectories` reads back exactly.

Nothing is half-written: a folder export is staged beside OUT and moved in when complete, the VI CSV
is renamed over OUT when complete. An existing file is not replaced without --force. A destination
that cannot be written (a file where a folder is needed, no permission, a full disk) ends with one
line naming it and why, and exit code 1."""
from __future__ import annotations

import argparse

from reviewer.cli.common import open_store
from reviewer.cli.console import console_of

EXIT_OK, EXIT_FAILED = 0, 1
KINDS = ("sft", "bench", "vi", "parquet", "trajectories", "steps")


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "export", help="export labels and curated trajectories (sft, bench, vi, parquet)",
        description="sft: accepted curated trajectories as LLaMA-Factory sharegpt rows + PNGs (Spec-o3 cold start; "
        "OUT is a folder). bench: vet trajectories with a settled human YES/NO label as SpecVI-Bench-style rows "
        "(OUT folder). vi: every inspector's current VI label as a prospect CSV (OUT is a file). parquet: one "
        "<table>.parquet per table (OUT folder). trajectories: every agent trajectory in SpecReview's own JSONL "
        "format + images/ (OUT folder; docs/trajectory.schema.json). steps: the reviewers' step judgments as "
        "process-supervision rows (steps.jsonl, one per judged step) and preference pairs (preference_pairs.jsonl) "
        "(OUT folder).",
    )
    p.add_argument("kind", choices=KINDS)
    p.add_argument("--out", required=True, help="output folder (sft, bench, parquet) or CSV file (vi)")
    p.add_argument("--session", default=None, help="only this audit session's labels (name or id)")
    p.add_argument("--task", default=None, help="sft/bench/trajectories/steps: only this task")
    p.add_argument("--inline-images", action="store_true",
                   help="trajectories: images as base64 data URLs in the rows instead of files under images/")
    p.add_argument("--format", choices=("parquet", "json"), default="parquet", help="bench: file format")
    p.add_argument("--force", action="store_true", help="replace files that are already at OUT")
    return p


def _cannot_write(out: str, exc: OSError) -> str:
    why = exc.strerror or str(exc) or type(exc).__name__
    where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(out) else ""
    return f"specreview export: cannot write {out}: {why}{where}"


def run(args: argparse.Namespace) -> int:
    console = console_of(args)
    from reviewer.services import exports
    from reviewer.store.review_queries import UnknownSession

    store = open_store(args)
    if store is None:
        return EXIT_FAILED
    try:
        overwrite = args.force
        if args.kind == "vi":
            n = exports.export_vi_csv(store, args.out, args.session, overwrite=overwrite)
            console.say(f"wrote {n} VI rows to {args.out}")
        elif args.kind == "parquet":
            counts = exports.export_parquet(store, args.out, args.session, overwrite=overwrite)
            console.say(f"wrote {len(counts)} tables to {args.out}: " + ", ".join(f"{t} {n}" for t, n in counts.items()))
        elif args.kind == "steps":
            counts = exports.export_steps(store, args.out, args.session, args.task, overwrite=overwrite)
            console.say(f"wrote {args.out}: " + ", ".join(f"{name} {n} rows" for name, n in counts.items()))
        elif args.kind == "trajectories":
            if args.session:
                console.warn("specreview export: --session does not apply to trajectories (exported as the agents "
                      "wrote them)")
                return EXIT_FAILED
            result = exports.export_trajectories(store, args.out, args.task, args.inline_images, overwrite=overwrite)
            console.say(f"wrote {result.written} trajectories to {args.out}")
            for tid, why in result.skipped:
                console.warn(f"  skipped {tid}: {why}")
        else:
            if args.kind == "sft":
                result = exports.export_sft(store, args.out, args.session, args.task, overwrite=overwrite)
            else:
                result = exports.export_bench(store, args.out, args.session, args.task, fmt=args.format,
                                              overwrite=overwrite)
            console.say(f"wrote {result.written} {args.kind} rows to {args.out}")
            for tid, why in result.skipped:
                console.warn(f"  skipped {tid}: {why}")
    except (UnknownSession, exports.ExportError) as exc:
        console.warn(f"specreview export: {exc}")
        return EXIT_FAILED
    except OSError as exc:  # no permission, disk full, ...: the export left nothing behind
        console.warn(_cannot_write(args.out, exc))
        return EXIT_FAILED
    finally:
        store.close()
    return EXIT_OK
