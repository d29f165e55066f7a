"""What a report is computed from: the campaign's arrays (:class:`AnalysisInput`) and the options."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from scoring.analysis import cards as card_stats
from scoring.analysis.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
)
from scoring.analysis.labels import (
    HumanLabels,
    Reference,
    gold_labels,
    volunteer_labels,
)

# Bump when a change in this package changes any number of a report (part of the data version).
ANALYSIS_VERSION = "6"  # 2: volunteers carry their pseudonym; 3: charts name their pairs (links to the pair pages);
# 4: the robustness and calibration cards; 5: two-way (pairs and volunteers) intervals;
# 6: the two-way correlations summed otherwise (last digits), the probes' and objectives' sentences
ALL = "all"
ALL_LABEL = "Global"
NO_ORIGIN_LABEL = "(no origin)"

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]


@dataclass(frozen=True)
class MetricInfo:
    """One metric configuration as the analyses need it."""

    id: int
    name: str
    label: str
    higher_is_closer: bool
    natural_threshold: float | None = None

    @property
    def arrow(self) -> str:
        return "↑" if self.higher_is_closer else "↓"


@dataclass(frozen=True)
class JudgementRows:
    """Campaign judgements that count (training answers left out), one entry per judgement."""

    pair_index: IntArray  # position of the pair in the AnalysisInput arrays
    volunteer: IntArray
    code: IntArray  # labels.LABEL_CODES
    answered_at: FloatArray  # seconds since the epoch; orders judge A / judge B for Cohen's kappa
    response_seconds: FloatArray

    @classmethod
    def empty(cls) -> JudgementRows:
        ints = np.zeros(0, dtype=np.int64)
        floats = np.zeros(0, dtype=np.float64)
        return cls(ints, ints, ints, floats, floats)

    def __len__(self) -> int:
        return len(self.pair_index)


@dataclass(frozen=True)
class VolunteerInfo:
    """A volunteer with their self-assessed level and training-trial results."""

    id: int
    english_level: str
    training_answers: int = 0
    training_correct: int = 0
    pseudonym: str = ""  # as in the exports and the API (a keyed hash of the token)


@dataclass(frozen=True)
class AnalysisInput:
    """One campaign (after filters) as arrays: pairs, judgements, volunteers and scores."""

    pair_ids: IntArray
    origins: list[str]
    edit_distance: FloatArray  # character Levenshtein / longer length (rapidfuzz)
    gold_label: FloatArray  # 1 / 0 / NaN
    gold_score: FloatArray  # graded gold or NaN
    judgements: JudgementRows
    volunteers: list[VolunteerInfo]
    metrics: list[MetricInfo]
    scores: FloatArray  # metrics x pairs; NaN where no usable score
    failed: BoolArray  # metrics x pairs; the scoring failed (counted, excluded)
    training_judgements: int = 0
    sources: list[str] | None = None  # source sentence per pair (groups of hypotheses)
    systems: list[str] | None = None  # system that produced each hypothesis ("" when none)
    external_ids: list[str] | None = None  # the pair's id in its corpus ("" when none), for links
    # Adaptive selection: each pair's inclusion probability (scoring.analysis.selection); None: balanced.
    inclusion_probability: FloatArray | None = None
    probes: card_stats.ProbeScores | None = None  # the campaign's probe set, scored (robustness cards)

    def __post_init__(self) -> None:
        n = len(self.pair_ids)
        for name in ("edit_distance", "gold_label", "gold_score"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"{name} has {len(getattr(self, name))} values for {n} pairs")
        if len(self.origins) != n:
            raise ValueError(f"origins has {len(self.origins)} values for {n} pairs")
        shape = (len(self.metrics), n)
        if self.scores.shape != shape or self.failed.shape != shape:
            raise ValueError(f"scores and failed must be {shape}, got {self.scores.shape} and {self.failed.shape}")


@dataclass(frozen=True)
class ReportOptions:
    """What to compute: the reference, the bootstrap and the size of the chart data."""

    reference: Reference = Reference.VOLUNTEERS
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    confidence: float = 0.95
    curve_points: int = 200  # ROC and rank curves sent to the page (peaks always kept)
    scatter_points: int = 1000  # pairs drawn per metric in the score / edit-distance chart
    worst_pairs: int = 5  # a metric's worst disagreements with the reference, listed per metric
    charts: bool = True
    # False: leave every interval None (the dashboard fills them in from the interactive queue).
    intervals: bool = True
    # False: the two-way (pairs and volunteers) intervals are left out, their reason said (the
    # report API's default: they cost several times the pairs-only ones; ``two_way=1`` asks).
    two_way: bool = True


def human_labels(data: AnalysisInput, reference: Reference) -> HumanLabels:
    """The reference labels of every pair."""
    n = len(data.pair_ids)
    from_volunteers = volunteer_labels(n, data.judgements.pair_index, data.judgements.code)
    if reference is Reference.VOLUNTEERS:
        return from_volunteers
    return gold_labels(data.gold_label, data.gold_score, from_volunteers.judgements, from_volunteers.dont_know)
