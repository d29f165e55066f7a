"""BLEU (torchtext definition), sacreBLEU sentence BLEU, Self-BLEU, iBLEU and the tokenisers."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from scoring.metrics.base import InvalidPairError
from scoring.metrics.bleu import (
    IBleu,
    SacreSentenceBleu,
    SelfBleu,
    TorchtextBleu,
    torchtext_bleu,
    torchtext_bleu_corpus,
)
from scoring.metrics.tokenize import TOKENISERS, basic_english, get_tokeniser, moses_lower, tokeniser_config

EPS = 1e-12
CAT_IS = "The cat is alive"
CAT_WAS = "The cat was alive"


def test_torchtext_docstring_golden_value() -> None:
    # torchtext.data.metrics.bleu_score's own docstring example and result (float32 there).
    candidates = [["My", "full", "pytorch", "test"], ["Another", "Sentence"]]
    references = [[["My", "full", "pytorch", "test"], ["Completely", "Different"]], [["No", "Match"]]]
    assert torchtext_bleu_corpus(candidates, references) == pytest.approx(0.8408964276313782, abs=1e-7)
    # By hand: precisions 4/6, 3/4, 2/2, 1/1; lengths 6 and 4 + 2: no brevity penalty.
    assert torchtext_bleu_corpus(candidates, references) == pytest.approx((4 / 6 * 3 / 4) ** 0.25, abs=EPS)


@pytest.mark.parametrize(
    ("candidate", "reference", "expected"),
    [
        ("the cat sat on the mat", "the cat sat on the mat", 1.0),
        ("a b c d", "w x y z", 0.0),
        # No common 4-gram: 0 without smoothing, the torchtext default.
        (CAT_WAS, CAT_IS, 0.0),
        # Clipped precisions 5/6 ("the" twice, once in the reference), 3/5, 2/4, 1/3; c = 6, r = 7.
        (
            "the cat sat on the mat",
            "the cat sat on a mat today",
            math.exp(1 - 7 / 6) * (5 / 6 * 3 / 5 * 2 / 4 * 1 / 3) ** 0.25,
        ),
        # Candidate longer than the reference: no brevity penalty; precisions 4/5, 3/4, 2/3, 1/2.
        ("a b c d e", "a b c d", (4 / 5 * 3 / 4 * 2 / 3 * 1 / 2) ** 0.25),
        # Shorter than 4 tokens: no 4-gram at all, so 0 even for a copy.
        ("a b c", "a b c", 0.0),
    ],
)
def test_sentence_bleu_hand_computed(candidate: str, reference: str, expected: float) -> None:
    assert torchtext_bleu(candidate.split(), [reference.split()]) == pytest.approx(expected, abs=EPS)


def test_brevity_penalty_uses_the_closest_reference() -> None:
    candidate = ["a", "b", "c", "d", "e", "f"]
    short, long = ["a", "b", "c", "d"], ["a", "b", "c", "d", "e", "f", "g", "h"]
    # Every candidate n-gram is in the union of the references: BLEU is the brevity penalty alone.
    # 4 and 8 tokens are equally close to 6: the first reference listed sets r.
    assert torchtext_bleu(candidate, [short, long]) == pytest.approx(1.0, abs=EPS)  # r = 4 < c
    assert torchtext_bleu(candidate, [long, short]) == pytest.approx(math.exp(1 - 8 / 6), abs=EPS)
    assert torchtext_bleu(candidate, [long, ["a", "b", "c", "d", "e", "f", "g"]]) == pytest.approx(
        math.exp(1 - 7 / 6), abs=EPS
    )


def _torchtext_reference(candidate_corpus, references_corpus, max_n=4):  # type: ignore[no-untyped-def]
    """torchtext 0.18's bleu_score, transcribed (BSD-3-Clause), float32 arithmetic in torch included."""
    import torch

    def ngrams_iterator(token_list, ngrams):  # type: ignore[no-untyped-def]
        yield from token_list
        for n in range(2, ngrams + 1):
            for x in zip(*[token_list[i:] for i in range(n)], strict=False):
                yield " ".join(x)

    def counter(tokens):  # type: ignore[no-untyped-def]
        return Counter(tuple(x.split(" ")) for x in ngrams_iterator(tokens, max_n))

    clipped_counts = torch.zeros(max_n)
    total_counts = torch.zeros(max_n)
    weights = torch.tensor([0.25] * 4)
    candidate_len = 0.0
    refs_len = 0.0
    for candidate, refs in zip(candidate_corpus, references_corpus, strict=True):
        current_candidate_len = len(candidate)
        candidate_len += current_candidate_len
        refs_len_list = [float(len(ref)) for ref in refs]
        refs_len += min(refs_len_list, key=lambda x: abs(current_candidate_len - x))
        reference_counters = counter(refs[0])
        for ref in refs[1:]:
            reference_counters = reference_counters | counter(ref)
        clipped_counter = counter(candidate) & reference_counters
        for ngram, count in clipped_counter.items():
            clipped_counts[len(ngram) - 1] += count
        for i in range(max_n):
            total_counts[i] += max(current_candidate_len - i, 0)
    if min(clipped_counts) == 0:
        return 0.0
    pn = clipped_counts / total_counts
    log_pn = weights * torch.log(pn)
    score = torch.exp(sum(log_pn))
    bp = math.exp(min(1 - refs_len / candidate_len, 0))
    return bp * score.item()


