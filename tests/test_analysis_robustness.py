"""The robustness card's figures against an implementation written here, on data with a known
answer; a bag-of-words metric is blind to swaps, an order-aware toy is not."""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter

import numpy as np
import pytest

from scoring.analysis.robustness import (
    GroupSums,
    ProbeTable,
    bootstrap_figure,
    group_counts,
    group_r_precision,
    group_spearman,
    robustness_card,
)


def table(rows: list[tuple[int, str, int, float]]) -> ProbeTable:
    return ProbeTable(
        groups=np.asarray([r[0] for r in rows], dtype=np.int64),
        kinds=tuple(r[1] for r in rows),
        swaps=np.asarray([r[2] for r in rows], dtype=np.int64),
        scores=np.asarray([r[3] for r in rows], dtype=np.float64),
    )


# Written out by hand: two groups.
KNOWN = table(
    [
        # group 1: swap 0.4 against controls 0.9 and 0.4 -> wins 1 + 0.5 of 2; number 0.95 vs both -> 0 of 2
        (1, "paws_swap", -1, 0.4),
        (1, "number", -1, 0.95),
        (1, "control", -1, 0.9),
        (1, "control", -1, 0.4),
        # ranking in the right order: Spearman 1, R-Precision 1
        (1, "original", 0, 0.8),
        (1, "multi_swap", 1, 0.7),
        (1, "multi_swap", 2, 0.6),
        (1, "multi_swap", 3, 0.5),
        (1, "reversed", -1, 0.6),
        (1, "padded", -1, 0.5),
        # group 2: swap 0.1 vs control 0.9 -> 1 of 1
        (2, "paws_swap", -1, 0.1),
        (2, "control", -1, 0.9),
        # ranking reversed: Spearman -1, R-Precision 0
        (2, "original", 0, 0.1),
        (2, "multi_swap", 1, 0.2),
        (2, "multi_swap", 2, 0.3),
        (2, "multi_swap", 3, 0.4),
        (2, "reversed", -1, 0.4),
        (2, "padded", -1, 0.3),
        # an unscored probe is left out
        (2, "paws_swap", -1, math.nan),
    ]
)


def test_card_on_known_data_gives_the_hand_computed_figures() -> None:
    card = robustness_card(KNOWN, resamples=0)
    shares = {row.kind: row.share for row in card.below_control}
    assert shares["paws_swap"].value == pytest.approx((1.5 + 1) / 3)
    assert shares["paws_swap"].groups == 2
    assert shares["paws_swap"].comparisons == 3
    assert shares["number"].value == 0.0
    assert shares["date"].value is None and shares["date"].groups == 0
    assert card.swap_spearman.value == pytest.approx(0.0)  # (1 + -1) / 2
    assert card.swap_r_precision.value == pytest.approx(0.5)
    assert card.asymmetry.value == pytest.approx((0.2 + 0.3) / 2)
    assert card.length_effect.value == pytest.approx((-0.3 + 0.2) / 2)
    assert card.scale == pytest.approx(np.std([0.8, 0.1], ddof=1))


def spearman_by_hand(swaps: list[int], scores: list[float]) -> float:
    """Spearman as the Pearson correlation of mid-ranks, written out."""

    def midranks(values: list[float]) -> list[float]:
        ordered = sorted(values)
        return [sum(i + 1 for i, v in enumerate(ordered) if v == x) / ordered.count(x) for x in values]

    a, b = midranks([-s for s in swaps]), midranks(scores)
    if len(set(b)) == 1:
        return 0.0
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b, strict=True))
    return cov / math.sqrt(sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b))


def r_precision_by_hand(swaps: list[int], scores: list[float]) -> float:
    """The mean precision at R over every order of the tied scores (brute force)."""
    relevant = [s == min(swaps) for s in swaps]
    r = sum(relevant)
    values = []
    for order in itertools.permutations(range(len(scores))):
        ranked = sorted(order, key=lambda i: -scores[i])  # stable: ties keep the permutation's order
        values.append(sum(relevant[i] for i in ranked[:r]) / r)
    return sum(values) / len(values)


@pytest.mark.parametrize(
    "scores",
    [
        [0.9, 0.8, 0.7, 0.6],
        [0.6, 0.7, 0.8, 0.9],
        [0.5, 0.5, 0.5, 0.5],
        [0.9, 0.9, 0.1, 0.2],
        [0.3, 0.9, 0.9, 0.9],
        [0.2, 0.8, 0.2, 0.1],
    ],
)
def test_group_ranking_measures_equal_the_hand_written_ones(scores: list[float]) -> None:
    swaps = [0, 1, 2, 3]
    assert group_spearman(np.asarray(swaps), np.asarray(scores)) == pytest.approx(spearman_by_hand(swaps, scores))
    assert group_r_precision(np.asarray(swaps), np.asarray(scores)) == pytest.approx(r_precision_by_hand(swaps, scores))


