"""Agreement within equal-count bins of edit distance (paper 003, section 3.1), against pandas,
SciPy and scikit-learn."""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest
from django.core.management import CommandError, call_command
from rapidfuzz.distance import Levenshtein
from scipy import stats
from sklearn.metrics import roc_auc_score

from scoring.analysis.distance_bins import distance_bins
from tests.builders import make_campaign, make_metric_config, make_pair, make_score


def reference_bins(distance, binary, graded, scores, bins):
    """pandas.qcut on the order of the distance (ties split by position), scipy and sklearn per bin."""
    referenced = np.flatnonzero(np.isfinite(graded) | (binary >= 0))
    frame = pd.DataFrame({"item": referenced, "distance": distance[referenced]})
    frame["position"] = frame["distance"].rank(method="first")
    frame["bin"] = pd.qcut(frame["position"], bins, labels=False)
    out = []
    for _, group in frame.groupby("bin"):
        items = group["item"].to_numpy()
        x, h, b = scores[items], graded[items], binary[items]
        keep = np.isfinite(x) & np.isfinite(h)
        labelled = np.isfinite(x) & (b >= 0)
        out.append(
            {
                "items": sorted(items.tolist()),
                "pearson": stats.pearsonr(x[keep], h[keep]).statistic,
                "spearman": stats.spearmanr(x[keep], h[keep]).statistic,
                "auc": roc_auc_score(b[labelled], x[labelled]),
                "graded": int(keep.sum()),
                "labelled": int(labelled.sum()),
            }
        )
    return out


def test_bins_match_pandas_scipy_and_sklearn():
    rng = np.random.default_rng(0)
    n = 203
    distance = np.round(rng.random(n), 2)  # rounded: ties in distance, some at bin boundaries
    graded = np.round(1 + 3 * rng.random(n), 1)
    graded[rng.random(n) < 0.1] = np.nan
    binary = np.where(rng.random(n) < 0.1, -1, (graded >= 2.5).astype(np.int8)).astype(np.int8)
    binary[np.isnan(graded) & (rng.random(n) < 0.5)] = 1
    scores = np.vstack([graded + rng.normal(0, 1 + 3 * distance), np.round(rng.random(n), 1)])
    scores[0, rng.random(n) < 0.05] = np.nan
    result = distance_bins(distance, binary, graded, [1, 2], scores, bins=5)
    for row in range(2):
        expected = reference_bins(distance, binary, graded, scores[row], 5)
        assert sum(b.pairs for b in result.bins) == sum(len(e["items"]) for e in expected)
        assert [b.pairs for b in result.bins] == [len(e["items"]) for e in expected]
        for value, reference in zip(result.metrics[row].values, expected, strict=True):
            assert (value.graded_pairs, value.labelled_pairs) == (reference["graded"], reference["labelled"])
            assert value.pearson == pytest.approx(reference["pearson"], abs=1e-12)
            assert value.spearman == pytest.approx(reference["spearman"], abs=1e-12)
            assert value.auc == pytest.approx(reference["auc"], abs=1e-12)
    # Bin edges follow the sorted distances.
    lows = [b.low for b in result.bins]
    assert lows == sorted(lows) and all(b.low <= b.high for b in result.bins)


def test_a_metric_that_degrades_with_distance_is_seen_to():
    rng = np.random.default_rng(1)
    n = 400
    distance = rng.random(n)
    graded = 1 + 3 * rng.random(n)
    binary = (graded >= 2.5).astype(np.int8)
    metric = graded + rng.normal(0, 0.1 + 4 * distance**2)  # noisier when lexically far
    result = distance_bins(distance, binary, graded, [1], metric[None, :])
    pearson = [value.pearson for value in result.metrics[0].values]
    assert len(pearson) == 4 and pearson[0] > 0.9 and pearson[3] < pearson[0] - 0.4


def test_too_few_pairs_and_bad_bin_counts():
    result = distance_bins(np.array([0.1, 0.2]), np.array([1, 0], np.int8), np.array([1.0, 2.0]), [1], np.ones((1, 2)))
    assert result.bins == [] and result.note.startswith("2 pairs with a human reference")
    with pytest.raises(ValueError, match="bins must be between 2 and 20"):
        distance_bins(np.zeros(5), np.zeros(5, np.int8), np.zeros(5), [1], np.zeros((1, 5)), bins=1)


@pytest.mark.django_db
def test_evaluate_metrics_bins_prints_the_table():
    rng = np.random.default_rng(2)
    campaign = make_campaign()
    lev = make_metric_config("lev", label="LEV")
    words = ["the", "cat", "sat", "on", "a", "warm", "mat", "while", "dogs", "ran", "past", "the", "old", "red", "barn"]
    for index in range(30):
        source = " ".join(words[index % 5 : index % 5 + 8])
        hypothesis = list(source.split())
        for _ in range(index % 6):
            hypothesis[rng.integers(len(hypothesis))] = str(rng.choice(words))
        hypothesis_text = " ".join(hypothesis) + ("" if index % 2 else " indeed")
        gold = float(np.round(5 * rng.random(), 1))
        pair = make_pair(campaign, source=source, hypothesis=hypothesis_text, gold_score=gold, gold_label=gold >= 2.5)
        make_score(pair, lev, Levenshtein.normalized_distance(source, hypothesis_text) + rng.normal(0, 0.05))
    out = io.StringIO()
    call_command(
        *("evaluate_metrics", "--campaign", campaign.slug, "--gold", "imported", "--bins", "3"),
        *("--resamples", "0", "--format", "csv"),
        stdout=out,
    )
    cells = [row for row in csv.DictReader(io.StringIO(out.getvalue())) if row["table"] == "distance_bins"]
    from scoring.models import Score

    scores = {s.pair_id: s.value for s in Score.objects.filter(metric_config=lev)}
    pairs = list(campaign.pairs.order_by("id"))
    distance = np.array([Levenshtein.normalized_distance(p.source, p.hypothesis) for p in pairs])
    graded = np.array([p.gold_score for p in pairs])
    binary = np.array([int(p.gold_label) for p in pairs], dtype=np.int8)
    oriented = -np.array([scores[p.pk] for p in pairs])  # LEV: lower is closer
    expected = reference_bins(distance, binary, graded, oriented, 3)
    columns = sorted({row["column"] for row in cells}, key=lambda c: int(c.split()[1].rstrip(":")))
    assert [c.split(" (")[1] for c in columns] == ["10)"] * 3
    assert columns[0].startswith("Bin 1: ")
    for column, reference in zip(columns, expected, strict=True):
        value = {row["statistic"]: row for row in cells if row["column"] == column}
        assert float(value["Pearson r"]["value"]) == pytest.approx(reference["pearson"], abs=1e-12)
        assert float(value["Spearman"]["value"]) == pytest.approx(reference["spearman"], abs=1e-12)
        assert float(value["ROC AUC"]["value"]) == pytest.approx(reference["auc"], abs=1e-12)
        assert value["Pairs (graded / labelled)"]["text"] == "10 / 10"
    with pytest.raises(CommandError, match="--bins must be between 2 and 20: 1"):
        call_command("evaluate_metrics", "--campaign", campaign.slug, "--bins", "1")
