"""Adaptive selection against the balanced order: judgements needed to reach the full campaign's
verdict, and the bias of the weighted figures, in simulated campaigns on real corpora.

Gold labels stand in for volunteers: MRPC test (binary gold), PIT-2015 test (expert grade: 4-5
paraphrase, 0-2 not, 3 left out) and STS-B test (score 3 or more: paraphrase; the graded score
for the correlations). Each simulated volunteer answers the gold label flipped with probability
ε, the share of PIT-2015 dev crowd votes that differ from their pair's majority (5 votes per
pair, measured here); the graded answer of STS-B is the gold score plus normal noise of the
spread between PIT's votes scaled to 0-5. One judge per pair.

Four cheap metrics score every pair: character Levenshtein similarity, smoothed sentence BLEU,
1 - WER and a bag-of-words cosine. The researcher's question: the ΔAUC of the two named metrics
(``--compared``) and the significance clusters of all four (WMT practice: a metric's rank is 1 +
the metrics significantly better; DeLong's test, Holm-adjusted, alpha = 0.05), as the
meta-evaluation computes them.

A simulated campaign draws the volunteers' noisy answers once; the balanced order is a random
permutation of the pool; the adaptive order is the planner's (scoring.analysis.selection: draw
weights from the norm of each pair's expected influence on the standardised ΔAUCs of all four
metrics, or of the two compared ones, floor 0.1; keys u / q). Two reference designs: the draw
used before (the spread of the rank-normalised scores, floor 0.1), and an oracle that knows the
campaign's labels before it starts (influences from the labels themselves: unattainable, it
shows what the best planned order could reach), and a *decisive* oracle that also knows which
comparisons end near their significance threshold (each ΔAUC's influences in units of the full
campaign's distance to the threshold that decides it, floor 0.02): the order aimed at the
verdict itself rather than at the precision of every ΔAUC. At every checkpoint (a 40th of the pool) the
verdict is computed from the pairs judged so far,
weighted by 1 / inclusion probability for the adaptive order (scoring.analysis.weighted, the
dashboard's estimators). *Judgements needed* is the first checkpoint from which the verdict
equals the full campaign's at every later checkpoint (same clusters, same sign and significance
of the compared ΔAUC). The saving is 1 - mean(adaptive) / mean(balanced), with a 95 % bootstrap
interval over the campaigns. The bias: at a quarter of the pool, the mean error of every
metric's AUC, Pearson and Spearman against the full pool's, in Monte-Carlo standard errors.
The bound: from each campaign's full-pool influences (its labels known), the number of judgements
with which Neyman's optimal Poisson design (π ∝ |influence|) matches the variance of a balanced
sample as large as the balanced order needs on average: no design-based selection can save more
at equal precision with the weighted (Hájek) estimators. A model-assisted (difference)
estimator could: it predicts every pair's influence from a model of the label, adds the weighted
sum of the residuals of the judged pairs, and stays design-unbiased. Its bound, with the most
favourable model at hand (a logistic regression of the campaign's own labels on the four
metrics and the SBERT cosine of the embedded encoder, fitted on the whole pool: better than any
model a campaign could fit), for three designs: the balanced order, the planned one (π ∝ the
expected size of the residual, which the model knows) and one that knows the residuals
themselves (unattainable).

    .venv/bin/python benchmarks/record.py adaptive_selection -- .venv/bin/python benchmarks/adaptive_selection.py
    .venv/bin/python benchmarks/adaptive_selection.py --campaigns 20   # a quick run
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

from scoring.analysis import selection, weighted  # noqa: E402
from scoring.analysis.paired import holm  # noqa: E402
from scoring.analysis.weighted import PairedDifference  # noqa: E402
from scoring.metrics.bleu import _sacrebleu  # noqa: E402
from scoring.metrics.lexical import normalised_char_distance, word_error_rate, words  # noqa: E402

DATA = Path(os.environ.get("PARAEVAL_SHARED_DATA") or ROOT.parent / "shared" / "data")
SEED = 20250101  # PARAEVAL_SEED's default
METRICS = ["levenshtein", "bleu", "wer", "bow_cosine"]
ALPHA = 0.05
CHECKPOINTS = 40
SPREAD_FLOOR = 0.1  # the floor of the spread draw used before
ORACLE = "oracle (labels known)"
DECISIVE = "oracle (decisive, known)"
# The decisive oracle draws with a lower floor than the planner: with the answers known, weights
# that vary more serve it better (0.02 saved more than 0.1 in trial runs on the three corpora).
DECISIVE_FLOOR = 0.02


@dataclass
class Corpus:
    name: str
    sources: list[str]
    hypotheses: list[str]
    gold: np.ndarray  # 1 paraphrase / 0 not
    graded: np.ndarray | None  # graded gold (STS-B) or None


def read_lines(path: Path, encoding: str = "utf-8") -> list[list[str]]:
    with path.open(encoding=encoding) as handle:
        return [line.rstrip("\n").split("\t") for line in handle if line.strip()]


def load_mrpc() -> Corpus:
    rows = read_lines(DATA / "mrpc" / "msr_paraphrase_test.txt", "utf-8-sig")[1:]
    return Corpus("MRPC test", [r[3] for r in rows], [r[4] for r in rows], np.array([int(r[0]) for r in rows]), None)


def load_pit() -> Corpus:
    rows = [r for r in read_lines(DATA / "pit2015" / "test.data") if int(r[4]) != 3]
    gold = np.array([1 if int(r[4]) >= 4 else 0 for r in rows])
    return Corpus("PIT-2015 test", [r[2] for r in rows], [r[3] for r in rows], gold, None)


def load_stsb() -> Corpus:
    rows = read_lines(DATA / "stsb" / "sts-test.csv")
    scores = np.array([float(r[4]) for r in rows])
    return Corpus("STS-B test", [r[5] for r in rows], [r[6] for r in rows], (scores >= 3).astype(int), scores)


def pit_noise() -> tuple[float, float, int]:
    """ε: the share of PIT-2015 dev votes against their pair's majority; and the spread of the
    votes (standard deviation of one vote's 0/1 answer around its pair's mean), for graded noise."""
    rows = read_lines(DATA / "pit2015" / "dev.data")
    votes = [tuple(int(x) for x in r[4].strip("()").split(",")) for r in rows]
    minority = sum(min(p, n) for p, n in votes)
    total = sum(p + n for p, n in votes)
    spread = math.sqrt(np.mean([(p / (p + n)) * (n / (p + n)) * (p + n) / (p + n - 1) for p, n in votes]))
    return minority / total, spread, len(votes)


def bow_cosine(a: str, b: str) -> float:
    ca, cb = Counter(w.lower() for w in words(a)), Counter(w.lower() for w in words(b))
    dot = sum(ca[w] * cb[w] for w in ca)
    norm = math.sqrt(sum(v * v for v in ca.values()) * sum(v * v for v in cb.values()))
    return dot / norm if norm else 0.0


def metric_scores(corpus: Corpus) -> np.ndarray:
    """Metrics x pairs, each oriented so that higher means closer in meaning."""
    bleu = _sacrebleu("13a", "exp", False)
    rows = [
        [1 - normalised_char_distance(s, h) for s, h in zip(corpus.sources, corpus.hypotheses, strict=True)],
        [bleu.sentence_score(h, [s]).score for s, h in zip(corpus.sources, corpus.hypotheses, strict=True)],
        [-word_error_rate(s, h) for s, h in zip(corpus.sources, corpus.hypotheses, strict=True)],
        [bow_cosine(s, h) for s, h in zip(corpus.sources, corpus.hypotheses, strict=True)],
    ]
    return np.array(rows, dtype=np.float64)


def probabilities(q: np.ndarray, keys: np.ndarray, order: np.ndarray, size: int) -> np.ndarray:
    """The inclusion probabilities of the first ``size`` pairs of the order, as the dashboard has them."""
    served = np.zeros(len(q), dtype=bool)
    served[order[:size]] = True
    return selection.inclusion_probabilities(q, keys, served)


def comparisons(
    scores: np.ndarray, labels: np.ndarray, w: np.ndarray
) -> list[tuple[int, int, PairedDifference]] | None:
    """The weighted DeLong test of every pair of metrics (a < b), or None without both classes."""
    positive = labels == 1
    parts = [weighted.weighted_components(row, positive, w) for row in scores]
    if any(part is None for part in parts):
        return None
    return [
        (a, b, weighted.weighted_delong(parts[a], parts[b]))  # type: ignore[arg-type]
        for a in range(len(parts))
        for b in range(a + 1, len(parts))
    ]


def verdict(scores: np.ndarray, labels: np.ndarray, w: np.ndarray, compared: tuple[int, int]) -> tuple:
    """(cluster rank of every metric, sign of the compared ΔAUC when significant else 0)."""
    tests = comparisons(scores, labels, w)
    if tests is None:
        return ("undefined",)
    adjusted = holm([t[2].p_value for t in tests])
    better = [0] * len(scores)
    sign = 0
    for (a, b, test), p in zip(tests, adjusted, strict=True):
        if p is not None and p < ALPHA and test.difference != 0:
            better[b if test.difference > 0 else a] += 1
        if {a, b} == set(compared) and test.p_value < ALPHA:
            sign = int(np.sign(test.difference)) * (1 if a == compared[0] else -1)
    return (tuple(1 + x for x in better), sign)


def decisive_size(
    scores: np.ndarray, labels: np.ndarray, compared: tuple[int, int], influences: selection.Influences
) -> np.ndarray:
    """Per pair, the norm of its influences on the six ΔAUCs, each in units of the distance of the
    full campaign's test statistic to the threshold that decides it (Holm's critical value of its
    rank for the clusters, 1.96 as well for the compared ΔAUC; at least a quarter of a standard
    error): how much each comparison needs a judgement before its verdict is settled. Known only
    once the campaign is over. ``influences``: the six ΔAUCs' standardised influences with these
    labels."""
    tests = comparisons(scores, labels, np.ones(len(labels)))
    assert tests is not None
    z = np.array([abs(t.difference) / t.standard_error if t.standard_error > 0 else np.inf for _, _, t in tests])
    critical = np.empty(len(tests))
    for rank, k in enumerate(np.argsort([test.p_value for _, _, test in tests])):
        critical[k] = stats.norm.isf(ALPHA / (2 * (len(tests) - rank)))
    distance = np.abs(z - critical)
    for k, (a, b, _) in enumerate(tests):
        if {a, b} == set(compared):
            distance[k] = min(distance[k], abs(z[k] - stats.norm.isf(ALPHA / 2)))
    distance = np.maximum(np.nan_to_num(distance, posinf=1e6), 0.25)
    realised = np.where(labels == 1, influences.positive, influences.negative)
    return np.sqrt(np.sum((realised / distance[:, None]) ** 2, axis=0))


def needed(verdicts: list[tuple], full: tuple, sizes: list[int]) -> int:
    """The first checkpoint from which every verdict equals the full campaign's."""
    at = len(sizes) - 1
    while at > 0 and verdicts[at - 1] == full:
        at -= 1
    return sizes[at]