def test_agrees_with_torchtext_on_random_corpora() -> None:
    rng = random.Random(7)
    vocabulary = ["the", "a", "cat", "dog", "sat", "on", "mat", "rug", "today", "and"]

    def sentence() -> list[str]:
        return [rng.choice(vocabulary) for _ in range(rng.randint(1, 14))]

    for _ in range(300):
        size = rng.randint(1, 3)
        candidates = [sentence() for _ in range(size)]
        references = [[sentence() for _ in range(rng.randint(1, 3))] for _ in range(size)]
        expected = _torchtext_reference(candidates, references)
        assert torchtext_bleu_corpus(candidates, references) == pytest.approx(expected, abs=1e-6)


def test_torchtext_basic_english_docstring_example() -> None:
    assert basic_english("You can now install TorchText using pip!") == [
        "you",
        "can",
        "now",
        "install",
        "torchtext",
        "using",
        "pip",
        "!",
    ]
    # Rules: quotes and ; : dropped, ' split off with its spaces, every full stop separated.
    assert basic_english('He said: "It\'s 2.5 (approx.)"; ok') == [
        "he",
        "said",
        "it",
        "'",
        "s",
        "2",
        ".",
        "5",
        "(",
        "approx",
        ".",
        ")",
        "ok",
    ]


def test_moses_lower_gives_the_glue_copy_of_mrpc() -> None:
    # MRPC train #1355540 and its text in the GLUE (Hugging Face glue/mrpc) copy the paper scored.
    raw = "He said the foodservice pie business doesn't fit the company's long-term growth strategy."
    glue = "He said the foodservice pie business doesn 't fit the company 's long-term growth strategy ."
    assert moses_lower(raw) == glue.lower().split()
    assert moses_lower("Tab shares were up 4.4%, at A$4.56.") == [
        "tab",
        "shares",
        "were",
        "up",
        "4.4",
        "%",
        ",",
        "at",
        "a",
        "$",
        "4.56",
        ".",
    ]


def test_tokeniser_names_and_versions() -> None:
    assert set(TOKENISERS) >= {"moses_lower", "whitespace", "basic_english", "nltk"}
    assert tokeniser_config("moses_lower")["tokeniser_library"].startswith("sacremoses==")
    assert tokeniser_config("whitespace") == {"tokeniser": "whitespace"}
    with pytest.raises(ValueError, match="unknown tokeniser 'spacy'"):
        get_tokeniser("spacy")
    with pytest.raises(ValueError, match="unknown tokeniser"):
        TorchtextBleu(tokeniser="spacy")


