"""BLEU as the ParaPLUIE paper used it (torchtext's ``bleu_score``), sacreBLEU's sentence BLEU,
and the BLEU-based paraphrase metrics Self-BLEU and iBLEU (Shen et al. 2022, appendix D).

Every metric here scores the hypothesis (candidate) against the source (reference), on a
0-1 scale, higher meaning lexically closer.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from functools import cache
from typing import Any, ClassVar

from scoring.metrics.base import Metric, Pair, check_pair, check_references
from scoring.metrics.tokenize import check_tokeniser, get_tokeniser, package_version, tokeniser_config

# torchtext.data.metrics.bleu_score defaults (torchtext 0.6-0.18).
DEFAULT_MAX_N = 4


def _ngram_counts(tokens: Sequence[str], max_n: int) -> Counter[tuple[str, ...]]:
    counts: Counter[tuple[str, ...]] = Counter()
    for n in range(1, max_n + 1):
        counts.update(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
    return counts


def torchtext_bleu_corpus(
    candidates: Sequence[Sequence[str]],
    references_corpus: Sequence[Sequence[Sequence[str]]],
    max_n: int = DEFAULT_MAX_N,
    weights: Sequence[float] | None = None,
) -> float:
    """``torchtext.data.metrics.bleu_score(candidates, references_corpus, max_n, weights)``, reimplemented.

    Clipped n-gram counts up to ``max_n`` against the union (maximum counts) of each candidate's
    references, summed over the corpus; weighted geometric mean of the precisions (uniform
    weights by default), no smoothing: 0 when any order has no match at all. Brevity penalty
    ``exp(min(1 - r / c, 0))`` with ``c`` the total candidate length and ``r`` the sum, over
    candidates, of the reference length closest to the candidate's (the first one on a tie).
    torchtext did the arithmetic in float32; this does it in float64 (they agree to ~1e-7).
    """
    if weights is None:
        weights = [1.0 / max_n] * max_n
    if len(weights) != max_n:
        raise ValueError(f"{len(weights)} weights for max_n={max_n}")
    if len(candidates) != len(references_corpus):
        raise ValueError("as many reference lists as candidates are needed")
    clipped = [0] * max_n
    totals = [0] * max_n
    candidate_len = reference_len = 0
    for candidate, references in zip(candidates, references_corpus, strict=True):
        if not references:
            raise ValueError("BLEU needs at least one reference per candidate")
        length = len(candidate)
        candidate_len += length
        reference_len += min((len(reference) for reference in references), key=lambda ref_len: abs(length - ref_len))
        reference_counts: Counter[tuple[str, ...]] = Counter()
        for reference in references:
            reference_counts |= _ngram_counts(reference, max_n)
        for ngram, count in (_ngram_counts(candidate, max_n) & reference_counts).items():
            clipped[len(ngram) - 1] += count
        for order in range(max_n):
            totals[order] += max(length - order, 0)
    if min(clipped) == 0:
        return 0.0
    log_precision = sum(
        weight * math.log(matches / total) for weight, matches, total in zip(weights, clipped, totals, strict=True)
    )
    brevity_penalty = math.exp(min(1.0 - reference_len / candidate_len, 0.0))
    return brevity_penalty * math.exp(log_precision)


def torchtext_bleu(
    candidate: Sequence[str],
    references: Sequence[Sequence[str]],
    max_n: int = DEFAULT_MAX_N,
    weights: Sequence[float] | None = None,
) -> float:
    """BLEU of one tokenised candidate against its tokenised references, torchtext's definition."""
    return torchtext_bleu_corpus([candidate], [references], max_n, weights)


@cache
def _sacrebleu(tokenize: str, smooth_method: str, lowercase: bool) -> Any:
    from sacrebleu.metrics.bleu import BLEU

    return BLEU(tokenize=tokenize, smooth_method=smooth_method, lowercase=lowercase, effective_order=True)


def sacre_sentence_bleu(
    hypothesis: str,
    references: Sequence[str],
    tokenize: str = "13a",
    smooth_method: str = "exp",
    lowercase: bool = False,
) -> float:
    """``sacrebleu.sentence_bleu`` (effective order, its own tokeniser) divided by 100."""
    return (
        float(_sacrebleu(tokenize, smooth_method, lowercase).sentence_score(hypothesis, list(references)).score) / 100.0
    )


class TorchtextBleu(Metric):
    """BLEU of the hypothesis against the source, as torchtext's ``bleu_score`` with its defaults.

    The tokeniser (default ``moses_lower``) is the one that reproduces the ParaPLUIE paper's
    Table 1 MRPC column; see :mod:`scoring.metrics.tokenize`.
    """

    name: ClassVar[str] = "bleu"
    description = (
        "BLEU-4 of the hypothesis against the source as torchtext's bleu_score (uniform weights, "
        "no smoothing, brevity penalty), on Moses tokens lowercased."
    )
    default_tokeniser: ClassVar[str] = "moses_lower"

    def __init__(self, tokeniser: str | None = None, max_n: int = DEFAULT_MAX_N) -> None:
        self.tokeniser = check_tokeniser(tokeniser or self.default_tokeniser)
        if max_n < 1:
            raise ValueError("max_n must be at least 1")
        self.max_n = max_n

    def bleu_config(self) -> dict[str, Any]:
        return {
            "bleu": "torchtext.data.metrics.bleu_score (reimplemented)",
            "max_n": self.max_n,
            "weights": "uniform",
            "smoothing": "none",
            **tokeniser_config(self.tokeniser),
            "candidate": "hypothesis",
            "reference": "source",
        }

    def config(self) -> dict[str, Any]:
        return self.bleu_config()

    @property
    def label(self) -> str:
        options = [] if self.tokeniser == self.default_tokeniser else [self.tokeniser]
        if self.max_n != DEFAULT_MAX_N:
            options.append(f"max_n={self.max_n}")
        return f"{self.name}[{' '.join(options)}]" if options else self.name

    def bleu_against(self, hypotheses: Sequence[str], references: Sequence[str]) -> list[float]:
        """BLEU of each hypothesis against the matching reference text."""
        tokenise = get_tokeniser(self.tokeniser)
        return [
            torchtext_bleu(tokenise(hypothesis), [tokenise(reference)], self.max_n)
            for hypothesis, reference in zip(hypotheses, references, strict=True)
        ]

    def _score(self, pairs: list[Pair]) -> list[float]:
        return self.bleu_against([hypothesis for _, hypothesis in pairs], [source for source, _ in pairs])


