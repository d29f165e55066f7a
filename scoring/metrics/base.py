"""The one interface every metric implements.

A metric is cheap to construct (no model is loaded until the first score), so the web
process can compute configuration hashes without importing torch. Heavy models are loaded
once per process by ``functools.lru_cache`` loaders: ``load_bert`` and
``load_sentence_encoder`` in :mod:`scoring.metrics.encoders`, ``_idf_weights`` in
:mod:`scoring.metrics.bertscore`, and the judge models' ``_load`` and ``_load_tuned`` in
:mod:`scoring.metrics.lm`.
"""

from __future__ import annotations

import hashlib
import json
import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

# Bump when a change to shared scoring code changes numbers for every metric.
INTERFACE_VERSION = 1

Pair = tuple[str, str]


class Direction(StrEnum):
    """Whether a larger score means the two sentences are closer (BLEU) or further (LEV)."""

    HIGHER_IS_CLOSER = "higher"
    LOWER_IS_CLOSER = "lower"


class MetricError(Exception):
    """Base class of the errors a metric reports about itself or its input."""


class InvalidPairError(MetricError, ValueError):
    """A pair that cannot be scored (empty text, not a string…); the message says which and why."""


class MetricUnavailable(MetricError):
    """The metric cannot run here (missing model, missing WordNet…); the message says why."""


@dataclass(frozen=True)
class ScoreOutcome:
    """The result for one pair: a value, or the reason it could not be scored."""

    value: float | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def check_pair(pair: object, index: int = 0) -> Pair:
    """Return ``pair`` as a (source, hypothesis) tuple or raise :class:`InvalidPairError`."""
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise InvalidPairError(f"pair {index}: expected a (source, hypothesis) pair, got {type(pair).__name__}")
    for role, text in zip(("source", "hypothesis"), pair, strict=True):
        if not isinstance(text, str):
            raise InvalidPairError(f"pair {index}: {role} must be a string, got {type(text).__name__}")
        if not text.strip():
            raise InvalidPairError(f"pair {index}: {role} is empty")
    return (pair[0], pair[1])


def check_references(references: Sequence[object] | None, count: int) -> list[str | None]:
    """Validate optional per-pair references (reference-based metrics): ``None`` or text for each pair.

    ``None`` for the whole list means no pair has a reference. Raises :class:`InvalidPairError`
    naming the first bad entry.
    """
    if references is None:
        return [None] * count
    if isinstance(references, str) or len(references) != count:
        raise InvalidPairError(f"expected {count} references (one per pair, None where a pair has none)")
    checked: list[str | None] = []
    for index, reference in enumerate(references):
        if reference is None:
            checked.append(None)
        elif not isinstance(reference, str):
            raise InvalidPairError(f"pair {index}: reference must be a string or None, got {type(reference).__name__}")
        elif not reference.strip():
            raise InvalidPairError(f"pair {index}: reference is empty")
        else:
            checked.append(reference)
    return checked


