"""The two-way (pairs and volunteers) intervals of the meta-evaluation: the paired differences
between two metrics (ROC AUC, accuracy at the natural threshold, Pearson, Spearman) and Soft
Pairwise Accuracy. Each is checked against a plain loop written here
(the same generator draws), against the pairs-only interval where the volunteers cannot matter
(one judgement per pair), and on volunteers who are pure noise (the interval widens)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from scoring.analysis.bootstrap import DEFAULT_SEED
from scoring.analysis.labels import BINARY_OF_CODE, ORDINAL_OF_CODE, volunteer_labels
from scoring.analysis.rater_bootstrap import (
    GOLD_REASON,
    JudgementTable,
    RaterInput,
    TwoWayResampler,
    paired_auc_intervals,
    paired_intervals,
    percentile,
)
from scoring.analysis.systems import SPA_PERMUTATIONS, soft_pairwise_accuracy, system_p_values, system_view


def _codes(z):
    return np.digitize(z, [-1.0, 0.0, 1.0])  # 0-3: Very different .. Same meaning


def campaign(seed: int, pairs: int = 60, volunteers: int = 9, per_pair: int = 3, noise_share: float = 0.0):
    """Pairs judged by ``per_pair`` of ``volunteers``; the first ``noise_share`` of the volunteers
    answer at random (no signal). Three metrics: two with signal, one rounded (ties), one pair unscored."""
    rng = np.random.default_rng([DEFAULT_SEED, seed])
    meaning = rng.normal(size=pairs)
    pair = np.repeat(np.arange(pairs), per_pair)
    volunteer = np.concatenate([rng.choice(volunteers, per_pair, replace=False) for _ in range(pairs)])
    code = _codes(meaning[pair] + rng.normal(0, 0.6, size=len(pair)))
    noisy = volunteer < int(noise_share * volunteers)
    code[noisy] = rng.integers(0, 4, size=int(noisy.sum()))
    dont_know = rng.random(len(pair)) < 0.05
    code[dont_know] = 4
    scores = np.vstack(
        [
            meaning + rng.normal(0, 0.8, pairs),
            np.round(meaning + rng.normal(0, 1.2, pairs), 1),
            rng.normal(size=pairs),
        ]
    )
    scores[2, 5] = np.nan
    return pair, volunteer + 100, code, scores


# --- Delta AUC ---------------------------------------------------------------------------------


def _auc(y, graded, x):
    keep = y >= 0
    if len(set(y[keep].tolist())) < 2:
        return np.nan
    return roc_auc_score(y[keep], x[keep])


def loop_delta_auc(pair, volunteer, code, scores, a, b, resamples, seed, statistic=_auc):
    """Per replicate, by loops: draw the pairs both metrics scored that have a graded judgement,
    then the volunteers (the generator of the two-way bootstrap); relabel every pair from the
    drawn volunteers' judgements, each repeated as often as its volunteer was drawn (a pair none of
    whose volunteers with a graded answer was drawn keeps all its judgements); the ``statistic``
    (binary labels, graded scores, metric scores of the drawn pairs; scikit-learn's AUC unless
    told) of each metric on the drawn pairs; the difference."""
    both = np.isfinite(scores[a]) & np.isfinite(scores[b])
    graded = {p for p, c in zip(pair.tolist(), code.tolist(), strict=True) if BINARY_OF_CODE[c] >= 0}
    positions = [p for p in range(scores.shape[1]) if both[p] and p in graded]
    local = {p: i for i, p in enumerate(positions)}
    rows = [j for j in range(len(pair)) if pair[j] in local]
    ids = sorted({int(volunteer[j]) for j in rows})
    number = {value: index for index, value in enumerate(ids)}
    rng = np.random.default_rng([seed, len(positions), len(ids), 41])
    out = []
    for _ in range(resamples):
        drawn_pairs = rng.integers(0, len(positions), size=len(positions))
        drawn_volunteers = np.bincount(rng.integers(0, len(ids), size=len(ids)), minlength=len(ids))
        new_pair, new_code = [], []
        for p in range(len(positions)):
            mine = [j for j in rows if local[pair[j]] == p]
            chosen = [code[j] for j in mine for _ in range(drawn_volunteers[number[int(volunteer[j])]])]
            if not any(BINARY_OF_CODE[c] >= 0 for c in chosen):
                chosen = [code[j] for j in mine]
            new_pair += [p] * len(chosen)
            new_code += chosen
        labels = volunteer_labels(len(positions), np.array(new_pair), np.array(new_code))
        y, graded_y = labels.binary[drawn_pairs], labels.graded[drawn_pairs]
        values = [statistic(y, graded_y, scores[m][positions][drawn_pairs]) for m in (a, b)]
        out.append(values[0] - values[1])
    return np.array(out)


def test_delta_auc_interval_equals_a_loop_bootstrap_with_the_same_draws() -> None:
    pair, volunteer, code, scores = campaign(1)
    jobs = [(0, 1), (0, 2), (1, 2)]
    resamples, seed = 80, 17
    result = paired_auc_intervals(RaterInput(pair, volunteer, code, [1, 2, 3], scores), jobs, resamples, seed)
    for a, b in jobs:
        expected = percentile(loop_delta_auc(pair, volunteer, code, scores, a, b, resamples, seed), 0.95)
        assert result[(a, b)].interval == pytest.approx(expected, abs=1e-12)
        assert result[(a, b)].volunteers == 9
    # Metric 2 left one pair unscored: its comparisons draw from one pair fewer.
    assert result[(0, 2)].pairs == result[(0, 1)].pairs - 1


def test_delta_auc_with_one_judgement_per_pair_equals_the_pairs_only_bootstrap() -> None:
    """A label cannot change with the volunteers drawn: the two-way interval is the pairs-only one
    of the same pair draws (labels kept fixed)."""
    pair, volunteer, code, scores = campaign(2, pairs=150, volunteers=40, per_pair=1)
    scores = scores[:2]
    data = RaterInput(pair, volunteer, code, [1, 2], scores)
    two_way = paired_auc_intervals(data, [(0, 1)], 300, 5)[(0, 1)]
    labels = volunteer_labels(150, pair, code)
    judged = np.flatnonzero(np.isfinite(labels.graded))
    resampler = TwoWayResampler(300, 5)
    volunteers = len(np.unique(volunteer[np.isin(pair, judged)]))
    differences = []
    for pair_counts, _ in resampler.draws(len(judged), volunteers):
        for counts in pair_counts:
            drawn = np.repeat(judged, counts.astype(int))
            y = labels.binary[drawn]
            keep = y >= 0
            differences.append(
                roc_auc_score(y[keep], scores[0][drawn][keep]) - roc_auc_score(y[keep], scores[1][drawn][keep])
            )
    assert two_way.interval == pytest.approx(percentile(np.array(differences), 0.95), abs=1e-12)


def test_volunteers_who_are_noise_widen_the_delta_auc_interval() -> None:
    """Half the volunteers answer at random: who volunteered moves every label, so the two-way
    interval is wider than the pairs-only one drawn with the same pairs."""
    pair, volunteer, code, scores = campaign(3, pairs=120, volunteers=8, noise_share=0.5)
    data = RaterInput(pair, volunteer, code, [1, 2, 3], scores)
    two_way = paired_auc_intervals(data, [(0, 2)], 400, 5)[(0, 2)].interval
    assert two_way is not None
    labels = volunteer_labels(120, pair, code)
    judged = np.flatnonzero(np.isfinite(labels.graded) & np.isfinite(scores[2]))
    differences = []
    for pair_counts, _ in TwoWayResampler(400, 5).draws(len(judged), 8):
        for counts in pair_counts:
            drawn = np.repeat(judged, counts.astype(int))
            y = labels.binary[drawn]
            keep = y >= 0
            differences.append(
                roc_auc_score(y[keep], scores[0][drawn][keep]) - roc_auc_score(y[keep], scores[2][drawn][keep])
            )
    pairs_only = percentile(np.array(differences), 0.95)
    assert pairs_only is not None
    assert two_way[1] - two_way[0] > 1.15 * (pairs_only[1] - pairs_only[0])


def test_gold_labels_give_no_two_way_delta_auc() -> None:
    pair, volunteer, code, scores = campaign(4)
    labels = volunteer_labels(scores.shape[1], pair, code)
    data = RaterInput(pair, volunteer, code, [1, 2, 3], scores, fixed=(labels.binary, labels.graded))
    assert paired_auc_intervals(data, [(0, 1)], 50, 1) == {}


def test_meta_evaluation_shows_the_two_way_delta_auc_beside_delong() -> None:
    from scoring.analysis.labels import Reference
    from scoring.analysis.meta import MetaOptions, meta_evaluation
    from scoring.analysis.paired import Statistic
    from tests.test_analysis_report import make_input

    data = make_input()
    meta = meta_evaluation(data, MetaOptions(resamples=60, seed=2))
    auc = [test for test in meta.paired if test.statistic is Statistic.AUC and test.reason is None]
    assert auc and all(test.interval_two_way is not None and test.two_way_volunteers > 0 for test in auc)
    for statistic in (Statistic.PEARSON, Statistic.SPEARMAN, Statistic.KENDALL):
        tests = [test for test in meta.paired if test.statistic is statistic and test.reason is None]
        assert tests and all(test.interval_two_way is not None and test.two_way_volunteers > 0 for test in tests)
        assert all(test.two_way_reason is None for test in tests)
    gold_data = make_input(gold=[0, 1, 0, 1, 0, 1], gold_score=[1.0, 4.0, 1.0, 4.0, 2.0, 3.5])
    gold = meta_evaluation(gold_data, MetaOptions(resamples=60, seed=2, reference=Reference.GOLD))
    gold_tested = [test for test in gold.paired if test.reason is None]
    assert gold_tested and all(
        test.interval_two_way is None and test.two_way_reason == GOLD_REASON for test in gold_tested
    )


# --- the other paired statistics: natural accuracy, Pearson, Spearman ------------------------------

NATURAL = 0.3  # a natural threshold on the oriented scores of the campaign's metrics


def _pearson(y, graded, x):
    return stats.pearsonr(x, graded).statistic


def _spearman(y, graded, x):
    return stats.spearmanr(x, graded).statistic


def _kendall(y, graded, x):
    return stats.kendalltau(x, graded, variant="b").statistic


def _natural_accuracy(y, graded, x):
    keep = y >= 0
    return float(np.mean((x[keep] >= NATURAL) == (y[keep] == 1))) if keep.any() else np.nan


STATISTICS = {"pearson": _pearson, "spearman": _spearman, "kendall": _kendall, "accuracy_natural": _natural_accuracy}


def _natural_calls(scores):
    calls = np.where(scores >= NATURAL, 1.0, 0.0)
    calls[~np.isfinite(scores)] = np.nan
    return calls


@pytest.mark.parametrize("kind", sorted(STATISTICS))
def test_paired_interval_equals_a_loop_bootstrap_with_the_same_draws(kind) -> None:
    """scipy's pearsonr / spearmanr (average ranks among the drawn copies) and the plain share of
    right calls at the natural threshold, in the loop of :func:`loop_delta_auc`."""
    pair, volunteer, code, scores = campaign(1)
    jobs = [(0, 1), (0, 2), (1, 2)]
    resamples, seed = 60, 17
    data = RaterInput(pair, volunteer, code, [1, 2, 3], scores, natural=_natural_calls(scores))
    result = paired_intervals(data, [(kind, a, b) for a, b in jobs], resamples, seed)
    for a, b in jobs:
        draws = loop_delta_auc(pair, volunteer, code, scores, a, b, resamples, seed, STATISTICS[kind])
        assert result[(kind, a, b)].interval == pytest.approx(percentile(draws, 0.95), abs=1e-12)
        assert result[(kind, a, b)].volunteers == 9


@pytest.mark.parametrize("kind", sorted(STATISTICS))
def test_paired_interval_with_one_judgement_per_pair_equals_the_pairs_only_bootstrap(kind) -> None:
    pair, volunteer, code, scores = campaign(2, pairs=150, volunteers=40, per_pair=1)
    scores = scores[:2]
    data = RaterInput(pair, volunteer, code, [1, 2], scores, natural=_natural_calls(scores))
    two_way = paired_intervals(data, [(kind, 0, 1)], 300, 5)[(kind, 0, 1)]
    labels = volunteer_labels(150, pair, code)
    judged = np.flatnonzero(np.isfinite(labels.graded))
    volunteers = len(np.unique(volunteer[np.isin(pair, judged)]))
    differences = []
    for pair_counts, _ in TwoWayResampler(300, 5).draws(len(judged), volunteers):
        for counts in pair_counts:
            drawn = np.repeat(judged, counts.astype(int))
            y, graded = labels.binary[drawn], labels.graded[drawn]
            differences.append(
                STATISTICS[kind](y, graded, scores[0][drawn]) - STATISTICS[kind](y, graded, scores[1][drawn])
            )
    assert two_way.interval == pytest.approx(percentile(np.array(differences), 0.95), abs=1e-12)


@pytest.mark.parametrize("kind", sorted(STATISTICS))
def test_volunteers_who_are_noise_widen_the_paired_interval(kind) -> None:
    pair, volunteer, code, scores = campaign(3, pairs=120, volunteers=8, noise_share=0.5)
    data = RaterInput(pair, volunteer, code, [1, 2, 3], scores, natural=_natural_calls(scores))
    two_way = paired_intervals(data, [(kind, 0, 2)], 400, 5)[(kind, 0, 2)].interval
    assert two_way is not None
    labels = volunteer_labels(120, pair, code)
    judged = np.flatnonzero(np.isfinite(labels.graded) & np.isfinite(scores[2]))
    differences = []
    for pair_counts, _ in TwoWayResampler(400, 5).draws(len(judged), 8):
        for counts in pair_counts:
            drawn = np.repeat(judged, counts.astype(int))
            y, graded = labels.binary[drawn], labels.graded[drawn]
            differences.append(
                STATISTICS[kind](y, graded, scores[0][drawn]) - STATISTICS[kind](y, graded, scores[2][drawn])
            )
    pairs_only = percentile(np.array(differences), 0.95)
    assert pairs_only is not None
    assert two_way[1] - two_way[0] > 1.15 * (pairs_only[1] - pairs_only[0])


# --- the cross-validated accuracy: every fold's threshold refitted per replicate --------------------

FOLDS = 4


def _folds(labels, scores):
    """Each pair's fold in the observed cross-validation of every metric (-1: no label)."""
    from scoring.analysis.thresholds import cross_validated

    fold = np.full(scores.shape, -1, dtype=np.int64)
    for row in range(len(scores)):
        valid = np.flatnonzero((labels.binary >= 0) & np.isfinite(scores[row]))
        result = cross_validated(scores[row][valid], labels.binary[valid] == 1, FOLDS, 3)
        fold[row, valid] = result.fold
    return fold


