"""Every baseline metric on bad input, identical sentences, unicode and very long sentences.

Bad input gets a clear error that names the pair and what is wrong; it never takes the rest
of the batch down. Model-based metrics share the process-wide model caches (loaded once).
"""

from __future__ import annotations

import math

import pytest

from scoring.metrics.base import InvalidPairError, Metric
from scoring.metrics.registry import build_metric

# name -> the score of two identical (long enough) sentences
IDENTICAL = {
    "lev": 0.0,
    "wer": 0.0,
    "bleu": 1.0,
    "sacrebleu": 1.0,
    "self_bleu": 1.0,
    "ibleu": 0.8,  # (1 - alpha) * Self-BLEU without a reference
    "meteor": 1 - 0.5 * (1 / 8) ** 3,  # 8 tokens in one chunk: METEOR's fragmentation penalty
    "bertscore": 1.0,
    "parascore": 0.95,  # 1 + 0.05 * DS(0) = 1 - 0.05
    "parascore_free": 0.95,
    "bert_ibleu": 0.0,  # no lexical divergence at all
    "sbert": 1.0,
}
MODEL_METRICS = {"bertscore", "parascore", "parascore_free", "bert_ibleu", "sbert"}
# Closed ranges the scores live in (ParaScore adds omega * DS in [-1, 0.35]).
RANGES = {"parascore": (-1.05, 1.0175), "parascore_free": (-1.05, 1.0175), "ibleu": (-0.2, 1.0), "sbert": (-1.0, 1.0)}

NAMES = [pytest.param(name, marks=[pytest.mark.model] if name in MODEL_METRICS else []) for name in IDENTICAL]
GOOD = ("The cat drinks water in the kitchen.", "The cat drinks some water in the kitchen.")
UNICODE = [
    ("Le café est très bon ce matin.", "Ce café est délicieux ce matin."),
    ("東京は日本の首都です。", "日本の首都は東京です。"),
    ("I ❤️ my 🐱 so much!", "I love my cat 🐈 so much!"),
    ("Ελληνικά και русский текст.", "Русский текст и ελληνικά."),
]
WORDS = [f"token{i % 113}" for i in range(1200)]
LONG = (" ".join(WORDS), " ".join([*WORDS[:600], "different", *WORDS[601:]]))


@pytest.fixture(scope="session")
def metrics() -> dict[str, Metric]:
    return {name: build_metric(name) for name in IDENTICAL}


@pytest.mark.parametrize("name", NAMES)
def test_identical_sentences(metrics: dict[str, Metric], name: str) -> None:
    sentence = "The cat drinks water in the kitchen."
    assert metrics[name].score_batch([(sentence, sentence)])[0] == pytest.approx(IDENTICAL[name], abs=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_bad_pairs_get_their_own_error_and_the_rest_is_scored(metrics: dict[str, Metric], name: str) -> None:
    metric = metrics[name]
    pairs = [
        GOOD,
        ("", "The cat."),
        ("The cat.", "   "),
        ("The cat.", None),
        (3, "The cat."),
        ("only one",),
        "text",
        GOOD,
    ]
    outcomes = metric.score_many(pairs)
    assert [outcome.ok for outcome in outcomes] == [True, False, False, False, False, False, False, True]
    assert [outcome.error for outcome in outcomes[1:7]] == [
        "pair 1: source is empty",
        "pair 2: hypothesis is empty",
        "pair 3: hypothesis must be a string, got NoneType",
        "pair 4: source must be a string, got int",
        "pair 5: expected a (source, hypothesis) pair, got tuple",
        "pair 6: expected a (source, hypothesis) pair, got str",
    ]
    assert outcomes[0].value == pytest.approx(outcomes[7].value, abs=1e-6)
    assert outcomes[0].value == pytest.approx(metric.score_batch([GOOD])[0], abs=2e-5)
    with pytest.raises(InvalidPairError, match="pair 1: hypothesis is empty"):
        metric.score_batch([GOOD, ("The cat.", "")])
    assert metric.score_batch([]) == []


@pytest.mark.parametrize("name", NAMES)
def test_unicode_and_very_long_sentences(metrics: dict[str, Metric], name: str) -> None:
    metric = metrics[name]
    low, high = RANGES.get(name, (0.0, 1.0))
    values = metric.score_batch([*UNICODE, LONG])
    assert all(math.isfinite(value) and low - 1e-6 <= value <= high + 1e-6 for value in values), values
    # One changed word in 1,200 is almost a copy for every metric.
    closest = IDENTICAL[name]
    assert abs(values[-1] - closest) < 0.06, values[-1]