def config_hash(name: str, config: dict[str, Any]) -> str:
    """A stable SHA-256 of the metric name and its configuration (canonical JSON)."""
    payload = json.dumps(
        {"metric": name, "config": config, "interface": INTERFACE_VERSION},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class Metric(ABC):
    """A paraphrase metric over (source, hypothesis) pairs: the interface of the built-in metrics
    and of the plug-ins (a class a package declares under the entry-point group ``paraeval.metrics``).

    Subclasses set the class attributes, return everything that changes their numbers from
    :meth:`config`, and implement :meth:`_score` on pairs that are already validated: one float
    per pair, in order. Construction must be cheap (load models on the first score). A plug-in
    takes the options of its spec (``name[key=value]``) as string keyword arguments of its
    constructor, the keys listed in :attr:`spec_keys`.
    """

    name: ClassVar[str]
    direction: ClassVar[Direction] = Direction.HIGHER_IS_CLOSER
    natural_threshold: ClassVar[float | None] = None
    # Celery queue: "llm" for transformer models, "cpu" for lexical metrics; a plug-in may name its own.
    queue: ClassVar[str] = "cpu"
    description: ClassVar[str] = ""
    # The spec options (name[key=value,...]) a plug-in's constructor takes, as strings.
    spec_keys: ClassVar[tuple[str, ...]] = ()
    # A plug-in's distribution (name, version), set by the registry and hashed into its
    # configuration: upgrading the package gives a new configuration, never mixed scores.
    package: tuple[str, str] | None = None

    def config(self) -> dict[str, Any]:
        """Everything that changes the scores (model, template, layer, tokeniser…)."""
        return {}

    def identity(self) -> dict[str, Any]:
        """What is stored and hashed as the configuration: :meth:`config`, and a plug-in's package."""
        config = self.config()
        if self.package is not None:
            config = {**config, "package": {"name": self.package[0], "version": self.package[1]}}
        return config

    @property
    def config_hash(self) -> str:
        return config_hash(self.name, self.identity())

    @property
    def label(self) -> str:
        """Display name; subclasses with a model append it, e.g. ``bertscore[all-MiniLM-L6-v2]``."""
        return self.name

    @property
    def higher_is_closer(self) -> bool:
        return self.direction is Direction.HIGHER_IS_CLOSER

    def check_available(self) -> None:  # noqa: B027 - optional hook, most metrics always run
        """Raise :class:`MetricUnavailable` with the reason if the metric cannot run here.

        Keep it cheap (look for files and packages, load no model): ``manage.py list_metrics``
        calls it for every metric without ``--check``. A model that is there but fails to load
        raises :class:`MetricUnavailable` from scoring instead.
        """

    def score_batch(self, pairs: Sequence[Pair]) -> list[float]:
        """Score every pair; raise :class:`InvalidPairError` naming the first bad pair."""
        checked = [check_pair(pair, index) for index, pair in enumerate(pairs)]
        if not checked:
            return []
        self.check_available()
        values = self._score(checked)
        if len(values) != len(checked):
            raise MetricError(f"{self.name} returned {len(values)} scores for {len(checked)} pairs")
        return [float(value) for value in values]

    def score_many(self, pairs: Sequence[object]) -> list[ScoreOutcome]:
        """Score every pair, isolating failures: a bad pair gets its error, the others a value.

        Unlike :meth:`score_batch` this never raises for one bad input; it still raises
        :class:`MetricUnavailable` when the metric cannot run at all.
        """
        outcomes: list[ScoreOutcome | None] = [None] * len(pairs)
        valid: list[tuple[int, Pair]] = []
        for index, pair in enumerate(pairs):
            try:
                valid.append((index, check_pair(pair, index)))
            except InvalidPairError as error:
                outcomes[index] = ScoreOutcome(None, str(error))
        if valid:
            self.check_available()
            try:
                values = self._score([pair for _, pair in valid])
                results = [_outcome(value) for value in values]
                if len(results) != len(valid):
                    raise MetricError(f"{self.name} returned {len(results)} scores for {len(valid)} pairs")
            except MetricUnavailable:
                raise
            except Exception:
                if len(valid) == 1:
                    raise
                # One pair broke the batch: score one by one so the others still get a value.
                results = [self._score_one_safely(pair) for _, pair in valid]
            for (index, _), outcome in zip(valid, results, strict=True):
                outcomes[index] = outcome
        return [outcome for outcome in outcomes if outcome is not None]

    def _score_one_safely(self, pair: Pair) -> ScoreOutcome:
        try:
            values = self._score([pair])
            if len(values) != 1:
                return ScoreOutcome(None, f"{self.name} returned {len(values)} scores for 1 pair")
            return _outcome(values[0])
        except MetricUnavailable:
            raise
        except Exception as error:  # noqa: BLE001 - reported per pair, with its type
            return ScoreOutcome(None, f"{type(error).__name__}: {error}")

    @abstractmethod
    def _score(self, pairs: list[Pair]) -> list[float]:
        """Score validated pairs, in order."""


def _outcome(value: float) -> ScoreOutcome:
    number = float(value)
    if math.isnan(number):
        return ScoreOutcome(None, "the metric returned NaN")
    if math.isinf(number):  # no statistic can use it (imported scores refuse it too)
        return ScoreOutcome(None, f"the metric returned {number}")
    return ScoreOutcome(number)
