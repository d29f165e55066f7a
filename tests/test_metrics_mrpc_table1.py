"""The ParaPLUIE paper's Table 1, MRPC column, for the metrics that need no model.

All 5,801 MRPC pairs (train + test, sentence 1 = source, sentence 2 = hypothesis) from
``../shared/data/mrpc``. The paper prints two decimals: every mean here must be within 0.01 of its value,
every standard deviation within 0.015 (WER's is 0.200 for 0.19: the paper split the GLUE copy's
Moses-tokenised text on whitespace, our WER splits raw text into words and punctuation marks).
benchmarks/reproduce_table1_mrpc.py prints the full table.
"""

from __future__ import annotations

import statistics

import pytest

from scoring.metrics.base import Metric
from scoring.metrics.bleu import TorchtextBleu
from scoring.metrics.lexical import Levenshtein, WordEditRate
from scoring.metrics.meteor import Meteor
from tests.corpora import MISSING_REASON, MRPC

FILES = ("msr_paraphrase_train.txt", "msr_paraphrase_test.txt")


@pytest.fixture(scope="module")
def mrpc() -> tuple[list[tuple[str, str]], list[int]]:
    if not all((MRPC / name).is_file() for name in FILES):
        pytest.skip(MISSING_REASON)
    pairs, labels = [], []
    for name in FILES:
        with (MRPC / name).open(encoding="utf-8-sig") as handle:
            next(handle)
            for line in handle:
                quality, _, _, first, second = line.rstrip("\n").split("\t")
                pairs.append((first, second))
                labels.append(int(quality))
    assert (len(pairs), sum(labels)) == (5801, 3900)
    return pairs, labels


@pytest.mark.parametrize(
    ("metric", "paper"),
    [
        (Levenshtein(), (0.38, 0.16, 0.51, 0.13)),
        (TorchtextBleu(), (0.40, 0.21, 0.28, 0.18)),
        (Meteor(), (0.69, 0.14, 0.56, 0.15)),
        # The TALN 2024 version's WER column, which divides by the hypothesis' length.
        (WordEditRate(normalisation="hypothesis_length"), (0.51, 0.20, 0.67, 0.19)),
    ],
    ids=["lev", "bleu", "meteor", "wer"],
)
def test_mean_and_std_per_class_match_the_paper(
    mrpc: tuple[list[tuple[str, str]], list[int]], metric: Metric, paper: tuple[float, float, float, float]
) -> None:
    pairs, labels = mrpc
    values = metric.score_batch(pairs)
    yes = [value for value, label in zip(values, labels, strict=True) if label == 1]
    no = [value for value, label in zip(values, labels, strict=True) if label == 0]
    ours = (statistics.fmean(yes), statistics.pstdev(yes), statistics.fmean(no), statistics.pstdev(no))
    assert ours[0::2] == pytest.approx(paper[0::2], abs=0.01)  # means
    assert ours[1::2] == pytest.approx(paper[1::2], abs=0.015)  # standard deviations
