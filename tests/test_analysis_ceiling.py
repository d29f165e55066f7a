"""The human ceiling with an even number of judges and unequal judges per pair.

Every earlier fixture had 3 judges per pair, where a majority that wrongly includes the left-out
judge happens to give the same verdicts; with 2 or 4 judges (and mixed counts) it does not. The
ceiling is checked against a brute-force loop written here."""

from __future__ import annotations

import numpy as np
import pytest

from annotate.models import Judgement
from scoring.analysis.ceiling import human_ceiling
from scoring.analysis.labels import BINARY_OF_CODE
from scoring.analysis.meta import MetaOptions, meta_evaluation
from scoring.reports import dataset
from tests.builders import make_scored_campaign

YES, NO, DK = 1, 0, -1


def brute_force(pairs: list[list[int]], predictions: list[float]) -> tuple[int, int, float | None, float | None]:
    """Each yes/no judgement against the strict majority of the *other* yes/no judgements of its
    pair; the metric's decision against the same majority. (comparisons, pairs, judge, metric)."""
    comparisons = judge = metric = 0
    used = set()
    for index, votes in enumerate(pairs):
        for me, vote in enumerate(votes):
            if vote == DK or not np.isfinite(predictions[index]):
                continue
            others = [v for position, v in enumerate(votes) if position != me and v != DK]
            yes, no = others.count(YES), others.count(NO)
            if yes == no:
                continue
            majority = YES if yes > no else NO
            comparisons += 1
            used.add(index)
            judge += vote == majority
            metric += int(predictions[index]) == majority
    if not comparisons:
        return 0, 0, None, None
    return comparisons, len(used), judge / comparisons, metric / comparisons


def flatten(pairs: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    index = np.array([p for p, votes in enumerate(pairs) for _ in votes], dtype=np.int64)
    binary = np.array([v for votes in pairs for v in votes], dtype=np.int8)
    return index, binary


def test_even_and_unequal_judges_hand_case():
    pairs = [
        [YES, YES, NO, NO],  # 4 judges: each one is outvoted 2-1 by the others -> 4 comparisons, 0 agree
        [YES, NO],  # 2 judges: each against the other -> 2 comparisons, 0 agree
        [YES, YES, YES, NO, DK],  # 5 answers, one Don't know: 4 comparisons, the 3 yes agree
    ]
    predictions = [1.0, 0.0, 1.0]
    index, binary = flatten(pairs)
    (row,) = human_ceiling(index, binary, 3, [5], np.array([predictions]), resamples=200, seed=1)
    # Metric: pair 0 agrees with the 2 comparisons whose majority is yes (the no-judges'), pair 1
    # with the yes-judge's (majority no), pair 2 with all 4: 7 of 10.
    assert (row.comparisons, row.pairs, row.judge_agreement, row.metric_agreement) == (10, 3, 0.3, 0.7)
    assert brute_force(pairs, predictions) == (10, 3, 0.3, 0.7)
    # A majority that includes the left-out judge would tie on pairs 0 and 1 (no comparisons) and
    # give 3/4 and 4/4 on pair 2: these figures must never come out.
    assert row.judge_agreement != 0.75


@pytest.mark.parametrize("seed", range(6))
def test_random_unequal_and_even_judges_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 60
    truth = rng.random(n) < 0.6
    pairs = []
    for i in range(n):
        judges = int(rng.choice([2, 4, 6] if seed % 2 else [1, 2, 3, 4, 5]))
        votes = []
        for _ in range(judges):
            roll = rng.random()
            votes.append(DK if roll < 0.08 else int(truth[i]) if roll < 0.8 else int(not truth[i]))
        pairs.append(votes)
    predictions = np.where(rng.random(n) < 0.75, truth, ~truth).astype(float)
    predictions[rng.random(n) < 0.1] = np.nan  # undecided pairs
    index, binary = flatten(pairs)
    (row,) = human_ceiling(index, binary, n, [1], predictions[None, :], resamples=100, seed=seed)
    comparisons, used, judge, metric = brute_force(pairs, list(predictions))
    assert (row.comparisons, row.pairs) == (comparisons, used)
    assert row.judge_agreement == pytest.approx(judge) and row.metric_agreement == pytest.approx(metric)
    assert row.judge_interval.low <= row.judge_agreement <= row.judge_interval.high
    assert row.metric_interval.low <= row.metric_agreement <= row.metric_interval.high


@pytest.mark.django_db
def test_campaign_with_four_judges_and_unequal_counts_through_the_dataset():
    """The dashboard's path (database -> dataset -> meta-evaluation) on 4 judges per pair, some
    pairs left with 2 or 3 judges; checked on ParaPLUIE, whose decision is its natural threshold 0."""
    scored = make_scored_campaign(judges=4, pairs_per_origin=8, failed_scores=0)
    for number, pair in enumerate(scored.pairs):
        drop = number % 3  # 0, 1 or 2 judgements removed: 4, 3 or 2 judges
        ids = list(Judgement.objects.filter(pair=pair, is_training=False).order_by("id").values_list("id", flat=True))
        Judgement.objects.filter(id__in=ids[:drop]).delete()
    data = dataset.load(scored.campaign, dataset.Filters())
    meta = meta_evaluation(data, MetaOptions(resamples=100))
    parapluie = next(metric for metric in data.metrics if metric.label == "ParaPLUIE FS-DIRECT")
    row = next(r for r in meta.ceiling if r.metric == parapluie.id)
    position = data.metrics.index(parapluie)
    votes: list[list[int]] = [[] for _ in data.pair_ids]
    for pair, code in zip(data.judgements.pair_index, data.judgements.code, strict=True):
        votes[pair].append(int(BINARY_OF_CODE[code]))
    assert {len(v) for v in votes} == {2, 3, 4}
    scores = data.scores[position]
    predictions = [float(s >= 0) if np.isfinite(s) else np.nan for s in scores]
    comparisons, used, judge, metric = brute_force(votes, predictions)
    assert comparisons > 0
    assert (row.comparisons, row.pairs) == (comparisons, used)
    assert row.judge_agreement == pytest.approx(judge) and row.metric_agreement == pytest.approx(metric)
