"""The whole report on a hand-computed campaign, and its edge cases (pure Python, no database)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from scoring.analysis.labels import LABEL_CODES, LabelCounts, Reference, gold_labels, volunteer_labels
from scoring.analysis.report import (
    AnalysisInput,
    CorrelationValue,
    Excluded,
    JudgementRows,
    MetricInfo,
    ReportOptions,
    ScoreCounts,
    SubsetCounts,
    Summary,
    Tied,
    VolunteerInfo,
    build_report,
    report_json,
)
from scoring.reports.tables import all_tables

NAN = float("nan")
V1, V2 = 101, 102

# Six pairs, two origins. Judgements (first by V1, then by V2):
#   0 a: same, same          -> paraphrase, mean ordinal 4
#   1 a: mostly, slightly    -> binary tie (no label), mean 2.5
#   2 a: very, very          -> non-paraphrase, mean 1
#   3 b: same, mostly        -> paraphrase, mean 3.5
#   4 b: slightly, very      -> non-paraphrase, mean 1.5
#   5 b: (none)              -> unjudged
JUDGED = [
    ["same_meaning", "same_meaning"],
    ["mostly_similar", "slightly_similar"],
    ["very_different", "very_different"],
    ["same_meaning", "mostly_similar"],
    ["slightly_similar", "very_different"],
    [],
]
ORIGINS = ["a", "a", "a", "b", "b", "b"]
EDIT = [0.1, 0.3, 0.6, 0.2, 0.5, 0.4]
METRICS = [
    MetricInfo(1, "sim", "SIM", higher_is_closer=True),
    MetricInfo(2, "lev", "LEV", higher_is_closer=False),
    MetricInfo(3, "parapluie", "PP", higher_is_closer=True, natural_threshold=0.0),
]
SCORES = [
    [0.9, 0.5, 0.2, 0.8, 0.6, 0.7],
    EDIT,
    [3.0, 0.5, -2.0, NAN, -4.0, 1.0],  # pair 3 (a labelled paraphrase) failed
]


def make_input(judged=JUDGED, scores=SCORES, metrics=METRICS, origins=ORIGINS, gold=None, gold_score=None):
    rows = [(pair, position, label) for pair, labels in enumerate(judged) for position, label in enumerate(labels)]
    n = len(judged)
    judgements = JudgementRows(
        pair_index=np.array([pair for pair, _, _ in rows], dtype=np.int64),
        volunteer=np.array([V1 if position == 0 else V2 for _, position, _ in rows], dtype=np.int64),
        code=np.array([LABEL_CODES[label] for _, _, label in rows], dtype=np.int64),
        answered_at=np.arange(len(rows), dtype=np.float64),
        response_seconds=np.array([4.0 + position for _, position, _ in rows], dtype=np.float64),
    )
    score_array = np.array(scores, dtype=np.float64).reshape(len(metrics), n)
    return AnalysisInput(
        pair_ids=np.arange(10, 10 + n),
        origins=list(origins),
        edit_distance=np.array(EDIT[:n], dtype=np.float64),
        gold_label=np.array(gold if gold is not None else [NAN] * n, dtype=np.float64),
        gold_score=np.array(gold_score if gold_score is not None else [NAN] * n, dtype=np.float64),
        judgements=judgements,
        volunteers=[VolunteerInfo(V1, "native", 5, 4), VolunteerInfo(V2, "good", 5, 5)],
        metrics=metrics,
        scores=score_array,
        failed=np.isnan(score_array) & (np.arange(n) == 3),
        training_judgements=10,
    )


@pytest.fixture(scope="module")
def report():
    return build_report(make_input(), ReportOptions(resamples=50, seed=1))


def test_labels_from_volunteers():
    data = make_input()
    labels = volunteer_labels(6, data.judgements.pair_index, data.judgements.code)
    assert labels.binary.tolist() == [1, -1, 0, 1, 0, -1]
    assert labels.tie.tolist() == [False, True, False, False, False, False]
    assert labels.graded[:5].tolist() == [4.0, 2.5, 1.0, 3.5, 1.5] and math.isnan(labels.graded[5])
    assert labels.counts() == LabelCounts(
        pairs=6, labelled=4, paraphrases=2, non_paraphrases=2, ties=1, dont_know_only=0, unjudged=1
    )


def test_dont_know_is_left_out():
    # Pair 0: Don't know only; pair 1: Don't know + slightly similar -> non-paraphrase, mean 2.
    index = np.array([0, 1, 1])
    codes = np.array([LABEL_CODES["dont_know"], LABEL_CODES["dont_know"], LABEL_CODES["slightly_similar"]])
    labels = volunteer_labels(2, index, codes)
    assert labels.binary.tolist() == [-1, 0]
    assert math.isnan(labels.graded[0]) and labels.graded[1] == 2.0
    assert labels.counts().dont_know_only == 1


def test_gold_labels():
    labels = gold_labels(np.array([1.0, 0.0, NAN]), np.array([4.2, NAN, 1.0]), np.array([0, 0, 0]), np.array([0, 0, 0]))
    assert labels.binary.tolist() == [1, 0, -1]
    assert labels.graded[0] == 4.2


def test_counts(report):
    counts = report.counts
    assert counts.judgements == 10 and counts.volunteers == 2 and counts.training_judgements == 10
    assert counts.labelled == 4 and counts.ties == 1 and counts.unjudged == 1
    assert counts.scores == 17 and counts.scores_failed == 1 and counts.scores_missing == 0
    assert [s.key for s in report.subsets] == ["a", "b", "all"]
    assert report.subsets[-1].label == "Global"


def test_separable_metric(report):
    result = report.result(1, "all")
    # Labelled: .9 Y, .8 Y, .6 N, .2 N -> threshold .8 classifies all four.
    assert result.n == 4 and result.positives == 2
    assert result.best_accuracy.accuracy == 1.0
    assert result.best_accuracy.threshold == 0.8 and result.best_accuracy.rule == "≥"
    assert result.auc.value == 1.0
    # none: FRR 1; t=.9: FRR .5, FAR 0; t=.8: both 0 -> EER 0 at .8.
    assert (result.eer.rate, result.eer.threshold) == (0.0, 0.8)
    # Full precision (the CSV / JSON outputs are checkable): no rounding of the statistics.
    assert result.class_stats.yes == Summary(mean=(0.9 + 0.8) / 2, std=float(np.std([0.9, 0.8], ddof=1)), n=2)
    assert result.best_accuracy.tied == Tied(count=1, highest=0.8, lowest=0.8, rule="highest threshold")
    assert result.class_stats.no.mean == pytest.approx(0.4)
    # Two pairs per class: too few for a correlation with the edit distance.
    assert result.edit_distance.yes == CorrelationValue(r=None, n=2, reason="fewer than 3 pairs")
    # The graded scale includes the tied pair 1: scores .9 .5 .2 .8 .6 against 4 2.5 1 3.5 1.5.
    # Spearman: score ranks 5 2 1 4 3, human ranks 5 3 1 4 2, sum d^2 = 2 -> 1 - 12/120 = 0.9.
    # Pearson: sum dxdy = 1.25, sum dx^2 = .30, sum dy^2 = 6.5 -> 1.25 / sqrt(1.95) = 0.895144.
    assert result.ordinal.spearman.r == pytest.approx(0.9)
    assert result.ordinal.pearson.r == pytest.approx(1.25 / math.sqrt(1.95), abs=1e-6)
    assert result.natural is None and "no natural threshold" in result.undefined["natural"]


def test_lower_is_closer_metric_is_oriented_but_reported_in_its_units(report):
    result = report.result(2, "all")
    # LEV .1 Y, .2 Y, .5 N, .6 N: negated, the best threshold is -.2, i.e. LEV <= .2.
    assert result.best_accuracy.threshold == 0.2 and result.best_accuracy.rule == "≤"
    assert result.auc.value == 1.0
    assert result.class_stats.yes.mean == pytest.approx(0.15)
    assert result.class_stats.no.mean == pytest.approx(0.55)
    # Correlation with the human scale uses the oriented score: positive when LEV agrees.
    assert result.ordinal.spearman.r > 0


def test_failed_score_is_excluded_and_counted(report):
    result = report.result(3, "all")
    assert result.pairs == 4 and result.n == 3
    assert result.excluded == Excluded(failed=1, missing=0)
    assert report.metrics[2].scores == ScoreCounts(done=5, failed=1, missing=0)
    # Natural threshold 0: 3.0 -> yes (right), -2 and -4 -> no (right).
    assert result.natural.accuracy == 1.0 and result.natural.tp == 1 and result.natural.tn == 2
    assert report.result(3, "b").n == 1 and report.result(3, "b").auc is None


def test_subsets(report):
    a = report.result(1, "a")
    assert a.n == 2 and a.positives == 1
    assert report.subsets[0] == SubsetCounts(
        key="a",
        label="a",
        pairs=3,
        labelled=2,
        paraphrases=1,
        non_paraphrases=1,
        ties=1,
        dont_know_only=0,
        unjudged=0,
    )


def test_agreement(report):
    agreement = report.agreement
    # Binary counts per pair (no, yes): (0,2) (1,1) (2,0) (0,2) (2,0): observed 4/5; category
    # shares .5/.5 -> Fleiss p_e = .5 and AC1 p_e = .5: both (.8 - .5) / .5 = .6.
    assert agreement.pairs_multi == 5 and agreement.measurable
    assert agreement.fleiss_kappa.value == pytest.approx(0.6)
    assert agreement.gwet_ac1.value == pytest.approx(0.6)
    # Earlier vs later answer: A = 1 1 0 1 0, B = 1 0 0 1 0 -> kappa .32 / .52.
    assert agreement.cohen_kappa.value == pytest.approx(0.32 / 0.52, abs=1e-6)
    # Ordinal alpha, pinned: the krippendorff package on the same reliability data (coders V1, V2 on
    # the 1-4 scale: 4 3 1 4 2 / 4 2 1 3 1) gives 0.8083870967741935 ordinal, 0.2702702702702702
    # nominal, so computing the report at another level fails here.
    assert agreement.krippendorff_alpha.value == pytest.approx(0.8083870967741935, abs=1e-6)
    assert agreement.krippendorff_alpha.pairs == 5


def test_volunteers(report):
    rows = {row.id: row for row in report.volunteers}
    # Each disagrees with the other only on pair 1: 4 agreements in 5 comparisons.
    assert rows[V1].judgements == 5 and rows[V1].compared == 5 and rows[V1].agreement == 0.8
    assert rows[V1].training_accuracy == 0.8 and rows[V1].english_level == "native"
    assert rows[V1].median_response_seconds == 4.0 and rows[V2].median_response_seconds == 5.0


def test_report_json_is_strict_json_with_the_keys_the_page_reads(report):
    data = report_json(report)
    text = json.dumps(data, allow_nan=False)
    parsed = json.loads(text)
    assert parsed["results"]["1"]["all"]["n"] == 4  # metric ids as string keys
    assert list(parsed) == [
        "analysis_version",
        "reference",
        "counts",
        "subsets",
        "metrics",
        "results",
        "charts",
        "agreement",
        "volunteers",
        "bootstrap",
        "weighted",  # null unless the campaign uses adaptive selection
        "cards",
    ]
    assert parsed["weighted"] is None
    assert parsed["reference"] == "volunteers" and "wait" not in parsed["bootstrap"]
    # No probe set in this input: the robustness card says so; the calibration card is a section.
    assert parsed["cards"]["robustness"]["state"] == "none" and parsed["cards"]["robustness"]["cards"] == []
    assert set(parsed["cards"]["calibration"]) == {"target", "folds", "seed", "bins", "cards"}
    # The chart library's names (camelCase) and the confusion flattened into Table 2's result.
    assert set(parsed["charts"]["3"]["box"]["yes"]) >= {"whiskerMin", "whiskerMax", "q1", "outliers"}
    best = parsed["results"]["1"]["all"]["best_accuracy"]
    assert best["tp"] == 2 and best["rule"] == "≥" and isinstance(best["ci"], list) and len(best["ci"]) == 2
    eer = parsed["results"]["1"]["all"]["eer"]
    assert (eer["rate"], eer["threshold"]) == (0.0, 0.8) and len(eer["ci"]) == 2
    assert parsed["subsets"][0]["key"] == "a" and parsed["counts"]["scores_failed"] == 1


def test_charts(report):
    chart = report.charts[3]
    assert chart.thresholds.natural == 0.0
    assert chart.box.yes.n == 1 and chart.box.no.n == 2
    # Scatter: labelled pairs with a score -> (edit distance, score, label).
    assert sorted(chart.scatter) == sorted([(0.1, 3.0, 1), (0.6, -2.0, 0), (0.5, -4.0, 0)])
    assert chart.roc.fpr[0] == 0 and chart.roc.tpr[-1] == 1
    assert chart.rank.k[0] == 0 and chart.rank.k[-1] == 3


def test_no_judgements():
    data = make_input(judged=[[] for _ in range(6)])
    report = build_report(data, ReportOptions(resamples=20))
    assert report.counts.judgements == 0 and report.counts.labelled == 0
    result = report.result(1, "all")
    assert result.best_accuracy is None and result.auc is None
    assert result.undefined["auc"] == "no labelled pairs"
    assert not report.agreement.measurable
    assert report.agreement.reason == "no judgements yet"
    assert report.agreement.krippendorff_alpha.reason == "no judgements yet"
    assert report.volunteers[0].judgements == 0  # training answers only
    json.dumps(report_json(report), allow_nan=False)
    tables = all_tables(report)
    assert tables[1].rows[0].cells[-1].text == "—"


def test_one_judge_per_pair_is_reported():
    data = make_input(judged=[labels[:1] for labels in JUDGED])
    agreement = build_report(data, ReportOptions(resamples=0)).agreement
    assert not agreement.measurable
    assert "one judge per pair" in (agreement.reason or "")
    assert agreement.fleiss_kappa.value is None


def test_single_class():
    judged = [["same_meaning"]] * 6
    report = build_report(make_input(judged=judged), ReportOptions(resamples=20))
    result = report.result(1, "all")
    assert result.auc is None and result.eer is None
    assert result.undefined["auc"] == "only paraphrases among the labelled pairs"
    assert result.best_accuracy.accuracy == 1.0


def test_all_scores_equal():
    report = build_report(make_input(scores=[[0.5] * 6, EDIT, [1.0] * 6]), ReportOptions(resamples=20))
    result = report.result(1, "all")
    assert result.auc.value == 0.5 and result.eer.rate == 0.5
    assert result.ordinal.pearson.reason == "all scores are equal"


def test_gold_reference():
    data = make_input(gold=[0, 1, 0, 1, 0, 1], gold_score=[1.0, 4.0, 1.0, 5.0, 0.0, 4.5])
    report = build_report(data, ReportOptions(reference=Reference.GOLD, resamples=0))
    assert report.reference is Reference.GOLD
    assert report.counts.labelled == 6 and report.counts.paraphrases == 3
    # SIM scores .9 .5 .2 .8 .6 .7 against gold 0 1 0 1 0 1: positives .5 .8 .7, negatives .9 .2 .6.
    # Ordered pairs won by paraphrases: .5>.2; .8>.2,.6; .7>.2,.6 -> 5 of 9.
    result = report.result(1, "all")
    assert result.auc.value == pytest.approx(5 / 9, abs=1e-6)
    assert result.auc.ci is None  # resamples=0: no intervals
    assert result.ordinal.pearson.n == 6
    # Agreement still describes the volunteers.
    assert report.agreement.pairs_multi == 5


def test_input_shapes_are_checked():
    data = make_input()
    with pytest.raises(ValueError, match="scores and failed"):
        AnalysisInput(**{**data.__dict__, "scores": data.scores[:, :3]})


def test_labels_equal_verdict_for_every_combination_of_up_to_four_answers():
    # volunteer_labels calls verdict once per distinct combination of answers: check that
    # every pair still gets exactly verdict's reading, for all multisets of 1-4 answers.
    from itertools import combinations_with_replacement

    from annotate.aggregation import verdict
    from annotate.labels import LABEL_ORDER

    names = [label.value for label in LABEL_ORDER]
    groups = [list(c) for size in range(1, 5) for c in combinations_with_replacement(names, size)]
    index = np.array([pair for pair, group in enumerate(groups) for _ in group])
    codes = np.array([LABEL_CODES[name] for group in groups for name in group])
    labels = volunteer_labels(len(groups) + 1, index, codes)  # the last pair has no judgement
    for pair, group in enumerate(groups):
        expected = verdict(group)
        binary = -1 if expected.is_paraphrase is None else int(expected.is_paraphrase)
        assert labels.binary[pair] == binary, group
        assert labels.tie[pair] == expected.binary_tie, group
        if expected.mean_ordinal is None:
            assert math.isnan(labels.graded[pair])
        else:
            assert labels.graded[pair] == pytest.approx(expected.mean_ordinal)
    assert labels.binary[-1] == -1 and labels.judgements[-1] == 0


def test_the_analysis_modules_do_not_import_django():
    # The statistics (scoring/analysis/) run anywhere; their Django side is scoring/reports/.
    # The import-linter contract says the same for chains; this imports every module for real.
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    analysis = root / "scoring" / "analysis"
    modules = sorted(
        ".".join(path.relative_to(analysis).with_suffix("").parts)
        for path in analysis.rglob("*.py")
        if path.stem != "__init__"
    )
    assert {"paired", "report.build", "report.records", "meta", "ties", "systems"} <= set(modules)
    code = (
        "import sys\n"
        + "".join(f"import scoring.analysis.{name}\n" for name in modules)
        + "print(sorted(m for m in sys.modules if m == 'django' or m.startswith('django.')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert result.stdout.strip() == "[]"
