"""Where the pair-level export gets its metric columns: an interface the scoring app provides.

``annotate`` sits below ``scoring`` (scoring reads pairs and judgements; annotate never reads
scores), so the export does not import scoring's models: scoring registers a
:class:`ScoreSource` from its ``AppConfig.ready`` and the export asks it. Without one (a
project without the scoring app) the pair-level export simply has no metric columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from annotate.models import Campaign


@dataclass(frozen=True)
class ScoredConfiguration:
    """A metric configuration that scored pairs of a campaign."""

    config_id: int
    label: str
    metric: str
    config_hash: str


@dataclass(frozen=True)
class PairScore:
    """One pair's score under one configuration (``done`` false: it failed, ``value`` is None)."""

    pair_id: int
    config_id: int
    value: float | None
    done: bool


class ScoreSource(Protocol):
    """What the export needs to know about scores."""

    def configurations(self, campaign: Campaign) -> list[ScoredConfiguration]:
        """Configurations that scored at least one non-training pair of ``campaign``, by metric and label."""
        ...

    def scores(self, pair_filter: dict[str, Any], config_ids: Sequence[int]) -> Iterable[PairScore]:
        """Scores under ``config_ids`` of the pairs selected by ``pair_filter`` (``pair_id__…`` lookups)."""
        ...


class _NoScores:
    def configurations(self, campaign: Campaign) -> list[ScoredConfiguration]:
        return []

    def scores(self, pair_filter: dict[str, Any], config_ids: Sequence[int]) -> Iterable[PairScore]:
        return []


_source: ScoreSource = _NoScores()


def register_score_source(source: ScoreSource) -> None:
    """Make ``source`` the provider of the export's metric columns (scoring's ``AppConfig.ready``)."""
    global _source
    _source = source


def score_source() -> ScoreSource:
    """The registered provider (one with no scores when none is registered)."""
    return _source