def _search_threshold(x, y):
    """The best-accuracy threshold by trying every score (and none): the highest among ties."""
    best, chosen = np.count_nonzero(~y), np.inf
    for t in sorted(set(x.tolist()), reverse=True):
        correct = np.count_nonzero((x >= t) == y)
        if correct > best:
            best, chosen = correct, t
    return chosen


def _cv_accuracy(binary, x, fold, drawn):
    """Every fold's threshold searched on the other folds' labelled pairs (each once), the calls on
    the held-out fold; the share of right calls among the drawn labelled pairs."""
    right = np.zeros(len(x), dtype=bool)
    for held_out in range(fold.max() + 1):
        train = (fold != held_out) & (binary >= 0)
        threshold = _search_threshold(x[train], binary[train] == 1)
        test = fold == held_out
        right[test] = (x[test] >= threshold) == (binary[test] == 1)
    keep = binary[drawn] >= 0
    return float(np.mean(right[drawn][keep]))


def loop_cv(pair, volunteer, code, scores, fold, a, b, resamples, seed):
    """:func:`loop_delta_auc`'s draws and relabelling, the cross-validated accuracy of each metric
    refitted on the replicate's labels; a pair with no observed fold gets one from the draw the
    two-way bootstrap documents."""
    both = np.isfinite(scores[a]) & np.isfinite(scores[b])
    graded = {p for p, c in zip(pair.tolist(), code.tolist(), strict=True) if BINARY_OF_CODE[c] >= 0}
    positions = [p for p in range(scores.shape[1]) if both[p] and p in graded]
    local = {p: i for i, p in enumerate(positions)}
    rows = [j for j in range(len(pair)) if pair[j] in local]
    ids = sorted({int(volunteer[j]) for j in rows})
    number = {value: index for index, value in enumerate(ids)}
    folds = {}
    for m in (a, b):
        mine = fold[m][positions].copy()
        outside = mine < 0
        if outside.any():
            mine[outside] = np.random.default_rng([seed, len(positions), 41, 2]).integers(0, FOLDS, outside.sum())
        folds[m] = mine
    rng = np.random.default_rng([seed, len(positions), len(ids), 41])
    out = []
    for _ in range(resamples):
        drawn_pairs = rng.integers(0, len(positions), size=len(positions))
        drawn_volunteers = np.bincount(rng.integers(0, len(ids), size=len(ids)), minlength=len(ids))
        new_pair, new_code = [], []
        for p in range(len(positions)):
            mine = [j for j in rows if local[pair[j]] == p]
            chosen = [code[j] for j in mine for _ in range(drawn_volunteers[number[int(volunteer[j])]])]
            if not any(BINARY_OF_CODE[c] >= 0 for c in chosen):
                chosen = [code[j] for j in mine]
            new_pair += [p] * len(chosen)
            new_code += chosen
        binary = volunteer_labels(len(positions), np.array(new_pair), np.array(new_code)).binary
        values = [_cv_accuracy(binary, scores[m][positions], folds[m], drawn_pairs) for m in (a, b)]
        out.append(values[0] - values[1])
    return np.array(out)


