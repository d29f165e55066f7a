"""ParaPLUIE (Lemesle et al., COLING 2025): a causal LM's log-likelihood ratio of "yes" vs "no".

ParaPLUIE(S, H) = log p(yes | Tpl(S, H)) - log p(no | Tpl(S, H)): positive when the model
leans to "these sentences mean the same thing", with a natural threshold at 0. One metric per
prompt template (``parapluie_direct``, ``parapluie_indirect``, ``parapluie_fs_direct`` and any
template a researcher adds, see :mod:`scoring.metrics.templates`).

Constructing a :class:`ParaPluie` reads the template and identifies the model without loading
anything, so the web process can hash its configuration; the model loads on the first score
(:mod:`scoring.metrics.lm`) and the arithmetic lives in :mod:`scoring.metrics.parapluie_engine`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from scoring.metrics import tuned
from scoring.metrics.base import Direction, InvalidPairError, Metric, Pair, ScoreOutcome, check_pair
from scoring.metrics.lm import DTYPES, CausalLM, TunedLM, check_model_available, describe_model, load_lm, load_tuned
from scoring.metrics.parapluie_engine import ReferenceScore, TemplateScorer, encode, scorer_for
from scoring.metrics.templates import PromptTemplate, TemplateKind, get_template

T = TypeVar("T")

# Bump when a change here changes ParaPLUIE's numbers for the same model and template.
PARAPLUIE_VERSION = 1


class ParaPluie(Metric):
    """ParaPLUIE with one prompt template on one causal LM (see the module docstring)."""

    name: ClassVar[str] = "parapluie"  # each instance is parapluie_<template>
    direction = Direction.HIGHER_IS_CLOSER
    natural_threshold = 0.0
    queue = "llm"
    description = "log p(yes) - log p(no) of a causal LM after a prompt template (Lemesle et al., 2025)."

    def __init__(
        self,
        template: str = "fs_direct",
        model: str = "embedded",
        device: str = "cpu",
        dtype: str = "float32",
        batch_size: int = 16,
        max_new_tokens: int = 48,
        *,
        allow_download: bool | None = None,
        template_dirs: Iterable[str | Path] | None = None,
    ) -> None:
        if dtype not in DTYPES:
            raise ValueError(f"ParaPLUIE dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
        if batch_size < 1:
            raise ValueError(f"ParaPLUIE batch_size must be at least 1, got {batch_size}")
        if max_new_tokens < 1:
            raise ValueError(f"ParaPLUIE max_new_tokens must be at least 1, got {max_new_tokens}")
        self.template: PromptTemplate = get_template(template, template_dirs)
        self.name = f"parapluie_{self.template.name}"  # type: ignore[misc]
        self.model_spec = model
        self.device = device
        self.dtype = dtype
        self.batch_size = batch_size
        self.max_new_tokens = max_new_tokens
        self.source = describe_model(model)
        if self.source.kind == "tuned" and self.source.problem is None:
            manifest = tuned.read_manifest(self.source.location)
            if manifest.template != self.template.name:
                raise ValueError(
                    f"the tuned judge {manifest.name} was tuned with the template {manifest.template!r}; "
                    f"it does not judge with {self.template.name!r}"
                )
        if allow_download is None:
            from scoring.metrics import environment

            allow_download = environment.current().allow_download
        self.allow_download = allow_download

    # --- Identity ---------------------------------------------------------------------------

    def config(self) -> dict[str, Any]:
        """Model identity, dtype, template (name and text hash), answers, E's cap for INDIRECT.

        Device and batch size change nothing but rounding, so they are left out.
        """
        config: dict[str, Any] = {
            "model": self.source.identity,
            "dtype": self.dtype,
            "template": self.template.name,
            "template_sha256": self.template.text_hash,
            "answers": [self.template.yes, self.template.no],
            "method": "log_softmax_last_position",
            "version": PARAPLUIE_VERSION,
        }
        if self.template.kind is TemplateKind.INDIRECT:
            config["max_new_tokens"] = self.max_new_tokens
            config["generation"] = "greedy"
        return config

    @property
    def label(self) -> str:
        detail = self.source.label if self.dtype == "float32" else f"{self.source.label}, {self.dtype}"
        return f"{self.name}[{detail}]"

    # --- Running ----------------------------------------------------------------------------

    def check_available(self) -> None:
        """Cheap checks (packages, files); answer-token problems surface when the model loads."""
        check_model_available(self.source, allow_download=self.allow_download)

    @property
    def is_tuned(self) -> bool:
        return self.source.kind == "tuned"

    def language_model(self) -> CausalLM:
        """The loaded model (once per process); a tuned judge's full adapter."""
        self.check_available()
        if self.is_tuned:
            return self.tuned_model().views[tuned.FULL]
        return load_lm(self.model_spec, self.device, self.dtype, allow_download=self.allow_download)

    def tuned_model(self) -> TunedLM:
        """A tuned judge's base copy with all its adapters (once per process)."""
        self.check_available()
        return load_tuned(self.model_spec, self.device, self.dtype, allow_download=self.allow_download)

    def scorer(self) -> TemplateScorer:
        """The template's scorer on the loaded model (answer tokens checked, prefixes found)."""
        return scorer_for(self.language_model(), self.template)

    def _score(self, pairs: list[Pair]) -> list[float]:
        return self._routed(
            pairs,
            lambda scorer, chunk: scorer.score(chunk, batch_size=self.batch_size, max_new_tokens=self.max_new_tokens),
        )

    def adapters_for(self, pairs: Sequence[Pair]) -> list[str]:
        """A tuned judge: the adapter that scores each pair (its fold's when it was trained on it)."""
        folds = self.tuned_model().folds
        return tuned.route([tuned.pair_key(source, hypothesis) for source, hypothesis in pairs], folds)

    def _routed(self, pairs: Sequence[Pair], run: Callable[[TemplateScorer, list[Pair]], list[T]]) -> list[T]:
        """``run`` on the scorer of each pair's model: the plain model, or a tuned judge's adapters in turn."""
        if not self.is_tuned:
            return run(self.scorer(), list(pairs))
        model = self.tuned_model()
        groups: dict[str, list[int]] = {}
        for index, adapter in enumerate(self.adapters_for(pairs)):
            groups.setdefault(adapter, []).append(index)
        results: dict[int, T] = {}
        for adapter, indexes in sorted(groups.items()):
            with model.active(adapter) as view:
                values = run(scorer_for(view, self.template), [pairs[index] for index in indexes])
            results.update(zip(indexes, values, strict=True))
        return [results[index] for index in range(len(pairs))]

    def score_with_adapter(self, pairs: Sequence[Pair], adapter: str) -> list[float]:
        """A tuned judge's fast-path scores with one given adapter (tests: which adapter scored a pair)."""
        checked = [check_pair(pair, index) for index, pair in enumerate(pairs)]
        with self.tuned_model().active(adapter) as view:
            return scorer_for(view, self.template).score(
                checked, batch_size=self.batch_size, max_new_tokens=self.max_new_tokens
            )

    def score_many(self, pairs: Sequence[object]) -> list[ScoreOutcome]:
        """As :meth:`Metric.score_many`; a prompt too long for the model fails alone, up front,
        so the other pairs stay batched."""
        outcomes: dict[int, ScoreOutcome] = {}
        fitting: list[int] = []
        scorer: TemplateScorer | None = None
        for index, pair in enumerate(pairs):
            try:
                checked = check_pair(pair, index)
                scorer = scorer or self.scorer()
                length = len(encode(scorer.lm, scorer.question_text(*checked)))
                scorer.check_length(length, index, max_new_tokens=self.max_new_tokens)
            except InvalidPairError as error:
                outcomes[index] = ScoreOutcome(None, str(error))
                continue
            fitting.append(index)
        if fitting:
            for index, outcome in zip(fitting, super().score_many([pairs[i] for i in fitting]), strict=True):
                outcomes[index] = outcome
        return [outcomes[index] for index in range(len(pairs))]

    # --- For tests and the benchmark --------------------------------------------------------

    def explanations(self, pairs: Sequence[Pair]) -> list[str]:
        """INDIRECT: the explanations E the model generates (greedy, at most max_new_tokens)."""
        checked = [check_pair(pair, index) for index, pair in enumerate(pairs)]
        return self._routed(
            checked,
            lambda scorer, chunk: scorer.explanations(
                chunk, batch_size=self.batch_size, max_new_tokens=self.max_new_tokens
            ),
        )

    def score_with_explanations(self, pairs: Sequence[Pair], explanations: Sequence[str]) -> list[float]:
        """INDIRECT: the fast-path score given already generated explanations."""
        checked = [check_pair(pair, index) for index, pair in enumerate(pairs)]
        if self.is_tuned:
            raise ValueError("tuned judges are tuned on question templates only (no INDIRECT)")
        return self.scorer().score_follow_ups(checked, explanations, batch_size=self.batch_size)

    def reference_scores(self, pairs: Sequence[Pair], explanations: Sequence[str] | None = None) -> list[float]:
        """The paper's two-pass formula on the same prompts (slow; for tests and the benchmark)."""
        return [result.value for result in self.reference_details(pairs, explanations)]

    def reference_details(
        self, pairs: Sequence[Pair], explanations: Sequence[str] | None = None
    ) -> list[ReferenceScore]:
        checked = [check_pair(pair, index) for index, pair in enumerate(pairs)]
        if explanations is not None:
            return self.scorer().reference(checked, explanations)
        return self._routed(checked, lambda scorer, chunk: scorer.reference(chunk))
