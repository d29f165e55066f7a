"""How often each probe kind can be built from real sentences, and how fast: MRPC test.

Reads the MRPC test pairs (``--data``; tab-separated, BOM, unbalanced quotes read as text),
parses both sentences of every pair with the spaCy pipeline and builds every probe kind.
Prints, per kind, the share of source pairs that yield it (the generation rate), the probes
built, and the time of building against the time of parsing (the reference, same run). With
``--sample N`` it writes N random probes of each kind to ``--sample-file`` for a hand check; with
``--card lev,bleu,...`` it scores every probe with those metrics here (no campaign, no worker)
and prints their robustness cards.

    .venv/bin/python benchmarks/record.py probes -- .venv/bin/python benchmarks/probes.py --card lev,bleu,meteor
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from scoring.analysis.robustness import Figure, ProbeTable, robustness_card  # noqa: E402
from scoring.probes.build import BUILDABLE, Probe, ProbeKind, SourcePair, build_probes  # noqa: E402
from scoring.probes.parse import parse_pairs, pipeline, pipeline_signature  # noqa: E402

DEFAULT_DATA = (
    Path(os.environ.get("PARAEVAL_SHARED_DATA") or ROOT.parent / "shared" / "data") / "mrpc" / "msr_paraphrase_test.txt"
)


def read_mrpc(path: Path) -> list[SourcePair]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))[1:]
    return [SourcePair(f"{r[1]}-{r[2]}", r[3], r[4], r[0] == "1") for r in rows]


def _figure(figure: Figure) -> str:
    if figure.value is None:
        return "—"
    interval = f" [{figure.interval.low:.3f}, {figure.interval.high:.3f}]" if figure.interval else ""
    return f"{figure.value:.3f}{interval}"


def print_cards(probes: list[Probe], names: list[str], args: argparse.Namespace) -> None:
    """Each metric's card on the probes, scored here directly (no campaign, no worker)."""
    from scoring.metrics.registry import build_metric

    codes: dict[str, int] = {}
    groups = np.asarray([codes.setdefault(p.group, len(codes)) for p in probes], dtype=np.int64)
    kinds = tuple(p.kind.value for p in probes)
    swaps = np.asarray([-1 if p.swaps is None else p.swaps for p in probes], dtype=np.int64)
    print(f"robustness cards, {args.resamples} resamples of {len(codes)} source pairs (95 % intervals)")
    for name in names:
        metric = build_metric(name)
        started = time.perf_counter()
        values = np.asarray(metric.score_batch([(p.source, p.hypothesis) for p in probes]), dtype=np.float64)
        seconds = time.perf_counter() - started
        card = robustness_card(
            ProbeTable(groups, kinds, swaps, values if metric.higher_is_closer else -values),
            resamples=args.resamples,
            seed=args.seed,
        )
        print(f"{metric.label} (scored in {seconds:.1f} s)")
        for row in card.below_control:
            print(f"  {row.kind} below control: {_figure(row.share)}")
        print(f"  multi-swap Spearman: {_figure(card.swap_spearman)}")
        print(f"  multi-swap R-Precision: {_figure(card.swap_r_precision)}")
        scale = "" if card.scale is None else f" (SD on the original pairs {card.scale:.3f})"
        print(f"  asymmetry: {_figure(card.asymmetry)}{scale}")
        print(f"  length effect: {_figure(card.length_effect)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--seed", type=int, default=20250101)
    parser.add_argument("--sample", type=int, default=0)
    parser.add_argument("--sample-file", type=Path, default=Path("/tmp/probes-sample.txt"))
    parser.add_argument(
        "--card", default="", help="Comma-separated metric names: print their robustness card on these probes."
    )
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    pairs = read_mrpc(args.data)
    pipeline()
    started = time.perf_counter()
    parsed = parse_pairs(pairs)
    parse_seconds = time.perf_counter() - started
    started = time.perf_counter()
    probes = build_probes(parsed, BUILDABLE, args.seed)
    build_seconds = time.perf_counter() - started
    groups: dict[str, set[str]] = {}
    for probe in probes:
        groups.setdefault(probe.kind, set()).add(probe.group)
    counts = Counter(probe.kind for probe in probes)
    positives = sum(pair.label is True for pair in pairs)
    print(f"{args.data.name}: {len(pairs)} pairs ({positives} paraphrases), seed {args.seed}; {pipeline_signature()}")
    print(f"{'kind':<12} {'pairs yielding it':>18} {'rate':>7} {'probes':>7}")
    for kind in (*BUILDABLE, ProbeKind.CONTROL):
        # Multi-swap groups are built from paraphrases only (paper 004): its rate is over those.
        base = positives if kind == ProbeKind.MULTI_SWAP else len(pairs)
        yielded = len(groups.get(kind, ()))
        print(f"{kind.value:<12} {yielded:>10} / {base:<6} {yielded / base:>7.1%} {counts[kind]:>7}")
    print(f"parsing {2 * len(pairs)} sentences: {parse_seconds:.2f} s (reference)")
    print(f"building {len(probes)} probes: {build_seconds:.2f} s = {build_seconds / parse_seconds:.3f} x parsing")
    if args.card:
        print_cards(probes, [name.strip() for name in args.card.split(",") if name.strip()], args)
    if args.sample:
        rng = random.Random(args.seed)
        with args.sample_file.open("w") as out:
            for kind in (*BUILDABLE, ProbeKind.CONTROL):
                chosen = [p for p in probes if p.kind == kind]
                for probe in rng.sample(chosen, min(args.sample, len(chosen))):
                    out.write(
                        f"[{kind.value} {probe.swaps or ''} {probe.detail}]\n"
                        f"  S: {probe.source}\n  H: {probe.hypothesis}\n"
                    )
        print(f"sample of {args.sample} per kind written to {args.sample_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