def test_cv_accuracy_interval_equals_a_loop_with_an_explicit_threshold_search() -> None:
    pair, volunteer, code, scores = campaign(1)
    labels = volunteer_labels(scores.shape[1], pair, code)
    fold = _folds(labels, scores)
    jobs = [(0, 1), (0, 2), (1, 2)]
    resamples, seed = 40, 17
    data = RaterInput(pair, volunteer, code, [1, 2, 3], scores, cv_fold=fold)
    result = paired_intervals(data, [("accuracy_cv", a, b) for a, b in jobs], resamples, seed)
    for a, b in jobs:
        draws = loop_cv(pair, volunteer, code, scores, fold, a, b, resamples, seed)
        assert result[("accuracy_cv", a, b)].interval == pytest.approx(percentile(draws, 0.95), abs=1e-12)


def test_cv_accuracy_with_one_judgement_per_pair_equals_the_pairs_only_bootstrap() -> None:
    """The labels never change: every refit is the observed cross-validation's, so the two-way
    interval is the pairs-only one of its calls (the same pair draws)."""
    from scoring.analysis.thresholds import cross_validated

    pair, volunteer, code, scores = campaign(2, pairs=150, volunteers=40, per_pair=1)
    scores = scores[:2]
    labels = volunteer_labels(150, pair, code)
    fold = _folds(labels, scores)
    data = RaterInput(pair, volunteer, code, [1, 2], scores, cv_fold=fold)
    two_way = paired_intervals(data, [("accuracy_cv", 0, 1)], 300, 5)[("accuracy_cv", 0, 1)]
    right = np.full(scores.shape, np.nan)
    for row in range(2):
        valid = np.flatnonzero(labels.binary >= 0)
        right[row, valid] = cross_validated(scores[row][valid], labels.binary[valid] == 1, FOLDS, 3).correct
    judged = np.flatnonzero(np.isfinite(labels.graded))
    volunteers = len(np.unique(volunteer[np.isin(pair, judged)]))
    differences = []
    for pair_counts, _ in TwoWayResampler(300, 5).draws(len(judged), volunteers):
        for counts in pair_counts:
            drawn = np.repeat(judged, counts.astype(int))
            drawn = drawn[labels.binary[drawn] >= 0]
            differences.append(np.mean(right[0][drawn]) - np.mean(right[1][drawn]))
    assert two_way.interval == pytest.approx(percentile(np.array(differences), 0.95), abs=1e-12)


