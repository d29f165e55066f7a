"""The two-way (pairs and volunteers) bootstrap: every replicate against a loop written here,
its coverage with rater effects, and its agreement with the pairs-only bootstrap where the
volunteers cannot matter."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from scoring.analysis.binary import best_accuracy, equal_error_rate, rank
from scoring.analysis.bootstrap import DEFAULT_SEED, Resampler, bootstrap
from scoring.analysis.labels import BINARY_OF_CODE, volunteer_labels
from scoring.analysis.rater_bootstrap import (
    JudgementTable,
    RaterInput,
    ScoreOrder,
    TwoWayResampler,
    auc_difference,
    binary_statistics,
    correlations,
    observed_labels,
    rater_intervals,
)


def small_campaign(seed: int, pairs: int = 40, volunteers: int = 7, per_pair: int = 3):
    rng = np.random.default_rng([DEFAULT_SEED, seed])
    pair = np.repeat(np.arange(pairs), per_pair)
    volunteer = np.concatenate([rng.choice(volunteers, per_pair, replace=False) for _ in range(pairs)]) + 100
    code = rng.integers(0, 5, size=len(pair))  # Don't know (4) included
    scores = np.round(rng.normal(size=(2, pairs)), 1)  # rounded: tie groups
    scores[1, 3] = np.nan  # an unscored pair
    return pair, volunteer, code, scores


def loop_replicates(pair, volunteer, code, pairs, resamples, seed):
    """Per replicate, by loops: the drawn pairs, and every pair's labels from the judgements of the
    drawn volunteers repeated as often as drawn (a pair none of whose volunteers with a graded
    answer was drawn keeps all its judgements)."""
    ids = np.unique(volunteer)
    number = {value: index for index, value in enumerate(ids)}
    rng = np.random.default_rng([seed, pairs, len(ids), 41])
    out = []
    for _ in range(resamples):
        drawn_pairs = rng.integers(0, pairs, size=pairs)
        drawn_volunteers = np.bincount(rng.integers(0, len(ids), size=len(ids)), minlength=len(ids))
        rows_pair, rows_code = [], []
        for p in range(pairs):
            mine = [j for j in range(len(pair)) if pair[j] == p]
            chosen = [code[j] for j in mine for _ in range(drawn_volunteers[number[volunteer[j]]])]
            if not any(BINARY_OF_CODE[c] >= 0 for c in chosen):
                chosen = [code[j] for j in mine]
            rows_pair += [p] * len(chosen)
            rows_code += chosen
        labels = volunteer_labels(pairs, np.array(rows_pair, dtype=np.int64), np.array(rows_code, dtype=np.int64))
        out.append((drawn_pairs, labels))
    return out


def test_every_replicate_equals_a_loop_implementation() -> None:
    pair, volunteer, code, scores = small_campaign(1)
    pairs, resamples, seed = 40, 60, 11
    table = JudgementTable.build(pair, volunteer, code, pairs)
    labels = observed_labels(table)
    expected = volunteer_labels(pairs, pair, code)
    assert np.array_equal(labels[0], expected.binary)
    assert np.allclose(labels[1], expected.graded, equal_nan=True)

    blocks = list(TwoWayResampler(resamples, seed).replicates(table, labels, volunteers=True, rows=16))
    orders = [ScoreOrder.of(row) for row in scores]
    mine = [
        [np.concatenate(column) for column in zip(*[binary_statistics(order, block) for block in blocks], strict=True)]
        for order in orders
    ]
    mine_corr = [
        [np.concatenate(column) for column in zip(*[correlations(row, block) for block in blocks], strict=True)]
        for row in scores
    ]
    both = np.isfinite(scores).all(axis=0)
    paired = np.concatenate(
        [
            auc_difference(
                ScoreOrder.of(np.where(both, scores[0], np.nan)), ScoreOrder.of(np.where(both, scores[1], np.nan)), b
            )
            for b in blocks
        ]
    )
    for r, (drawn, lab) in enumerate(loop_replicates(pair, volunteer, code, pairs, resamples, seed)):
        aucs = []
        for m in range(2):
            s = scores[m][drawn]
            y = lab.binary[drawn]
            keep = np.isfinite(s) & (y >= 0)
            ranked = rank(s[keep], y[keep] == 1)
            assert mine[m][0][r] == pytest.approx(best_accuracy(ranked).confusion.accuracy, abs=1e-12)
            auc = roc_auc_score(y[keep], s[keep])
            assert mine[m][1][r] == pytest.approx(auc, abs=1e-12)
            assert mine[m][2][r] == pytest.approx(equal_error_rate(ranked).rate, abs=1e-12)
            graded = lab.graded[drawn]
            ok = np.isfinite(s) & np.isfinite(graded)
            assert mine_corr[m][0][r] == pytest.approx(stats.pearsonr(s[ok], graded[ok]).statistic, abs=1e-9)
            assert mine_corr[m][1][r] == pytest.approx(stats.spearmanr(s[ok], graded[ok]).statistic, abs=1e-9)
            keep_both = keep & both[drawn]
            aucs.append(roc_auc_score(y[keep_both], scores[m][drawn][keep_both]))
        assert paired[r] == pytest.approx(aucs[0] - aucs[1], abs=1e-12)


def test_labels_stay_fixed_in_the_pairs_only_variant() -> None:
    pair, volunteer, code, _ = small_campaign(2)
    table = JudgementTable.build(pair, volunteer, code, 40)
    labels = observed_labels(table)
    for block in TwoWayResampler(20, 3).replicates(table, labels, volunteers=False):
        assert (block.binary == labels[0]).all()


# --- coverage with rater effects ------------------------------------------------------------------


def _codes(z):
    return np.digitize(z, [-1.0, 0.0, 1.0])  # 0-3: Very different .. Same meaning


def _population_auc(rng) -> float:
    """The AUC of the metric against the majority of 3 judges drawn from the whole population of
    volunteers (each judgement its own volunteer): what a campaign estimates."""
    n = 400_000
    meaning, surface = rng.normal(size=n), rng.normal(size=n)
    slope = rng.normal(0.5, 0.6, size=(n, 3))
    z = meaning[:, None] + slope * surface[:, None] + rng.normal(0, 0.5, size=(n, 3))
    return float(roc_auc_score((_codes(z) >= 2).sum(axis=1) >= 2, meaning + surface))


def test_two_way_interval_covers_where_the_pairs_only_one_does_not() -> None:
    """Volunteers differ in how much word overlap sways them (a slope per volunteer); the metric
    follows overlap too, so who volunteered moves its AUC. 10 volunteers, 3 per pair, 200 pairs."""
    rng = np.random.default_rng([DEFAULT_SEED, 7])
    truth = _population_auc(rng)
    reps, pairs, volunteers = 100, 200, 10
    covered = {"pairs": 0, "two_way": 0}
    for rep in range(reps):
        meaning, surface = rng.normal(size=pairs), rng.normal(size=pairs)
        slope = rng.normal(0.5, 0.6, size=volunteers)
        pair = np.repeat(np.arange(pairs), 3)
        volunteer = np.concatenate([rng.choice(volunteers, 3, replace=False) for _ in range(pairs)])
        code = _codes(meaning[pair] + slope[volunteer] * surface[pair] + rng.normal(0, 0.5, size=len(pair)))
        score = meaning + surface
        two_way = rater_intervals(
            RaterInput(pair, volunteer, code, [1], score[None, :]), [("all", np.ones(pairs, dtype=bool))], 200, rep
        )[1]["all"].two_way
        assert two_way is not None and two_way.auc is not None
        labels = volunteer_labels(pairs, pair, code)
        keep = labels.binary >= 0
        pairs_only = bootstrap(rank(score[keep], labels.binary[keep] == 1), Resampler(200, rep))
        assert pairs_only is not None and pairs_only.auc is not None
        covered["pairs"] += pairs_only.auc.low <= truth <= pairs_only.auc.high
        covered["two_way"] += two_way.auc[0] <= truth <= two_way.auc[1]
    assert covered["pairs"] / reps < 0.8  # measured 0.53: the volunteers' chance is missing
    assert 0.9 <= covered["two_way"] / reps <= 1.0  # measured 0.94


def test_one_judgement_per_pair_without_rater_effects_gives_the_pairs_only_interval() -> None:
    """With one judgement per pair a label cannot change with the volunteers drawn: the two
    variants draw the same pairs and agree exactly; and both agree closely with the dashboard's
    pairs-only bootstrap (another random stream)."""
    rng = np.random.default_rng([DEFAULT_SEED, 9])
    pairs = 400
    meaning = rng.normal(size=pairs)
    pair = np.arange(pairs)
    volunteer = rng.integers(0, 30, size=pairs)  # each volunteer judges about 13 pairs
    code = _codes(meaning + rng.normal(0, 0.7, size=pairs))
    score = meaning + rng.normal(0, 0.7, size=pairs)
    result = rater_intervals(
        RaterInput(pair, volunteer, code, [1], score[None, :]), [("all", np.ones(pairs, dtype=bool))], 1000, 5
    )[1]["all"]
    assert result.two_way is not None
    assert result.two_way.pearson == result.pearson
    assert result.two_way.spearman == result.spearman
    labels = volunteer_labels(pairs, pair, code)
    dashboard = bootstrap(rank(score, labels.binary == 1), Resampler(1000, 5))
    assert dashboard is not None and dashboard.auc is not None
    low, high = result.two_way.auc
    assert low == pytest.approx(dashboard.auc.low, abs=0.01)
    assert high == pytest.approx(dashboard.auc.high, abs=0.01)


def test_gold_labels_have_no_volunteer_variant() -> None:
    pairs = 30
    rng = np.random.default_rng([DEFAULT_SEED, 4])
    binary = (rng.random(pairs) < 0.5).astype(np.int8)
    graded = rng.random(pairs) * 5
    empty = np.zeros(0, dtype=np.int64)
    result = rater_intervals(
        RaterInput(empty, empty, empty, [1], rng.normal(size=(1, pairs)), fixed=(binary, graded)),
        [("all", np.ones(pairs, dtype=bool))],
        100,
        1,
    )[1]["all"]
    assert result.two_way is None
    assert result.reason == "the gold labels do not come from volunteers: there is no volunteer to resample"
    assert result.pearson is not None


# --- what the dashboard's tables show -------------------------------------------------------------


def _shown(reference: str):
    from scoring.analysis.labels import Reference
    from scoring.analysis.report import ReportOptions, build_report
    from scoring.reports.tables import all_tables
    from tests.test_analysis_report import make_input

    report = build_report(make_input(), ReportOptions(resamples=40, seed=2, reference=Reference(reference)))
    return report, {table.key: table for table in all_tables(report)}


def test_tables_show_both_intervals_with_the_sentence_on_when_each_applies() -> None:
    report, tables = _shown("volunteers")
    ranking = tables["ranking"]
    stats = [row.stat for row in ranking.rows if row.label == ranking.rows[0].label]
    assert stats == [
        "ROC AUC",
        "AUC 95% CI, pairs only",
        "AUC 95% CI, pairs and volunteers",
        "Pearson",
        "Pearson 95% CI, pairs only",
        "Pearson 95% CI, pairs and volunteers",
        "Spearman",
        "Spearman 95% CI, pairs only",
        "Spearman 95% CI, pairs and volunteers",
    ]
    sentence = (
        " Pairs only: for conclusions about these volunteers (their labels taken as fixed). Pairs and "
        "volunteers: for conclusions about volunteers like them (who happened to volunteer is resampled "
        "too; a little wide on purpose)."
    )
    for key in ("table2", "table4", "ranking"):
        assert tables[key].caption.endswith(sentence)
    assert [row.stat for row in tables["table2"].rows[:3]] == [
        "Max. acc.",
        "Acc. 95% CI, pairs only",
        "Acc. 95% CI, pairs and volunteers",
    ]
    # The cell shows the report's two-way interval at three decimals, with a note naming the scheme.
    metric = report.metrics[0]
    two_way = report.result(metric.id, "all").raters.two_way
    cell = next(row for row in ranking.rows if row.stat == "AUC 95% CI, pairs and volunteers").cells[-1]
    assert cell.text == f"{two_way.auc[0]:.3f}\u2013{two_way.auc[1]:.3f}"
    assert cell.note == f"95% bootstrap interval over pairs and {two_way.volunteers} volunteers, both resampled"


def test_gold_reference_tables_show_the_pairs_only_intervals_and_say_why() -> None:
    _, tables = _shown("gold")
    stats = {row.stat for table in tables.values() for row in table.rows}
    assert "AUC 95% CI, pairs only" in stats and "Pearson 95% CI, pairs only" in stats
    assert not any(stat.endswith("pairs and volunteers") for stat in stats)
    assert tables["ranking"].caption.endswith(
        " Gold labels: only the pairs are resampled (no volunteers stand behind the labels)."
    )