class SacreSentenceBleu(Metric):
    """sacreBLEU's sentence BLEU of the hypothesis against the source, on a 0-1 scale.

    Unlike :class:`TorchtextBleu` it smooths (``exp``), uses only the n-gram orders that can
    match (effective order) and its own ``13a`` tokeniser, case-sensitive.
    """

    name: ClassVar[str] = "sacrebleu"
    description = "sacreBLEU sentence BLEU (13a tokeniser, exp smoothing, effective order), divided by 100."

    def __init__(self, tokenize: str = "13a", smooth_method: str = "exp", lowercase: bool = False) -> None:
        if smooth_method not in {"none", "floor", "add-k", "exp"}:
            raise ValueError(f"unknown sacreBLEU smoothing {smooth_method!r}")
        self.tokenize = tokenize
        self.smooth_method = smooth_method
        self.lowercase = lowercase

    def config(self) -> dict[str, Any]:
        return {
            "library": f"sacrebleu=={package_version('sacrebleu')}",
            "tokenize": self.tokenize,
            "smooth_method": self.smooth_method,
            "lowercase": self.lowercase,
            "effective_order": True,
            "scale": "0-1",
            "candidate": "hypothesis",
            "reference": "source",
        }

    def _score(self, pairs: list[Pair]) -> list[float]:
        return [
            sacre_sentence_bleu(hypothesis, [source], self.tokenize, self.smooth_method, self.lowercase)
            for source, hypothesis in pairs
        ]


class SelfBleu(TorchtextBleu):
    """Self-BLEU = BLEU(input, candidate) (Shen et al. 2022, appendix D).

    On (source, hypothesis) pairs the input is the source, so with the default torchtext BLEU
    it equals ``bleu``; it is listed under its own name because iBLEU and BERT-iBLEU are built
    on it and generation papers report it (as 1 - Self-BLEU, a diversity score).
    """

    name: ClassVar[str] = "self_bleu"
    description = "Self-BLEU: BLEU (torchtext definition) of the hypothesis against its input sentence."


class IBleu(TorchtextBleu):
    """iBLEU = BLEU(candidate, reference) - alpha * Self-BLEU(input, candidate) (Shen et al. 2022, eq. 11).

    ``alpha`` defaults to 0.2, the value of iBLEU(0.2) in that paper's Table 9 (its appendix D
    says 0.3 is usual). Pairs carry no separate reference: :meth:`score_with_references` takes
    them; a pair without one uses its source, which makes iBLEU = (1 - alpha) * Self-BLEU.
    """

    name: ClassVar[str] = "ibleu"
    description = (
        "iBLEU: BLEU(hypothesis, reference) - alpha * Self-BLEU; the source stands in for a missing reference."
    )

    def __init__(self, alpha: float = 0.2, tokeniser: str | None = None, max_n: int = DEFAULT_MAX_N) -> None:
        super().__init__(tokeniser=tokeniser, max_n=max_n)
        if not 0.0 <= alpha <= 1.0:
            raise ValueError("alpha must be between 0 and 1")
        self.alpha = alpha

    def config(self) -> dict[str, Any]:
        return {**self.bleu_config(), "alpha": self.alpha, "missing_reference": "source"}

    @property
    def label(self) -> str:
        return f"{self.name}[alpha={self.alpha:g}]"

    def score_with_references(self, pairs: Sequence[object], references: Sequence[object] | None) -> list[float]:
        """Score (source, hypothesis) pairs against one optional reference each (``None``: the source)."""
        checked = [check_pair(pair, index) for index, pair in enumerate(pairs)]
        refs = check_references(references, len(checked))
        return self._score_with(checked, refs)

    def _score_with(self, pairs: list[Pair], references: list[str | None]) -> list[float]:
        hypotheses = [hypothesis for _, hypothesis in pairs]
        self_bleu = self.bleu_against(hypotheses, [source for source, _ in pairs])
        # BLEU against the reference; the source (so Self-BLEU itself) where a pair has none.
        bleu = list(self_bleu)
        given = [(index, reference) for index, reference in enumerate(references) if reference is not None]
        if given:
            values = self.bleu_against([hypotheses[index] for index, _ in given], [reference for _, reference in given])
            for (index, _), value in zip(given, values, strict=True):
                bleu[index] = value
        return [b - self.alpha * s for b, s in zip(bleu, self_bleu, strict=True)]

    def _score(self, pairs: list[Pair]) -> list[float]:
        return self._score_with(pairs, [None] * len(pairs))
