"""ParaScore, ParaScore.Free (Shen et al. 2022, eq. 7-8) and BERT-iBLEU (their appendix D), on our BERTScore.

    ParaScore      = max(Sim(X, C), Sim(R, C)) + omega * DS(X, C)
    ParaScore.Free = Sim(X, C) + omega * DS(X, C)
    DS(X, C)       = gamma                         if d > gamma
                     d * (gamma + 1) / gamma - 1   if 0 <= d <= gamma,   d = NED(X, C)

X is the source (input), C the hypothesis (candidate), R a reference paraphrase. Sim is
BERTScore F1, NED the character Levenshtein distance divided by the longer length (their
appendix C; the authors' toolkit calls ``nltk.edit_distance`` on the character strings),
gamma = 0.35 (the paper) and omega = 0.05 (the authors' toolkit). The PyPI ``parascore``
package is not used: it does not import on current Python and its ``free_score`` adds the
divergence to the (P, R, F) tuple instead of to F.

    BERT-iBLEU = (beta + 1) / (beta / BERTScore + 1 / (1 - SelfBLEU)),   beta = 4

a weighted harmonic mean of semantic similarity and lexical divergence (1 - Self-BLEU).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from scoring.metrics.base import Metric, Pair, check_pair, check_references
from scoring.metrics.bertscore import BertScore
from scoring.metrics.bleu import SelfBleu
from scoring.metrics.lexical import normalised_char_distance

DEFAULT_OMEGA = 0.05
DEFAULT_GAMMA = 0.35
DEFAULT_BETA = 4.0


def divergence_score(distance: float, gamma: float = DEFAULT_GAMMA) -> float:
    """DS of eq. 8: rises linearly from -1 (copy) to gamma at distance gamma, flat beyond."""
    if not 0.0 <= distance <= 1.0:
        raise ValueError(f"normalised distance must be in [0, 1], got {distance}")
    if distance > gamma:
        return gamma
    return distance * (gamma + 1.0) / gamma - 1.0


def _bertscore_options(options: dict[str, Any]) -> dict[str, Any]:
    allowed = {"idf_corpus", "rescale_with_baseline", "baseline_path", "lang", "batch_size"}
    unknown = set(options) - allowed
    if unknown:
        raise TypeError(f"unexpected options: {', '.join(sorted(unknown))}")
    return options


class ParaScoreFree(Metric):
    """ParaScore.Free: BERTScore F1 of (source, hypothesis) plus omega * DS(source, hypothesis)."""

    name: ClassVar[str] = "parascore_free"
    queue = "llm"
    description = "ParaScore.Free: BERTScore F1 + 0.05 * DS(normalised character edit distance, gamma 0.35)."

    def __init__(
        self,
        model: str = "embedded",
        num_layers: int = 6,
        device: str = "cpu",
        omega: float = DEFAULT_OMEGA,
        gamma: float = DEFAULT_GAMMA,
        **bertscore_options: Any,
    ) -> None:
        if not 0.0 < gamma < 1.0:
            raise ValueError("gamma must be between 0 and 1")
        self.similarity = BertScore(
            model=model, num_layers=num_layers, device=device, **_bertscore_options(bertscore_options)
        )
        self.omega = omega
        self.gamma = gamma

    def config(self) -> dict[str, Any]:
        return {
            "similarity": self.similarity.bertscore_config(),
            "omega": self.omega,
            "gamma": self.gamma,
            "distance": "character Levenshtein / longer length",
        }

    @property
    def label(self) -> str:
        return f"{self.name}[{self.similarity.model_label()}]"

    def check_available(self) -> None:
        self.similarity.check_available()

    def _divergence(self, pairs: Sequence[Pair]) -> list[float]:
        return [
            divergence_score(normalised_char_distance(source, hypothesis), self.gamma) for source, hypothesis in pairs
        ]

    def _score(self, pairs: list[Pair]) -> list[float]:
        similarity = self.similarity.f1([hypothesis for _, hypothesis in pairs], [source for source, _ in pairs])
        return [sim + self.omega * ds for sim, ds in zip(similarity, self._divergence(pairs), strict=True)]


class ParaScore(ParaScoreFree):
    """Reference-based ParaScore: max(Sim(source, hyp), Sim(reference, hyp)) + omega * DS(source, hyp).

    Pairs carry no separate reference, so :meth:`score_batch` (no references) gives the same
    numbers as ParaScore.Free: the max runs over the similarities that exist. Pass references to
    :meth:`score_with_references` (one per pair, ``None`` where a pair has none).
    """

    name: ClassVar[str] = "parascore"
    description = (
        "ParaScore: max(BERTScore(source, hyp), BERTScore(reference, hyp)) + 0.05 * DS; "
        "without a reference it equals ParaScore.Free."
    )

    def config(self) -> dict[str, Any]:
        return {**super().config(), "missing_reference": "max over the source only (= ParaScore.Free)"}

    def score_with_references(self, pairs: Sequence[object], references: Sequence[object] | None) -> list[float]:
        """Score (source, hypothesis) pairs with one optional reference paraphrase each."""
        checked = [check_pair(pair, index) for index, pair in enumerate(pairs)]
        refs = check_references(references, len(checked))
        if not checked:
            return []
        self.check_available()
        return self._score_with(checked, refs)

    def _score_with(self, pairs: list[Pair], references: list[str | None]) -> list[float]:
        given = [(index, reference) for index, reference in enumerate(references) if reference is not None]
        hypotheses = [hypothesis for _, hypothesis in pairs]
        # One BERTScore call for both similarities: bert_score embeds each distinct sentence once.
        similarity = self.similarity.f1(
            hypotheses + [hypotheses[index] for index, _ in given],
            [source for source, _ in pairs] + [reference for _, reference in given],
        )
        best = similarity[: len(pairs)]
        for (index, _), value in zip(given, similarity[len(pairs) :], strict=True):
            best[index] = max(best[index], value)
        return [sim + self.omega * ds for sim, ds in zip(best, self._divergence(pairs), strict=True)]

    def _score(self, pairs: list[Pair]) -> list[float]:
        return self._score_with(pairs, [None] * len(pairs))


class BertIBleu(Metric):
    """BERT-iBLEU (Niu et al. 2021, as defined in Shen et al. 2022 eq. 10), beta = 4.

    Self-BLEU is this project's BLEU (torchtext definition, Moses tokens lowercased) of the
    hypothesis against the source. When a term of the harmonic mean is not positive (a copy of
    the source has Self-BLEU 1; BERTScore can be <= 0) the mean is 0, its limit.
    """

    name: ClassVar[str] = "bert_ibleu"
    queue = "llm"
    description = "BERT-iBLEU: weighted harmonic mean of BERTScore F1 (weight 4) and 1 - Self-BLEU (weight 1)."

    def __init__(
        self,
        model: str = "embedded",
        num_layers: int = 6,
        device: str = "cpu",
        beta: float = DEFAULT_BETA,
        tokeniser: str | None = None,
        **bertscore_options: Any,
    ) -> None:
        if beta <= 0:
            raise ValueError("beta must be positive")
        self.similarity = BertScore(
            model=model, num_layers=num_layers, device=device, **_bertscore_options(bertscore_options)
        )
        self.self_bleu = SelfBleu(tokeniser=tokeniser)
        self.beta = beta

    def config(self) -> dict[str, Any]:
        return {
            "similarity": self.similarity.bertscore_config(),
            "self_bleu": self.self_bleu.bleu_config(),
            "beta": self.beta,
        }

    @property
    def label(self) -> str:
        return f"{self.name}[{self.similarity.model_label()}]"

    def check_available(self) -> None:
        self.similarity.check_available()

    def _score(self, pairs: list[Pair]) -> list[float]:
        hypotheses = [hypothesis for _, hypothesis in pairs]
        sources = [source for source, _ in pairs]
        similarity = self.similarity.f1(hypotheses, sources)
        self_bleu = self.self_bleu.bleu_against(hypotheses, sources)
        return [bert_ibleu(sim, sb, self.beta) for sim, sb in zip(similarity, self_bleu, strict=True)]


def bert_ibleu(bertscore: float, self_bleu: float, beta: float = DEFAULT_BETA) -> float:
    """(beta + 1) / (beta / bertscore + 1 / (1 - self_bleu)); 0 when a term is not positive."""
    divergence = 1.0 - self_bleu
    if bertscore <= 0.0 or divergence <= 0.0:
        return 0.0
    return (beta + 1.0) / (beta / bertscore + 1.0 / divergence)