def figures(scores: np.ndarray, labels: np.ndarray, graded: np.ndarray, w: np.ndarray) -> np.ndarray:
    """AUC, Pearson and Spearman of every metric (weighted), flattened."""
    out = []
    for row in scores:
        out.append(weighted.hajek_auc(row, labels == 1, w))
        out.append(weighted.weighted_pearson(row, graded, w))
        out.append(weighted.weighted_spearman(row, graded, w))
    return np.array([np.nan if x is None else x for x in out])


def neyman_probabilities(size: np.ndarray, n: float) -> np.ndarray:
    """The inclusion probabilities π ∝ ``size`` (capped at 1) with Σ π = n."""
    pi = np.zeros(len(size))
    capped = np.zeros(len(size), dtype=bool)
    while True:
        rest = size[~capped]
        pi[~capped] = (n - np.count_nonzero(capped)) * rest / rest.sum() if rest.sum() > 0 else 0.0
        pi[capped] = 1.0
        over = pi >= 1
        if not np.any(over & ~capped):
            return pi
        capped |= over


def poisson_needed(size: np.ndarray, squares: np.ndarray, target: float, at_most: int | None = None) -> int:
    """The smallest n (at most ``at_most``, default the pool) at which the Poisson design
    π ∝ ``size`` (capped at 1) brings Σ (1/π - 1) ``squares`` down to ``target``."""
    low, high = 0, len(size) if at_most is None else at_most
    while high - low > 1:
        middle = (low + high) // 2
        if float(np.sum((1 / np.maximum(neyman_probabilities(size, middle), 1e-12) - 1) * squares)) <= target:
            high = middle
        else:
            low = middle
    return high


