"""Score the claim checker on the generated evaluation set (bench/claims_eval/claims_eval.jsonl).

    .venv/bin/python bench/claims_eval/score.py [--set PATH] [--subset all|dev|holdout] [--misses N] [--markdown]
        [--extractor patterns|llm] [--config LLM_CONFIG]

`--set` takes another generated set, e.g. claims_eval_blind.jsonl (from phrasings_blind.yaml, written
without reading the extractor; all of it held out: score it without --misses).

Each sentence is checked with agents.claims.check_text against its spectrum, in a context that
holds the pipeline z for galaxies and QSOs and no z for stars (with the pipeline class STAR). A
sentence's verdict: contradicted if any of its claims is, else supported if any is, else
unverifiable. Reported per survey (the folds of a leave-one-survey-out split: the checker has no
parameter fitted on this set, so a survey's figures are its out-of-fold figures) and per claim kind:
  P(contra), R(contra): precision / recall of "contradicted" for the false sentences;
  P(supp), R(supp):     the same of "supported" for the true sentences;
  flagged:              true sentences judged contradicted (the false-flag rate).
`--subset dev` scores the spectra and phrasings used while the checker was improved; `holdout` the
spectra (one in three, by a hash of the file name) and phrasings (`holdout: true`) kept apart.

`--extractor llm`: each sentence's claims are the patterns' and, beside them, those a chat model finds
that the patterns missed (reviewer.services.claims.LLMExtractor, as `specreview claims --backend
openai`: the model only extracts, the same checker judges). The model is the agents.llm config's
(`--config`, or SPECREVIEW_LLM_BASE_URL / _MODEL / _API_KEY); its requests run `concurrency` at a time.
A sentence whose reply is unusable is judged on the patterns' claims alone and counted.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "tests"))

from shared_data import spectra_dir  # noqa: E402

from agents.claims import Context, Measurer, check_text  # noqa: E402
from agents.spectra import read_spectrum  # noqa: E402

HERE = Path(__file__).resolve().parent


def verdict(results) -> str:
    vs = [r.verdict for r in results]
    return "contradicted" if "contradicted" in vs else "supported" if "supported" in vs else "unverifiable"


def model_claims(rows: list[dict], config: str | None) -> tuple[dict[str, list], list[str], str]:
    """({sentence: the patterns' and the model's claims}, [problems], model name) of every sentence."""
    from concurrent.futures import ThreadPoolExecutor

    from agents.llm import load_config
    from reviewer.services.claims import LLMExtractor

    cfg = load_config(config)
    extractor = LLMExtractor(cfg)
    texts = list(dict.fromkeys(r["text"] for r in rows))

    def one(text):
        try:
            return text, extractor.claims_of(text), None
        except Exception as exc:  # an unusable reply, a failed call: that sentence keeps the patterns' claims
            return text, None, f"{type(exc).__name__}: {exc}"

    claims, problems = {}, []
    with ThreadPoolExecutor(max(1, cfg.concurrency)) as pool:
        for text, found, problem in pool.map(one, texts):
            if found is not None:
                claims[text] = found
            else:
                problems.append(problem)
    return claims, problems, cfg.model


def judge(rows: list[dict], claims: dict[str, list] | None = None) -> list[tuple[dict, str, list]]:
    base = spectra_dir()
    out, measurers = [], {}
    for r in rows:
        if r["file"] not in measurers:
            path, _, target = r["file"].partition("#")
            spec = read_spectrum(base / path, target or None)
            measurers[r["file"]] = (Measurer.from_spectrum(spec), spec.meta.get("pipeline_class"))
        m, pclass = measurers[r["file"]]
        ctx = Context(m, z=r["context_z"], z_source="pipeline" if r["context_z"] is not None else "unknown",
                      object_class=r["class"] if r["class"] == "STAR" else pclass)
        res = check_text(r["text"], ctx, (claims or {}).get(r["text"]))
        out.append((r, verdict(res), res))
    return out


def figures(judged) -> dict:
    false = [v for r, v, _ in judged if not r["truth"]]
    true = [v for r, v, _ in judged if r["truth"]]
    flagged_false = sum(v == "contradicted" for v in false)
    flagged_true = sum(v == "contradicted" for v in true)
    supp_true = sum(v == "supported" for v in true)
    supp_false = sum(v == "supported" for v in false)

    def div(a, b):
        return a / b if b else float("nan")

    return {"n": len(judged), "n_false": len(false), "spectra": len({r["file"] for r, _, _ in judged}),
            "p_contra": div(flagged_false, flagged_false + flagged_true), "r_contra": div(flagged_false, len(false)),
            "p_supp": div(supp_true, supp_true + supp_false), "r_supp": div(supp_true, len(true)),
            "flag_rate": div(flagged_true, len(true))}


def table(groups: dict, markdown: bool) -> str:
    head = ["group", "sentences (false)", "spectra", "P contra", "R contra", "P supp", "R supp", "true flagged"]
    lines = []
    if markdown:
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for k, f in groups.items():
        cells = [k, f"{f['n']} ({f['n_false']})", str(f["spectra"]), f"{f['p_contra']:.3f}", f"{f['r_contra']:.3f}",
                 f"{f['p_supp']:.3f}", f"{f['r_supp']:.3f}", f"{100 * f['flag_rate']:.1f} %"]
        lines.append(("| " + " | ".join(cells) + " |") if markdown else "  ".join(f"{c:>14}" for c in cells))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", type=Path, default=HERE / "claims_eval.jsonl")
    ap.add_argument("--subset", choices=("all", "dev", "holdout"), default="all")
    ap.add_argument("--misses", type=int, default=0, help="print up to N wrong verdicts")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--extractor", choices=("patterns", "llm"), default="patterns")
    ap.add_argument("--config", default=None, help="the LLM config file (agents.llm) for --extractor llm")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    if spectra_dir() is None:
        sys.exit("shared/data/spectra not found (set SPECREVIEW_SHARED_DATA)")
    rows = [json.loads(line) for line in args.set.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.subset == "dev":
        rows = [r for r in rows if not r["holdout_spectrum"] and not r["holdout_phrasing"]]
    elif args.subset == "holdout":
        rows = [r for r in rows if r["holdout_spectrum"] or r["holdout_phrasing"]]
    t0 = time.perf_counter()
    claims, extractor = None, "patterns"
    if args.extractor == "llm":
        claims, problems, model = model_claims(rows, args.config)
        extractor = f"patterns+llm:{model}"
        print(f"model replies: {len(claims)} used, {len(problems)} unusable (those sentences: patterns only)")
        for problem in problems[:5]:
            print(f"  {problem[:300]}")
    judged = judge(rows, claims)
    secs = time.perf_counter() - t0
    by_survey, by_kind = defaultdict(list), defaultdict(list)
    for item in judged:
        by_survey[item[0]["survey"]].append(item)
        by_kind[item[0]["kind"]].append(item)
    print(f"subset {args.subset}: {len(judged)} sentences, extractor {extractor}, {secs:.1f} s")
    print("per survey (leave-one-survey-out folds):")
    print(table({k: figures(v) for k, v in sorted(by_survey.items())} | {"all": figures(judged)}, args.markdown))
    print("per claim kind:")
    print(table({k: figures(v) for k, v in sorted(by_kind.items())}, args.markdown))
    wrong = [(r, v, res) for r, v, res in judged
             if (r["truth"] and v != "supported") or (not r["truth"] and v != "contradicted")]
    for r, v, res in wrong[: args.misses]:
        print(f"- [{r['survey']} {r['class']} {r['kind']} truth={r['truth']}] {v}: {r['text']!r} ({r['fact']}) "
              f"{r['file']}")
        for x in res:
            print(f"    {x.claim.kind}/{x.claim.quantity}/{x.claim.lines} {x.verdict}: {x.reason}")


if __name__ == "__main__":
    main()