def test_volunteers_who_are_noise_widen_the_cv_accuracy_interval() -> None:
    pair, volunteer, code, scores = campaign(3, pairs=120, volunteers=8, noise_share=0.5)
    labels = volunteer_labels(120, pair, code)
    fold = _folds(labels, scores)
    data = RaterInput(pair, volunteer, code, [1, 2, 3], scores, cv_fold=fold)
    two_way = paired_intervals(data, [("accuracy_cv", 0, 2)], 400, 5)[("accuracy_cv", 0, 2)].interval
    assert two_way is not None
    judged = np.flatnonzero(np.isfinite(labels.graded) & np.isfinite(scores[2]))
    right = {}
    for row in (0, 2):
        right[row] = np.zeros(len(judged), dtype=bool)
        mine = np.where(fold[row][judged] < 0, 0, fold[row][judged])
        binary = labels.binary[judged]
        for held_out in range(FOLDS):
            train = (mine != held_out) & (binary >= 0)
            threshold = _search_threshold(scores[row][judged][train], binary[train] == 1)
            test = mine == held_out
            right[row][test] = (scores[row][judged][test] >= threshold) == (binary[test] == 1)
    differences = []
    for pair_counts, _ in TwoWayResampler(400, 5).draws(len(judged), 8):
        for counts in pair_counts:
            drawn = np.repeat(np.arange(len(judged)), counts.astype(int))
            drawn = drawn[labels.binary[judged][drawn] >= 0]
            differences.append(np.mean(right[0][drawn]) - np.mean(right[2][drawn]))
    pairs_only = percentile(np.array(differences), 0.95)
    assert pairs_only is not None
    assert two_way[1] - two_way[0] > 1.15 * (pairs_only[1] - pairs_only[0])


