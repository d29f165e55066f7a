"""LEV and WER on worked examples computed by hand (edit operations counted in the comments)."""

from __future__ import annotations

import pytest

from scoring.metrics.lexical import Levenshtein, WordEditRate, words

EPS = 1e-12
CAT_IS = "The cat is alive"
CAT_WAS = "The cat was alive"
LONG = " ".join(f"word{i % 97}" for i in range(2000))


@pytest.mark.parametrize(
    ("source", "hypothesis", "expected"),
    [
        ("The cat drinks.", "The cat drinks.", 0.0),
        ("abc", "xyz", 1.0),  # 3 substitutions / 3
        (CAT_IS, CAT_WAS, 2 / 17),  # "is" -> "was": insert w, substitute i -> a; longer string: 17 chars
        ("kitten", "sitting", 3 / 7),  # the textbook example: k->s, e->i, insert g
        ("café", "cafe", 1 / 4),  # one code point differs
        ("我爱你", "我恨你", 1 / 3),
        ("a 🐱 b", "a 🐶 b", 1 / 5),  # an emoji is one code point
        ("short", "short and much longer", 16 / 21),  # 16 insertions / longer length
        (LONG, LONG.replace("word5 ", "word6 ", 1), 1 / len(LONG)),  # one character changed
    ],
)
def test_lev_golden_values(source: str, hypothesis: str, expected: float) -> None:
    assert Levenshtein().score_batch([(source, hypothesis)])[0] == pytest.approx(expected, abs=EPS)


def test_lev_is_symmetric() -> None:
    metric = Levenshtein()
    pairs = [(CAT_IS, CAT_WAS), ("kitten", "sitting"), ("short", "short and much longer")]
    assert metric.score_batch(pairs) == metric.score_batch([(b, a) for a, b in pairs])


def test_words_split_punctuation_from_words() -> None:
    assert words("The cat's toy, isn't it?") == ["The", "cat", "'", "s", "toy", ",", "isn", "'", "t", "it", "?"]
    assert words("naïve café 東京") == ["naïve", "café", "東京"]


@pytest.mark.parametrize(
    ("source", "hypothesis", "expected"),
    [
        ("The cat drinks.", "The cat drinks.", 0.0),
        ("a b c", "x y z", 1.0),
        (CAT_IS, CAT_WAS, 1 / 4),  # one substituted word among 4
        (CAT_IS + ".", CAT_WAS + ".", 1 / 5),  # the full stop is a word
        ("a b c", "a b c d e", 2 / 5),  # two insertions / the longer sentence's 5 words
        ("a b c d e", "a b c", 2 / 5),  # symmetric with max-length normalisation
        ("Le café est très bon", "Le café est bon", 1 / 5),
        (LONG, LONG.replace("word5 ", "word6 ", 1), 1 / 2000),
    ],
)
def test_wer_golden_values(source: str, hypothesis: str, expected: float) -> None:
    assert WordEditRate().score_batch([(source, hypothesis)])[0] == pytest.approx(expected, abs=EPS)


@pytest.mark.parametrize(
    ("source", "hypothesis", "expected"),
    [
        ("a b c", "a b c d e", 2 / 5),  # divided by the hypothesis' 5 words
        ("a b c d e", "a b c", 2 / 3),  # divided by the hypothesis' 3 words
        (CAT_IS, CAT_WAS, 1 / 4),
        ("a b", "c d e f", 4 / 4),  # 2 substitutions + 2 insertions
    ],
)
def test_wer_normalised_by_hypothesis_length(source: str, hypothesis: str, expected: float) -> None:
    metric = WordEditRate(normalisation="hypothesis_length")
    assert metric.score_batch([(source, hypothesis)])[0] == pytest.approx(expected, abs=EPS)
    assert metric.label == "wer[hypothesis_length]"


def test_wer_refuses_unknown_normalisation() -> None:
    with pytest.raises(ValueError, match="max_length, hypothesis_length"):
        WordEditRate(normalisation="reference")


def test_edit_distances_are_lower_is_closer() -> None:
    assert not Levenshtein().higher_is_closer
    assert not WordEditRate().higher_is_closer
