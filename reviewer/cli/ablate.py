"""`specreview ablate PATH_OR_ID (--remove-range A B | --narrow-lines [KMS])`: re-run the FORMA
verification on a modified copy of a spectrum and report how the verdict and credibility change."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from reviewer.cli.console import console_of


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("ablate", help="counterfactual ablation of a verification",
                              description=__doc__.splitlines()[0])
    p.add_argument("item", metavar="PATH_OR_ID", help="spectrum file or stored spectrum id")
    p.add_argument("--target", default=None, help="target inside a multi-spectrum file")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--remove-range", nargs=2, type=float, metavar=("A", "B"), help="erase [A, B] Angstrom")
    g.add_argument("--remove-strongest-broad", action="store_true", help="erase the strongest broad line found")
    g.add_argument("--narrow-lines", nargs="?", type=float, const=900.0, metavar="KMS",
                   help="narrow every broad line to KMS km/s (default 900)")
    p.add_argument("--templates", default=None, metavar="DIR", help="Redrock template folder")
    p.add_argument("--json", action="store_true", help="print the change as JSON")
    return p


def _spectrum(args):
    from agents.spectra import read_spectrum
    if Path(args.item).exists():
        return read_spectrum(args.item, args.target)
    from reviewer.cli.common import open_store
    from reviewer.services.items import record_of_spectrum
    store = open_store(args)
    if store is None:
        raise SystemExit(1)
    try:
        rec = record_of_spectrum(store, args.item)
    finally:
        store.close()
    if rec is None:
        raise SystemExit(f"specreview ablate: {args.item}: neither a file nor a stored spectrum id")
    return read_spectrum(rec["source_path"], rec["target"])


def run(args: argparse.Namespace) -> int:
    console = console_of(args)
    from agents.spectra import blank_pipeline_labels
    from agents.tools.features import good_pixels
    from agents.verify.ablation import ablate, strongest_broad_line_range
    from agents.verify.graph import verify_pixels

    spec = blank_pipeline_labels(_spectrum(args))
    pixels = good_pixels(spec)
    meta = {"source_path": spec.meta.get("source_path"), "target": spec.meta.get("target")}
    opts = {"template_dir": args.templates}
    if args.remove_strongest_broad:
        rng = strongest_broad_line_range(verify_pixels(pixels, meta, **opts))
        if rng is None:
            console.warn("specreview ablate: no broad line found to remove")
            return 1
        res = ablate(pixels, meta, remove=rng, **opts)
    elif args.remove_range:
        res = ablate(pixels, meta, remove=tuple(args.remove_range), **opts)
    else:
        res = ablate(pixels, meta, narrow_kms=args.narrow_lines, **opts)
    change = dict(res["change"], modification=res["modification"])
    if args.json:
        console.say(json.dumps(change))
    else:
        b, a = change["before"], change["after"]
        console.say(f"modification: {change['modification']}")
        console.say(f"before: {b['type']} z={b['redshift']} {b['verdict']} {b['credibility']}")
        console.say(f"after:  {a['type']} z={a['redshift']} {a['verdict']} {a['credibility']}")
        console.say(f"verdict changed: {change['verdict_changed']}; credibility change: {change['credibility_change']:+d}")
    return 0