def _tiled_input(copies: int):
    """The report tests' campaign repeated ``copies`` times (scores jittered apart): enough pairs
    for every paired statistic, the cross-validated accuracy included."""
    import dataclasses

    from tests.test_analysis_report import make_input

    data = make_input()
    n = len(data.pair_ids)
    rng = np.random.default_rng([DEFAULT_SEED, 99])
    judgements = data.judgements
    tiled = dataclasses.replace(
        judgements,
        **{
            name: np.concatenate(
                [getattr(judgements, name) + (n * copy if name == "pair_index" else 0) for copy in range(copies)]
            )
            for name in ("pair_index", "volunteer", "code", "answered_at", "response_seconds")
        },
    )
    scores = np.tile(data.scores, copies)
    scores = scores + rng.normal(0, 0.05, scores.shape)
    return dataclasses.replace(
        data,
        pair_ids=np.arange(10, 10 + n * copies),
        origins=list(data.origins) * copies,
        edit_distance=np.tile(data.edit_distance, copies),
        gold_label=np.tile(data.gold_label, copies),
        gold_score=np.tile(data.gold_score, copies),
        judgements=tiled,
        scores=scores,
        failed=np.tile(data.failed, copies),
    )


def test_meta_json_and_table_show_the_two_way_cv_accuracy_and_kendall() -> None:
    """The dashboard's JSON carries the new intervals (not a reason); the table shows them, with
    the caption's words."""
    from scoring.analysis.meta import MetaOptions, meta_evaluation
    from scoring.analysis.plain import to_json
    from scoring.reports.meta_tables import paired_table

    data = _tiled_input(8)
    meta = meta_evaluation(data, MetaOptions(resamples=60, seed=2))
    payload = to_json(meta)["paired"]
    for statistic in ("accuracy_cv", "kendall"):
        rows = [row for row in payload if row["statistic"] == statistic and row["reason"] is None]
        assert rows, statistic
        for row in rows:
            assert row["two_way_reason"] is None
            interval = row["interval_two_way"]
            assert interval["low"] <= interval["high"] and row["two_way_volunteers"] == 2
    names = {metric.id: metric.name for metric in data.metrics}
    table = paired_table(meta, names)
    assert (
        "the same draws for both metrics (every statistic; the cross-validated accuracy refits every fold's "
        "threshold on each replicate's labels, Kendall is recounted on each replicate's human scores)."
    ) in table.caption
    for test, row in zip(meta.paired, table.rows, strict=True):
        if test.statistic.value in ("accuracy_cv", "kendall") and test.reason is None:
            cell = row.cells[5]
            assert test.interval_two_way is not None
            assert cell.text == f"{test.interval_two_way.low:.3f}\u2013{test.interval_two_way.high:.3f}"
            assert cell.note == "95% bootstrap interval over pairs and 2 volunteers, both resampled"