def test_random_data_figures_and_intervals_equal_a_loop_over_groups() -> None:
    rng = np.random.default_rng(7)
    rows: list[tuple[int, str, int, float]] = []
    for group in range(40):
        rows += [(group, "control", -1, float(rng.random())) for _ in range(int(rng.integers(1, 4)))]
        rows += [(group, "paws_swap", -1, float(rng.random())) for _ in range(int(rng.integers(0, 3)))]
        rows += [(group, "original", 0, float(rng.random()))]
        rows += [(group, "multi_swap", k, float(rng.random())) for k in (1, 2, 3)]
        rows += [(group, "reversed", -1, float(rng.random())), (group, "padded", -1, float(rng.random()))]
    data = table(rows)
    card = robustness_card(data, kinds=("paws_swap",), resamples=300, seed=11)

    # Independent: per-group sums by plain loops over the rows.
    wins: dict[int, list[float]] = {}
    for g in range(40):
        probes = [r[3] for r in rows if r[0] == g and r[1] == "paws_swap"]
        controls = [r[3] for r in rows if r[0] == g and r[1] == "control"]
        if probes:
            pairs = [(p, c) for p in probes for c in controls]
            wins[g] = [sum(1.0 if p < c else 0.5 if p == c else 0.0 for p, c in pairs), len(pairs)]
    share = sum(w for w, _ in wins.values()) / sum(n for _, n in wins.values())
    assert card.below_control[0].share.value == pytest.approx(share)
    assert card.below_control[0].share.groups == len(wins)

    originals = {r[0]: r[3] for r in rows if r[1] == "original"}
    reversed_ = {r[0]: r[3] for r in rows if r[1] == "reversed"}
    asymmetries = [abs(originals[g] - reversed_[g]) for g in range(40)]
    assert card.asymmetry.value == pytest.approx(sum(asymmetries) / 40)

    # The interval: the same draws of groups, each resample's figure by a loop.
    counts = group_counts(40, 300, 11)
    estimates = sorted(sum(c * a for c, a in zip(row, asymmetries, strict=True)) / sum(row) for row in counts)
    low = np.percentile(estimates, 2.5)
    high = np.percentile(estimates, 97.5)
    assert card.asymmetry.interval is not None
    assert (card.asymmetry.interval.low, card.asymmetry.interval.high) == pytest.approx((low, high))
    assert card.asymmetry.interval.low < card.asymmetry.value < card.asymmetry.interval.high


def test_interval_resamples_groups_not_pairs() -> None:
    # One group holds 100 comparisons all won, nine hold one comparison each, all lost: resampling
    # groups makes the interval span almost [0, 1]; resampling comparisons would make it narrow.
    sums = GroupSums(np.asarray([100.0] + [0.0] * 9), np.asarray([100.0] + [1.0] * 9), 109)
    figure = bootstrap_figure(sums, resamples=500, seed=3)
    assert figure.value == pytest.approx(100 / 109)
    assert figure.interval is not None
    assert figure.interval.low == 0.0
    assert figure.interval.high > 0.95


# --- Two toy metrics on probes built by the real parser --------------------------------------

SENTENCES = [
    "Flights from Boston to Denver were cancelled by the small airline after the long strike.",
    "The angry mayor criticised the new plan, and the committee approved the large budget.",
    "Microsoft bought the young startup from Google and sold the old servers to Amazon.",
    "The strict teacher gave the lazy students a difficult test and graded the essays.",
    "Police arrested the drunk driver after the accident and questioned the frightened witness.",
    "The bank lent money to the poor farmers while the new government cut the high taxes.",
    "Smith told Jones that the annual report would be published in June and printed in July.",
    "The black dog chased the white cat across the garden and into the house.",
]


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def bag_of_words_cosine(a: str, b: str) -> float:
    """Cosine of word counts: blind to word order by construction."""
    ca, cb = Counter(words(a)), Counter(words(b))
    dot = sum(ca[w] * cb[w] for w in ca)
    return dot / math.sqrt(sum(v * v for v in ca.values()) * sum(v * v for v in cb.values()))


def bigram_overlap(a: str, b: str) -> float:
    """Share of b's word bigrams found in a: reads word order."""
    ba = Counter(zip(words(a), words(a)[1:], strict=False))
    bb = Counter(zip(words(b), words(b)[1:], strict=False))
    return sum((ba & bb).values()) / max(1, sum(bb.values()))


def probe_table(metric) -> ProbeTable:  # type: ignore[no-untyped-def]
    from scoring.probes.build import BUILDABLE, SourcePair, build_probes
    from scoring.probes.parse import parse_pairs

    pairs = [SourcePair(str(i), s, s, True) for i, s in enumerate(SENTENCES)]
    probes = build_probes(parse_pairs(pairs), BUILDABLE, seed=5)
    assert sum(p.kind == "paws_swap" for p in probes) == len(SENTENCES)
    assert sum(p.kind == "multi_swap" for p in probes) >= 3 * 4
    return ProbeTable(
        groups=np.asarray([int(p.group) for p in probes]),
        kinds=tuple(p.kind.value for p in probes),
        swaps=np.asarray([-1 if p.swaps is None else p.swaps for p in probes]),
        scores=np.asarray([metric(p.source, p.hypothesis) for p in probes]),
    )


def test_a_bag_of_words_metric_scores_the_swap_share_one_half() -> None:
    card = robustness_card(probe_table(bag_of_words_cosine), kinds=("paws_swap",), resamples=0)
    assert card.below_control[0].share.value == pytest.approx(0.5)
    assert card.swap_spearman.value == pytest.approx(0.0)  # every member of a group scores 1


def test_an_order_aware_metric_scores_the_swap_share_high() -> None:
    card = robustness_card(probe_table(bigram_overlap), kinds=("paws_swap",), resamples=0)
    assert card.below_control[0].share.value > 0.9
    assert card.swap_spearman.value > 0.9