@pytest.mark.parametrize(
    ("source", "hypothesis", "expected"),
    [
        ("The cat sat on the mat.", "The cat sat on the mat.", 1.0),
        ("The cat sat on the mat.", "THE CAT SAT ON THE MAT.", 1.0),  # lowercased tokens
        ("a b c d", "w x y z", 0.0),
        (CAT_IS, CAT_WAS, 0.0),
        (
            "Le café est très bon ce matin.",
            "Le café est très bon.",
            math.exp(1 - 8 / 6) * (4 / 5 * 3 / 4 * 2 / 3) ** 0.25,
        ),
        ("東京 は 大きい 都市 です", "東京 は 大きい 都市 です", 1.0),
    ],
)
def test_bleu_metric_golden_values(source: str, hypothesis: str, expected: float) -> None:
    # The café row: hypothesis tokens "le café est très bon ." (6) against the 8 source tokens
    # "le café est très bon ce matin .": precisions 6/6, 4/5 ("bon ." is not there), 3/4, 2/3.
    assert TorchtextBleu().score_batch([(source, hypothesis)])[0] == pytest.approx(expected, abs=EPS)


def test_bleu_on_very_long_sentences() -> None:
    words = [f"w{i}" for i in range(1500)]
    source = " ".join(words)
    changed = " ".join([*words[:750], "changed", *words[751:]])
    # One substituted token: 1499/1500, 1497/1499, 1495/1498, 1493/1497 n-gram precisions.
    expected = (1499 / 1500 * 1497 / 1499 * 1495 / 1498 * 1493 / 1497) ** 0.25
    assert TorchtextBleu(tokeniser="whitespace").score_batch([(source, changed)])[0] == pytest.approx(expected, abs=EPS)


def test_sacrebleu_sentence_bleu_on_a_0_1_scale() -> None:
    metric = SacreSentenceBleu()
    cat, same = metric.score_batch([(CAT_IS + ".", CAT_WAS + "."), ("The cat sat.", "The cat sat.")])
    # 13a tokens "The cat was alive ." against "The cat is alive .": 4/5, 2/4, then exp smoothing
    # of the empty orders: 1/(2*3), 1/(4*2).
    assert cat == pytest.approx((4 / 5 * 2 / 4 * 1 / 6 * 1 / 8) ** 0.25, abs=EPS)
    assert same == pytest.approx(1.0, abs=EPS)
    assert metric.config()["scale"] == "0-1"


def test_self_bleu_is_bleu_against_the_source() -> None:
    pairs = [("the cat sat on a mat today", "the cat sat on the mat"), (CAT_IS, CAT_WAS)]
    assert SelfBleu().score_batch(pairs) == TorchtextBleu().score_batch(pairs)
    assert SelfBleu().config_hash != TorchtextBleu().config_hash


def test_ibleu_with_and_without_references() -> None:
    metric = IBleu(alpha=0.2)
    source, hypothesis = "the cat sat on a mat today", "the cat sat on the mat"
    self_bleu = math.exp(1 - 7 / 6) * (5 / 6 * 3 / 5 * 2 / 4 * 1 / 3) ** 0.25
    # No reference: the source stands in, iBLEU = (1 - alpha) * Self-BLEU.
    assert metric.score_batch([(source, hypothesis)])[0] == pytest.approx(0.8 * self_bleu, abs=EPS)
    # A reference equal to the hypothesis: BLEU = 1, iBLEU = 1 - alpha * Self-BLEU.
    scores = metric.score_with_references([(source, hypothesis), (source, hypothesis)], [hypothesis, None])
    assert scores[0] == pytest.approx(1 - 0.2 * self_bleu, abs=EPS)
    assert scores[1] == pytest.approx(0.8 * self_bleu, abs=EPS)
    assert IBleu(alpha=0.3).config_hash != metric.config_hash


def test_ibleu_refuses_bad_references() -> None:
    metric = IBleu()
    with pytest.raises(InvalidPairError, match="expected 2 references"):
        metric.score_with_references([("a b", "c d"), ("a b", "c d")], ["x"])
    with pytest.raises(InvalidPairError, match="pair 1: reference is empty"):
        metric.score_with_references([("a b", "c d"), ("a b", "c d")], [None, "  "])
    with pytest.raises(InvalidPairError, match="pair 0: reference must be a string or None, got int"):
        metric.score_with_references([("a b", "c d")], [3])


def test_every_tokeniser_runs() -> None:
    for name in TOKENISERS:
        tokens = get_tokeniser(name)("The cat's café costs $2.50, doesn't it?")
        assert tokens and all(isinstance(token, str) and token and " " not in token for token in tokens), name