def test_cv_accuracy_needs_the_folds() -> None:
    pair, volunteer, code, scores = campaign(4)
    with pytest.raises(ValueError, match="folds of the cross-validation"):
        paired_intervals(RaterInput(pair, volunteer, code, [1, 2, 3], scores), [("accuracy_cv", 0, 1)], 20, 1)


def test_natural_accuracy_needs_the_natural_calls() -> None:
    pair, volunteer, code, scores = campaign(4)
    with pytest.raises(ValueError, match="natural threshold's calls"):
        paired_intervals(RaterInput(pair, volunteer, code, [1, 2, 3], scores), [("accuracy_natural", 0, 1)], 20, 1)


# --- SPA ---------------------------------------------------------------------------------------


def spa_campaign(seed: int, per_pair: int = 3, noise_share: float = 0.0, n: int = 16, volunteers: int = 10):
    """3 systems x n pairs (shared sources), judged by ``per_pair`` of ``volunteers``."""
    rng = np.random.default_rng([DEFAULT_SEED, 50 + seed])
    systems, sources, quality = [], [], []
    for index, level in enumerate((0.8, 0.2, -0.4)):
        systems += ["ABC"[index]] * n
        sources += [f"s{i}" for i in range(n)]
        quality.append(level + rng.normal(0, 1, n))
    meaning = np.concatenate(quality)
    pairs = len(meaning)
    pair = np.repeat(np.arange(pairs), per_pair)
    volunteer = np.concatenate([rng.choice(volunteers, per_pair, replace=False) for _ in range(pairs)])
    code = _codes(meaning[pair] + rng.normal(0, 0.7, size=len(pair)))
    noisy = volunteer < int(noise_share * volunteers)
    code[noisy] = rng.integers(0, 4, size=int(noisy.sum()))
    scores = np.vstack([meaning + rng.normal(0, 0.6, pairs), meaning + rng.normal(0, 1.5, pairs)])
    return systems, sources, pair, volunteer, code, scores


