"""Per-source-group averages over the same groups for every metric, and R-Precision on graded gold."""

from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.management import call_command
from scipy import stats

from scoring.analysis.systems import HUMAN_TIED, METRIC_TIED, NO_RELEVANT, source_groups
from tests.builders import make_campaign, make_metric_config, make_pair, make_score

SOURCES = ["x"] * 3 + ["y"] * 3 + ["z"] * 3 + ["solo"]
HUMAN = np.array([4, 1, 3, 2, 3, 1, 2, 2, 2, 4], dtype=float)
BINARY = (HUMAN >= 3).astype(np.int8)
METRICS = np.array(
    [
        [0.9, 0.1, 0.5, 0.2, 0.7, 0.4, 0.3, 0.6, 0.1, 0.5],  # A: defined in x and y
        [0.8, 0.7, 0.1, 0.5, 0.5, 0.5, 0.2, 0.4, 0.9, 0.5],  # B: constant in y
    ]
)


def test_every_metric_is_averaged_over_the_same_groups():
    groups, (a, b), view = source_groups(SOURCES, BINARY, HUMAN, [1, 2], METRICS)
    rho = {
        (row, name): stats.spearmanr(METRICS[row][start : start + 3], HUMAN[start : start + 3]).statistic
        for row, name, start in ((0, "x", 0), (0, "y", 3), (1, "x", 0))
    }
    assert groups == 3 and view.groups == 3
    # y: B is constant (undefined); z: the human scale is tied. Only x is common to both metrics.
    assert view.spearman_groups == 1
    assert {(d.reason, d.groups) for d in view.spearman_dropped} == {(METRIC_TIED, 1), (HUMAN_TIED, 1)}
    assert a.spearman == pytest.approx(rho[0, "x"]) and b.spearman == pytest.approx(rho[1, "x"])
    assert (a.groups, b.groups) == (2, 1)  # each metric's own defined groups
    # Undefined as 0, over all three groups.
    assert a.spearman_zero == pytest.approx((rho[0, "x"] + rho[0, "y"] + 0) / 3)
    assert b.spearman_zero == pytest.approx((rho[1, "x"] + 0 + 0) / 3)


def test_r_precision_over_the_same_groups_with_binary_labels():
    _, (a, b), view = source_groups(SOURCES, BINARY, HUMAN, [1, 2], METRICS)
    # x: relevant items 0, 2 (R = 2); A's top 2 = 0, 2 -> 1; B's top 2 = 0, 1 -> 1/2.
    # y: relevant item 4 (R = 1); A's top = 4 -> 1; B ties at 0.5 (stable order: item 3) -> 0.
    # z: no relevant item -> dropped for everyone.
    assert view.relevance == "binary labels" and view.r_threshold is None
    assert view.r_groups == 2 and [(d.reason, d.groups) for d in view.r_dropped] == [(NO_RELEVANT, 1)]
    assert a.r_precision == pytest.approx(1.0) and b.r_precision == pytest.approx(0.25)
    assert a.r_precision_zero == pytest.approx(2 / 3) and b.r_precision_zero == pytest.approx(0.5 / 3)


def test_r_precision_on_graded_gold_uses_a_stated_threshold():
    no_labels = np.full(len(HUMAN), -1, dtype=np.int8)
    _, (a, _b), view = source_groups(SOURCES, no_labels, HUMAN, [1, 2], METRICS)
    # Default: relevant = the highest graded value (4): only item 0 in x; y and z have none.
    assert view.relevance == "graded >= 4" and view.r_threshold == 4.0
    assert view.r_groups == 1 and a.r_precision == 1.0
    _, (a, b), view = source_groups(SOURCES, no_labels, HUMAN, [1, 2], METRICS, r_threshold=3)
    assert view.relevance == "graded >= 3" and view.r_groups == 2
    assert a.r_precision == pytest.approx(1.0) and b.r_precision == pytest.approx(0.25)


@pytest.mark.django_db
def test_evaluate_metrics_meta_prints_group_averages_and_graded_r_precision():
    campaign = make_campaign()
    lev = make_metric_config("lev", label="LEV")
    bleu = make_metric_config("bleu", label="BLEU")
    rows = [  # source, gold score, LEV, BLEU
        ("The cat sleeps.", 4.0, 0.1, 0.9),
        ("The cat sleeps.", 2.0, 0.5, 0.0),
        ("The cat sleeps.", 1.0, 0.7, 0.0),
        ("A dog runs home.", 4.0, 0.2, 0.5),
        ("A dog runs home.", 3.0, 0.3, 0.5),
        ("A dog runs home.", 0.0, 0.9, 0.5),
        ("Birds sing at dawn.", 2.0, 0.4, 0.0),
        ("Birds sing at dawn.", 2.0, 0.5, 0.0),
    ]
    for index, (source, gold, lev_value, bleu_value) in enumerate(rows):
        pair = make_pair(campaign, source=source, hypothesis=f"Hypothesis {index}.", gold_score=gold)
        make_score(pair, lev, lev_value)
        make_score(pair, bleu, bleu_value)
    out = io.StringIO()
    call_command(
        "evaluate_metrics", "--campaign", campaign.slug, "--gold", "imported", "--meta", "--resamples", "20", stdout=out
    )
    text = out.getvalue()
    assert "### Groups of hypotheses of one source\n" in text
    assert (
        "3 sources with two or more hypotheses. Spearman: every metric averaged over the same 1 group, "
        "2 dropped (1: a metric gives every hypothesis the same score; 1: the human scale gives every hypothesis "
        "the same value). R-Precision (relevant: graded >= 4 (a stated threshold on the graded scale)): over the "
        "same 2 groups, 1 dropped (1: no relevant hypothesis (R = 0)). 'undefined = 0': the mean over all 3 groups "
        "with an undefined value counted as 0."
    ) in text
    # The common group is the cat's (BLEU is constant on the dog's, the birds' gold is tied).
    bleu_cat = stats.spearmanr([0.9, 0.0, 0.0], [4, 2, 1]).statistic
    lev_cat = stats.spearmanr([-0.1, -0.5, -0.7], [4, 2, 1]).statistic
    lev_dog = stats.spearmanr([-0.2, -0.3, -0.9], [4, 3, 0]).statistic
    assert f"| BLEU ↑ | {bleu_cat:.3f} | {bleu_cat / 3:.3f} | 1 | 1.000 | 0.667 | 2 |" in text
    assert f"| LEV ↓ | {lev_cat:.3f} | {(lev_cat + lev_dog) / 3:.3f} | 2 | 1.000 | 0.667 | 2 |" in text
    out = io.StringIO()
    call_command(
        "evaluate_metrics",
        *("--campaign", campaign.slug, "--gold", "imported", "--meta", "--resamples", "20", "--r-threshold", "3"),
        stdout=out,
    )
    assert "R-Precision (relevant: graded >= 3 (a stated threshold on the graded scale))" in out.getvalue()
