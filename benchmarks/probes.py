"""How often each probe kind can be built from real sentences, and how fast: MRPC test.

Reads the MRPC test pairs (``--data``; tab-separated, BOM, unbalanced quotes read as text),
parses both sentences of every pair with the spaCy pipeline and builds every probe kind.
Prints, per kind, the share of source pairs that yield it (the generation rate), the probes
built, and the time of building against the time of parsing (the reference, same run). With
``--sample N`` it writes N random probes of each kind to ``--sample-file`` for a hand check (JSON,
each probe with its id and empty verdicts to fill in); with ``--hand-check FILE`` it draws the same
sample, checks that the file's ids are those, and prints the verdicts written there (fluent, and
of the relation the probe was built to have) per kind. With ``--card lev,bleu,...`` it scores the
probes with those metrics here (no campaign, no worker) and prints their robustness cards; with
``--sources N`` the cards are computed on a seeded sample of N source pairs (the neural metrics
on CPU), said in the output. ``--judge FOLDER`` adds the card of a tuned judge (ParaPLUIE DIRECT on
its bundle; MRPC test's sources are not MRPC train's, so a judge tuned there never saw them) and
the embedded base's beside it.

    .venv/bin/python benchmarks/record.py probes -- .venv/bin/python benchmarks/probes.py --card lev,bleu,meteor \
        --hand-check benchmarks/probes-hand-check.json
    .venv/bin/python benchmarks/record.py probes-cards -- .venv/bin/python benchmarks/probes.py --sources 300 \
        --card lev,bleu,meteor,bertscore,sbert,parascore,parapluie_direct
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

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


def build_metrics(names: list[str], args: argparse.Namespace) -> list[Any]:
    """The metrics named, then ParaPLUIE DIRECT on each ``--judge`` folder (a tuned judge's bundle)
    and on the embedded base beside it, on ``--device``."""
    from scoring.metrics.parapluie import ParaPluie
    from scoring.metrics.registry import build_metric

    metrics = [build_metric(name) for name in names]
    common = {"device": args.device, "batch_size": args.batch_size, "allow_download": False, "template_dirs": []}
    for index, folder in enumerate(args.judge):
        if index == 0 and "parapluie_direct" not in names:
            metrics.append(ParaPluie("direct", model="embedded", **common))
        metrics.append(ParaPluie("direct", model=str(folder), **common))
    return metrics


def print_cards(probes: list[Probe], names: list[str], args: argparse.Namespace) -> None:
    """Each metric's card on the probes, scored here directly (no campaign, no worker)."""
    codes: dict[str, int] = {}
    groups = np.asarray([codes.setdefault(p.group, len(codes)) for p in probes], dtype=np.int64)
    kinds = tuple(p.kind.value for p in probes)
    swaps = np.asarray([-1 if p.swaps is None else p.swaps for p in probes], dtype=np.int64)
    print(f"robustness cards, {args.resamples} resamples of {len(codes)} source pairs (95 % intervals)")
    for metric in build_metrics(names, args):
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


HAND_CHECK = ROOT / "benchmarks" / "probes-hand-check.json"
SAMPLED_KINDS = (*BUILDABLE, ProbeKind.CONTROL)


def probe_ids(probes: list[Probe]) -> list[str]:
    """A stable id per probe: its kind, its source pair's MRPC ids, its rank among that pair's probes of that kind."""
    seen: Counter[tuple[str, str]] = Counter()
    ids = []
    for probe in probes:
        seen[(probe.kind.value, probe.group)] += 1
        ids.append(f"{probe.kind.value}:{probe.group}:{seen[(probe.kind.value, probe.group)]}")
    return ids


def hand_sample(probes: list[Probe], size: int, seed: int) -> list[tuple[str, Probe]]:
    """``size`` probes of each kind drawn with the seed (one generator, the kinds in order)."""
    rng = random.Random(seed)
    identified = list(zip(probe_ids(probes), probes, strict=True))
    chosen: list[tuple[str, Probe]] = []
    for kind in SAMPLED_KINDS:
        of_kind = [item for item in identified if item[1].kind == kind]
        chosen += rng.sample(of_kind, min(size, len(of_kind)))
    return chosen


def write_sample(probes: list[Probe], size: int, seed: int, path: Path) -> None:
    rows = [
        {
            "id": pid,
            "kind": p.kind.value,
            "detail": p.detail,
            "source": p.source,
            "hypothesis": p.hypothesis,
            "fluent": None,
            "relation": None,
        }
        for pid, p in hand_sample(probes, size, seed)
    ]
    path.write_text(json.dumps({"seed": seed, "per_kind": size, "probes": rows}, indent=1) + "\n")


def print_hand_check(probes: list[Probe], path: Path) -> None:
    """The verdicts of a hand check, after checking its ids are the sample this run draws."""
    data = json.loads(path.read_text())
    rows = data["probes"]
    drawn = [pid for pid, _ in hand_sample(probes, int(data["per_kind"]), int(data["seed"]))]
    if [row["id"] for row in rows] != drawn:
        raise SystemExit(f"{path}: its probe ids are not the sample drawn with seed {data['seed']}: draw it again")
    if any(row["fluent"] is None or row["relation"] is None for row in rows):
        raise SystemExit(f"{path}: some probes have no verdict yet")
    print(
        f"hand check ({path.name}): {data['per_kind']} probes of each kind drawn with seed {data['seed']}, read by "
        "one person; fluent: correct English as written; relation: the one the probe was built to have "
        "(a non-paraphrase for swaps and changes, a paraphrase for controls, padded and reversed)"
    )
    print(f"{'kind':<12} {'fluent':>8} {'relation':>9} {'both':>6}")
    for kind in SAMPLED_KINDS:
        of_kind = [row for row in rows if row["kind"] == kind.value]
        fluent = sum(bool(row["fluent"]) for row in of_kind)
        relation = sum(bool(row["relation"]) for row in of_kind)
        both = sum(bool(row["fluent"]) and bool(row["relation"]) for row in of_kind)
        print(f"{kind.value:<12} {fluent:>4} / {len(of_kind):<2} {relation:>4} / {len(of_kind):<2} {both:>3}")
    for kind, note in data.get("notes", {}).items():
        print(f"  {kind}: {note}")


def main() -> int:
    # The model loaders' progress bars would land in the recorded output (stderr is kept with it).
    os.environ.setdefault("TQDM_DISABLE", "1")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--seed", type=int, default=20250101)
    parser.add_argument("--sample", type=int, default=0)
    parser.add_argument("--sample-file", type=Path, default=Path("/tmp/probes-sample.json"))
    parser.add_argument("--hand-check", type=Path, help=f"Print the verdicts of a hand check (e.g. {HAND_CHECK.name}).")
    parser.add_argument("--sources", type=int, default=0, help="Cards on a seeded sample of this many source pairs.")
    parser.add_argument(
        "--card", default="", help="Comma-separated metric names: print their robustness card on these probes."
    )
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument(
        "--judge",
        type=Path,
        action="append",
        default=[],
        help="A tuned judge's folder: its card (ParaPLUIE DIRECT) and the embedded base's beside it.",
    )
    parser.add_argument("--device", default="cpu", help="Where ParaPLUIE runs for --judge (cuda on a GPU).")
    parser.add_argument("--batch-size", type=int, default=16, help="ParaPLUIE's batch for --judge.")
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
    if args.hand_check:
        print_hand_check(probes, args.hand_check)
    if args.card or args.judge:
        scored = probes
        if args.sources:
            chosen = set(random.Random(args.seed).sample([pair.key for pair in pairs], args.sources))
            scored = [probe for probe in probes if probe.group in chosen]
            print(
                f"cards on a seeded sample of {args.sources} of the {len(pairs)} source pairs "
                f"(random.Random({args.seed}).sample), {len(scored)} probes: the neural metrics run on CPU here"
            )
        print_cards(scored, [name.strip() for name in args.card.split(",") if name.strip()], args)
    if args.sample:
        write_sample(probes, args.sample, args.seed, args.sample_file)
        print(f"sample of {args.sample} per kind written to {args.sample_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