def _view(systems, sources, pair, volunteer, code, scores, resamples, seed, judged=True):
    labels = volunteer_labels(len(systems), pair, code)
    table = JudgementTable.build(pair, volunteer, code, len(systems)) if judged else None
    return labels, system_view(
        systems,
        sources,
        labels.binary,
        labels.graded,
        [1, 2],
        scores,
        scores,
        resamples=200,
        seed=seed,
        spa_resamples=resamples,
        judgements=table,
    )


def loop_two_way_spa(systems, sources, pair, volunteer, code, scores, resamples, seed):
    """Per resample, by loops: the sources drawn as SPA's bootstrap draws them (generator [seed, 53]),
    the volunteers from the relabeller's generator; every pair's graded human score the mean of the
    1-4 answers of the drawn volunteers, each as often as drawn (a pair with none drawn keeps all);
    p-values and SPA by the module's (separately tested) functions; re-centred percentile."""
    n = len(systems)
    ids = sorted(set(volunteer.tolist()))
    number = {value: index for index, value in enumerate(ids)}
    names = sorted(set(systems))
    unit_names = sorted(set(sources))
    units = [[i for i in range(n) if sources[i] == name] for name in unit_names]
    rng = np.random.default_rng([seed, 53])
    volunteer_rng = np.random.default_rng([seed, n, len(ids), 41, 1])
    values = np.full((len(scores), resamples), np.nan)
    for resample in range(resamples):
        picked = rng.integers(0, len(units), size=len(units))
        drawn = [i for unit in picked for i in units[unit]]
        drawn_sources = [str(k) for k, unit in enumerate(picked) for _ in units[unit]]
        counts = np.bincount(volunteer_rng.integers(0, len(ids), size=len(ids)), minlength=len(ids))
        graded = np.full(n, np.nan)
        for p in range(n):
            mine = [j for j in range(len(pair)) if pair[j] == p]
            answers = [ORDINAL_OF_CODE[code[j]] for j in mine for _ in range(counts[number[int(volunteer[j])]])]
            answers = [a for a in answers if a > 0]
            if not answers:
                answers = [ORDINAL_OF_CODE[code[j]] for j in mine if ORDINAL_OF_CODE[code[j]] > 0]
            if answers:
                graded[p] = float(np.mean(answers))
        drawn_systems = [systems[i] for i in drawn]
        human_p, _ = system_p_values(
            graded[drawn], drawn_systems, names, drawn_sources, SPA_PERMUTATIONS, seed + 1 + resample
        )
        for row in range(len(scores)):
            metric_p, _ = system_p_values(
                scores[row][drawn], drawn_systems, names, drawn_sources, SPA_PERMUTATIONS, seed + 1 + resample
            )
            value = soft_pairwise_accuracy(human_p, metric_p)
            values[row, resample] = np.nan if value is None else value
    return values