def neyman_needed(size: np.ndarray, balanced: int) -> int:
    """The smallest n at which Neyman's design (π ∝ |z|) is as precise as a simple random sample of
    ``balanced`` (variance Σ (1/f - 1) z², f = balanced / N): the least any Poisson design could need."""
    target = (len(size) / balanced - 1) * float(np.sum(size**2))
    return poisson_needed(size, size**2, target, at_most=balanced)


def sbert_cosine(corpus: Corpus) -> np.ndarray:
    """The SBERT cosine of every pair (the embedded all-MiniLM-L6-v2, as the metric computes it)."""
    from scoring.metrics.sbert import SbertCosine

    return np.array(SbertCosine().score_batch(list(zip(corpus.sources, corpus.hypotheses, strict=True))))


def label_model(features: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Each pair's probability of being a paraphrase, from a logistic regression of ``labels`` on
    the rank-normalised ``features`` and their squares, fitted on the whole pool."""
    from sklearn.linear_model import LogisticRegression

    ranks = np.array([selection.rank_normalise(row) for row in features]).T
    design = np.column_stack([ranks, ranks**2])
    model = LogisticRegression(C=1e4, max_iter=1000).fit(design, labels)
    return np.clip(model.predict_proba(design)[:, 1], 1e-3, 1 - 1e-3)


def model_assisted_needed(
    influences: selection.Influences, labels: np.ndarray, model: np.ndarray, balanced: int
) -> dict[str, int]:
    """Judgements the difference estimator needs to match the variance of a balanced sample of
    ``balanced`` judgements with the plain estimator, for three designs.

    ``influences`` are the full pool's with its realised ``labels``; ``model`` the model's
    probability of a paraphrase per pair. The estimator adds to the sum of
    the predicted influences ``p u_pos + (1 - p) u_neg`` of every pair the weighted sum of the
    judged pairs' residuals; its variance under a Poisson design is Σ (1/π - 1) residual².
    """
    realised = np.where(labels == 1, influences.positive, influences.negative)  # comparisons x pairs
    predicted = model * influences.positive + (1 - model) * influences.negative
    residual = realised - predicted
    n = len(labels)

    def centred_squares(values: np.ndarray) -> float:
        return float(np.sum((values - values.mean(axis=1, keepdims=True)) ** 2))

    # A simple random sample of n has variance (N/n - 1) Σ (z - z̄)²: the balanced order's with
    # the plain estimator sets the target, and with the difference estimator z is the residual.
    target = (n / balanced - 1) * centred_squares(realised)
    spread = centred_squares(residual)
    squares = np.sum(residual**2, axis=0)
    expected = np.sqrt(model * (1 - model)) * np.linalg.norm(influences.positive - influences.negative, axis=0)
    return {
        "balanced order": math.ceil(n * spread / (target + spread)),
        "planned (π ∝ expected residual)": poisson_needed(expected, squares, target),
        "knowing the residuals": poisson_needed(np.sqrt(squares), squares, target),
    }


def bootstrap_saving(bal: np.ndarray, ada: np.ndarray, rng: np.random.Generator) -> tuple[float, float, float]:
    saving = 1 - ada.mean() / bal.mean()
    draws = []
    for _ in range(2000):
        pick = rng.integers(0, len(bal), len(bal))
        draws.append(1 - ada[pick].mean() / bal[pick].mean())
    low, high = np.percentile(draws, [2.5, 97.5])
    return float(saving), float(low), float(high)


def run_corpus(corpus: Corpus, args: argparse.Namespace, noise: float, graded_noise: float) -> None:
    started = time.perf_counter()
    scores = metric_scores(corpus)
    n = len(corpus.gold)
    compared = (METRICS.index(args.compared[0]), METRICS.index(args.compared[1]))
    # The planner's draw (scoring.selection): the norm of each pair's expected influence on the
    # compared ΔAUCs (all six, or the compared one), floor --floor.
    q_all = selection.draw_weights(selection.expected_influence(scores), args.floor)
    q_two = selection.draw_weights(selection.expected_influence(scores[list(compared)]), args.floor)
    # The draw used before: the spread of the rank-normalised scores, floor 0.1.
    s_all = selection.draw_weights(selection.disagreement(scores), SPREAD_FLOOR)
    s_two = selection.draw_weights(selection.disagreement(scores[list(compared)]), SPREAD_FLOOR)
    step = math.ceil(n / CHECKPOINTS)
    sizes = [min(n, step * k) for k in range(1, CHECKPOINTS + 1)]
    rng = np.random.default_rng([SEED, len(corpus.name), n])
    decisive_rng = np.random.default_rng([SEED, len(corpus.name), n, 1])
    designs: dict[str, np.ndarray | str | None] = {
        "balanced": None,
        "adaptive (all 4 metrics)": q_all,
        "adaptive (2 compared)": q_two,
        "spread (all 4; before)": s_all,
        "spread (2; before)": s_two,
        ORACLE: ORACLE,
        DECISIVE: DECISIVE,
    }
    counts: dict[str, list[int]] = {name: [] for name in designs}
    delta_counts: dict[str, list[int]] = {name: [] for name in designs}  # the compared ΔAUC's verdict alone
    bias_size = n // 4
    errors: dict[str, list[np.ndarray]] = {name: [] for name in designs}
    errors["adaptive (all 4 metrics), unweighted"] = []
    full_significant = 0
    oracle_sizes: dict[str, list[np.ndarray]] = {"all": [], "compared": []}
    # The model-assisted bound: each campaign's full-pool influences, labels and model.
    assisted: dict[str, list[tuple[selection.Influences, np.ndarray, np.ndarray]]] = {"all": [], "compared": []}
    features = np.vstack([scores, sbert_cosine(corpus)])
    for _ in range(args.campaigns):
        labels = np.where(rng.random(n) < noise, 1 - corpus.gold, corpus.gold)
        if corpus.graded is not None:
            graded = corpus.graded + rng.normal(scale=graded_noise * 5, size=n)
        else:
            graded = labels.astype(float)
        full = verdict(scores, labels, np.ones(n), compared)
        full_significant += full[1] != 0
        full_figures = figures(scores, labels, graded, np.ones(n))
        # The full pool's standardised ΔAUC influences with this campaign's labels: the bound.
        known = np.clip(labels.astype(float), 1e-6, 1 - 1e-6)
        oracle_sizes["all"].append(selection.expected_influence(scores, known))
        oracle_sizes["compared"].append(selection.expected_influence(scores[list(compared)], known))
        model = label_model(features, labels)
        influences = selection.standardised_influences(scores, known)
        assisted["all"].append((influences, labels, model))
        assisted["compared"].append((selection.standardised_influences(scores[list(compared)], known), labels, model))
        for name, design in designs.items():
            # The oracles know the labels before the campaign: unattainable, upper references.
            if name == ORACLE:
                q = selection.draw_weights(oracle_sizes["all"][-1], args.floor)
            elif name == DECISIVE:
                q = selection.draw_weights(decisive_size(scores, labels, compared, influences), DECISIVE_FLOOR)
            else:
                q = design
            if q is None:
                order = rng.permutation(n)
                keys = None
            else:
                # The decisive oracle draws from its own stream: the other designs' figures stay
                # those of the runs before it was added.
                keys = selection.order_keys(q, (decisive_rng if name == DECISIVE else rng).random(n))
                order = np.argsort(keys)
            verdicts = []
            for size in sizes:
                chosen = order[:size]
                w = np.ones(size) if q is None else 1 / probabilities(q, keys, order, size)[chosen]
                verdicts.append(verdict(scores[:, chosen], labels[chosen], w, compared))
            counts[name].append(needed(verdicts, full, sizes))
            alone = [(v[1],) if len(v) == 2 else v for v in verdicts]
            delta_counts[name].append(needed(alone, (full[1],), sizes))
            chosen = order[:bias_size]
            w = np.ones(bias_size) if q is None else 1 / probabilities(q, keys, order, bias_size)[chosen]
            errors[name].append(figures(scores[:, chosen], labels[chosen], graded[chosen], w) - full_figures)
            if name == "adaptive (all 4 metrics)":
                flat = np.ones(bias_size)
                errors[name + ", unweighted"].append(
                    figures(scores[:, chosen], labels[chosen], graded[chosen], flat) - full_figures
                )
    elapsed = time.perf_counter() - started
    print(f"\n## {corpus.name}: {n} pairs, {int(corpus.gold.sum())} paraphrases, {args.campaigns} campaigns")
    print(
        "Full-pool AUC per metric (gold labels): "
        + ", ".join(
            f"{name} {weighted.hajek_auc(row, corpus.gold == 1, np.ones(n)):.3f}"
            for name, row in zip(METRICS, scores, strict=True)
        )
    )
    print(
        f"Compared: {args.compared[0]} vs {args.compared[1]}; the full campaign finds their ΔAUC significant in "
        f"{full_significant} of {args.campaigns} campaigns. Checkpoints every {step} judgements."
    )
    boot = np.random.default_rng(SEED)
    for title, table in (
        ("the verdict (clusters and compared ΔAUC)", counts),
        ("the compared ΔAUC's sign and significance alone", delta_counts),
    ):
        print(f"Judgements needed until {title} equals the full campaign's (and stays):")
        base = np.array(table["balanced"], dtype=float)
        for name, values in table.items():
            array = np.array(values, dtype=float)
            se = array.std(ddof=1) / math.sqrt(len(array)) if len(array) > 1 else 0.0
            line = f"  {name:26s} mean {array.mean():7.1f} ± {1.96 * se:5.1f} ({array.mean() / n:5.1%} of the pool)"
            if name != "balanced":
                saving, low, high = bootstrap_saving(base, array, boot)
                line += f"; saving {saving:+.1%} (95 % CI {low:+.1%} to {high:+.1%})"
            print(line)
    print(
        f"Mean error at {bias_size} judged pairs (a quarter of the pool), against the full pool, in MC standard errors:"
    )
    labels_out = [f"{m} {s}" for m in METRICS for s in ("AUC", "Pearson", "Spearman")]
    for name, rows in errors.items():
        matrix = np.array(rows)
        mean = np.nanmean(matrix, axis=0)
        se = np.nanstd(matrix, axis=0, ddof=1) / math.sqrt(len(matrix))
        z = np.abs(mean) / np.where(se > 0, se, np.nan)
        worst = int(np.nanargmax(z))
        print(
            f"  {name:38s} largest |mean error| {np.nanmax(np.abs(mean)):.4f}; largest |z| {z[worst]:.1f} "
            f"({labels_out[worst]}); figures with |z| > 3: {int(np.sum(z > 3))} of {len(z)}"
        )
    # The precision behind the verdicts: the error of every ΔAUC at a quarter of the pool. A design
    # with a smaller mean squared error reaches the same precision with fewer judgements (about
    # MSE ratio times as many, the variance of these estimators shrinking as 1 / n).
    pairs = [(a, b) for a in range(len(METRICS)) for b in range(a + 1, len(METRICS))]

    def delta_errors(name: str) -> np.ndarray:
        matrix = np.array(errors[name])[:, 0::3]  # the AUC errors, metrics in order
        return np.array([matrix[:, a] - matrix[:, b] for a, b in pairs]).T  # campaigns x metric pairs

    print(f"Squared error of the ΔAUCs at {bias_size} judged pairs; judgements saved for the same precision:")
    base_delta = delta_errors("balanced")
    focus = pairs.index(tuple(sorted(compared)))
    for name in designs:
        if name == "balanced":
            continue
        mine = delta_errors(name)
        boot_ratios = []
        for _ in range(2000):
            pick = boot.integers(0, len(mine), len(mine))
            boot_ratios.append(
                [
                    1 - np.mean(mine[pick, focus] ** 2) / np.mean(base_delta[pick, focus] ** 2),
                    1 - np.mean(mine[pick] ** 2) / np.mean(base_delta[pick] ** 2),
                ]
            )
        low, high = np.percentile(np.array(boot_ratios), [2.5, 97.5], axis=0)
        compared_saving = 1 - np.mean(mine[:, focus] ** 2) / np.mean(base_delta[:, focus] ** 2)
        all_saving = 1 - np.mean(mine**2) / np.mean(base_delta**2)
        print(
            f"  {name:26s} compared ΔAUC {compared_saving:+.1%} (95 % CI {low[0]:+.1%} to {high[0]:+.1%}); "
            f"all 6 ΔAUCs {all_saving:+.1%} ({low[1]:+.1%} to {high[1]:+.1%})"
        )
    print(
        "Upper bound on the saving at equal precision with the weighted estimators (any Poisson design, even one that"
    )
    print(
        "knew the labels): the optimal design π ∝ |influence| (Neyman) against the balanced one, "
        "from each campaign's\nfull-pool influences, at the balanced order's mean judgements needed:"
    )
    for title, key, table in (
        ("all 6 standardised ΔAUCs (the clusters)", "all", counts),
        ("the compared ΔAUC alone", "compared", delta_counts),
    ):
        at = round(float(np.mean(table["balanced"])))
        savings = [1 - neyman_needed(size, at) / at for size in oracle_sizes[key]]
        print(f"  {title:42s} at {at:5d} judgements: {np.mean(savings):+.1%}")
    print("With a difference estimator instead, its model fitted on the whole pool's labels (logistic, on the four")
    print("metrics and the SBERT cosine), judgements saved at equal precision against the balanced order:")
    for title, key, table in (
        ("all 6 standardised ΔAUCs (the clusters)", "all", counts),
        ("the compared ΔAUC alone", "compared", delta_counts),
    ):
        at = round(float(np.mean(table["balanced"])))
        runs = [model_assisted_needed(influences, labels, model, at) for influences, labels, model in assisted[key]]
        print(f"  {title}, at {at} judgements:")
        for design in runs[0]:
            print(f"    {design:34s} {1 - np.mean([run[design] for run in runs]) / at:+.1%}")
    print(f"({elapsed:.0f} s)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--campaigns", type=int, default=200, help="Simulated campaigns per corpus (default 200).")
    parser.add_argument("--compared", default="levenshtein,bow_cosine", help="The two metrics of the ΔAUC question.")
    parser.add_argument("--corpora", default="mrpc,pit,stsb")
    parser.add_argument(
        "--floor", type=float, default=selection.FLOOR, help=f"Smallest draw weight (default {selection.FLOOR})."
    )
    args = parser.parse_args()
    args.compared = tuple(args.compared.split(","))
    if len(args.compared) != 2 or any(name not in METRICS for name in args.compared):
        parser.error(f"--compared names two of {', '.join(METRICS)}")
    noise, spread, pairs = pit_noise()
    print(f"Draw-weight floor {args.floor}.")
    print(f"Volunteer noise from PIT-2015 dev ({pairs} pairs x 5 crowd votes): ε = {noise:.3f} of votes differ from")
    print(f"their pair's majority; one vote's spread around its pair's mean {spread:.3f} (graded noise: x5 on STS-B).")
    loaders = {"mrpc": load_mrpc, "pit": load_pit, "stsb": load_stsb}
    for key in args.corpora.split(","):
        run_corpus(loaders[key](), args, noise, spread)
    return 0


if __name__ == "__main__":
    sys.exit(main())