def _recentre(draws, estimate):
    shifted = draws - np.median(draws) + estimate
    low, high = np.percentile(shifted, [2.5, 97.5])
    return [min(max(low, 0.0), estimate), max(min(high, 1.0), estimate)]


def test_two_way_spa_interval_equals_a_loop_bootstrap_with_the_same_draws() -> None:
    systems, sources, pair, volunteer, code, scores = spa_campaign(1)
    _, view = _view(systems, sources, pair, volunteer, code, scores, 30, 7)
    assert view is not None and view.spa_two_way_volunteers == 10
    draws = loop_two_way_spa(systems, sources, pair, volunteer, np.asarray(code), scores, 30, 7)
    for row, metric in enumerate(view.metrics):
        assert metric.spa is not None
        assert metric.spa_interval_two_way == pytest.approx(_recentre(draws[row], metric.spa), abs=1e-12)


def test_two_way_spa_with_one_judgement_per_pair_is_the_pairs_only_interval() -> None:
    systems, sources, pair, volunteer, code, scores = spa_campaign(2, per_pair=1, volunteers=20)
    _, view = _view(systems, sources, pair, volunteer, code, scores, 40, 3)
    assert view is not None
    for metric in view.metrics:
        assert metric.spa_interval is not None
        assert metric.spa_interval_two_way == metric.spa_interval


def test_lenient_and_strict_volunteers_widen_the_spa_interval() -> None:
    """Each system is judged by its own two volunteers, each with a strong leniency of their own
    (a volunteer effect that is noise about the systems): which volunteers were drawn moves the
    systems' human means, so the two-way SPA interval is wider than the pairs-only one."""
    rng = np.random.default_rng([DEFAULT_SEED, 60])
    n = 30
    systems = [name for name in "ABC" for _ in range(n)]
    sources = [f"s{i}" for _ in "ABC" for i in range(n)]
    meaning = np.concatenate([level + rng.normal(0, 1, n) for level in (0.2, 0.0, -0.2)])
    leniency = np.array([1.2, -1.2, -1.0, 1.0, 1.3, -1.3])
    pair = np.repeat(np.arange(3 * n), 2)
    volunteer = np.array([2 * (p // n) + k for p in range(3 * n) for k in range(2)])
    code = _codes(0.5 * meaning[pair] + leniency[volunteer] + rng.normal(0, 0.3, len(pair)))
    scores = np.vstack([meaning + rng.normal(0, 0.6, 3 * n), meaning + rng.normal(0, 1.5, 3 * n)])
    _, view = _view(systems, sources, pair, volunteer, code, scores, 100, 3)
    assert view is not None
    widths = [
        (m.spa_interval_two_way[1] - m.spa_interval_two_way[0], m.spa_interval[1] - m.spa_interval[0])
        for m in view.metrics
        if m.spa_interval and m.spa_interval_two_way
    ]
    assert len(widths) == 2 and sum(two for two, _ in widths) > 1.2 * sum(one for _, one in widths)


def test_spa_without_judgements_has_no_two_way_interval() -> None:
    systems, sources, pair, volunteer, code, scores = spa_campaign(4)
    _, view = _view(systems, sources, pair, volunteer, code, scores, 20, 3, judged=False)
    assert view is not None and view.spa_two_way_volunteers == 0
    assert all(metric.spa_interval_two_way is None and metric.spa_interval for metric in view.metrics)


# --- figures with no human judgement: the sentence instead of a variant ------------------------------


def test_probes_and_objectives_say_why_they_have_no_variant_over_volunteers() -> None:
    from scoring.analysis.cards import robustness_section
    from scoring.analysis.paraphrasus import paraphrasus
    from scoring.analysis.rater_bootstrap import OBJECTIVES_SENTENCE, PROBES_SENTENCE
    from scoring.reports.paraphrasus import ParaphrasusReport, paraphrasus_table
    from scoring.reports.tables import robustness_table

    assert robustness_table(robustness_section(None, 100, 1)).caption.endswith(PROBES_SENTENCE)
    assert paraphrasus_table(ParaphrasusReport(paraphrasus([], []))).caption.endswith(OBJECTIVES_SENTENCE)
