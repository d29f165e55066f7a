"""Load one campaign from the database into the pure :class:`~scoring.analysis.report.AnalysisInput`.

The only module of ``scoring.analysis`` that imports Django. A fixed number of queries
whatever the campaign size (pairs, judgements, training answers, volunteers, metric
configurations, scores, and the probe set with its pairs and scores for the robustness cards),
each a flat ``values_list`` read straight into arrays.

Check pairs (attention checks) and check answers never enter an analysis; with
``Filters.exclude_flagged`` the judgements of the volunteers that
:func:`annotate.quality.excluded_volunteer_ids` names are left out of every analysis too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

import numpy as np
from django.db.models import Case, Count, F, FloatField, Func, Max, OuterRef, Q, Subquery, When
from django.utils import timezone
from numpy.typing import NDArray

from annotate.labels import EnglishLevel
from annotate.models import Campaign, Judgement, Pair, Volunteer
from annotate.pseudonyms import volunteer_pseudonym
from annotate.quality import excluded_volunteer_ids
from annotate.tallies import changes_subqueries
from scoring.analysis.labels import LABEL_CODES, Reference
from scoring.analysis.report import AnalysisInput, JudgementRows, MetricInfo, VolunteerInfo
from scoring.metrics.lexical import normalised_char_distance
from scoring.models import MetricConfig, Score, StoppingRule
from scoring.reports.robustness import campaign_probe_scores, probe_fingerprint
from scoring.tallies import score_changes_subqueries, scored_configs


class EpochSeconds(Func):
    """Seconds since the epoch of a datetime column, computed by the database (a float)."""

    output_field = FloatField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(compiler, connection, template="EXTRACT(EPOCH FROM %(expressions)s)::float8", **extra)

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        # SQLite keeps UTC datetimes as text; julianday() reads them (2440587.5 = 1970-01-01).
        template = "((julianday(%(expressions)s) - 2440587.5) * 86400.0)"
        return self.as_sql(compiler, connection, template=template, **extra)


class FilterError(ValueError):
    """A filter value that cannot be used; the message names the filter."""


@dataclass(frozen=True)
class Filters:
    """Which pairs and judgements a report is based on."""

    reference: Reference = Reference.VOLUNTEERS
    origin: str | None = None  # one corpus; None = all
    english_level: str | None = None  # only judgements of volunteers with this level
    date_from: date | None = None  # judgements answered on or after this day (TIME_ZONE)
    date_to: date | None = None  # ... and on or before this day
    exclude_flagged: bool = False  # leave out the volunteers the campaign's quality rule excludes
    pair_ids: tuple[int, ...] | None = None  # only these pairs (sorted); None = all

    @classmethod
    def build(
        cls,
        reference: str = Reference.VOLUNTEERS.value,
        origin: str | None = None,
        english_level: str | None = None,
        date_from: date | None = None,
        date_to: date | None = None,
        exclude_flagged: bool = False,
        pair_ids: Iterable[int] | None = None,
    ) -> Filters:
        """Checked filters; :class:`FilterError` names the first bad one."""
        try:
            checked_reference = Reference(reference)
        except ValueError:
            choices = ", ".join(r.value for r in Reference)
            raise FilterError(f"reference: {reference!r} is not one of {choices}") from None
        if english_level is not None and english_level not in {level.value for level in EnglishLevel}:
            choices = ", ".join(level.value for level in EnglishLevel)
            raise FilterError(f"english_level: {english_level!r} is not one of {choices}")
        for name, value in (("date_from", date_from), ("date_to", date_to)):
            if value is not None and (not isinstance(value, date) or isinstance(value, datetime)):
                raise FilterError(f"{name}: expected a date, got {type(value).__name__}")
        if date_from and date_to and date_from > date_to:
            raise FilterError(f"date_to: {date_to} is before date_from {date_from}")
        if not isinstance(exclude_flagged, bool):
            raise FilterError(f"exclude_flagged: expected true or false, got {exclude_flagged!r}")
        ids = None
        if pair_ids is not None:
            ids = tuple(sorted({int(pk) for pk in pair_ids}))
            if not ids:
                raise FilterError("pair_ids: no pair id given")
        return cls(checked_reference, origin or None, english_level or None, date_from, date_to, exclude_flagged, ids)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Filters:
        """Filters back from :meth:`as_dict` (a task's JSON arguments), checked again."""
        return cls.build(
            values.get("reference") or Reference.VOLUNTEERS.value,
            values.get("origin"),
            values.get("english_level"),
            date.fromisoformat(values["date_from"]) if values.get("date_from") else None,
            date.fromisoformat(values["date_to"]) if values.get("date_to") else None,
            bool(values.get("exclude_flagged", False)),
            values.get("pair_ids"),
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "reference": self.reference.value,
            "origin": self.origin,
            "english_level": self.english_level,
            "date_from": self.date_from.isoformat() if self.date_from else None,
            "date_to": self.date_to.isoformat() if self.date_to else None,
            "exclude_flagged": self.exclude_flagged,
            # Only when set: the dashboard and the API never subset by ids.
            **({"pair_ids": list(self.pair_ids)} if self.pair_ids is not None else {}),
        }

    def judgement_q(self, prefix: str = "") -> Q:
        """Conditions on Judgement rows (``prefix`` when reached through a relation)."""
        q = Q()
        if self.english_level:
            q &= Q(**{f"{prefix}volunteer__english_level": self.english_level})
        if self.date_from:
            start = timezone.make_aware(datetime.combine(self.date_from, time.min))
            q &= Q(**{f"{prefix}answered_at__gte": start})
        if self.date_to:
            # Before the next midnight: an index range instead of a per-row date conversion.
            end = timezone.make_aware(datetime.combine(self.date_to + timedelta(days=1), time.min))
            q &= Q(**{f"{prefix}answered_at__lt": end})
        return q


@dataclass(frozen=True)
class DataState:
    """What changes when anything a report depends on changes (cheap to read)."""

    campaign: Campaign
    fingerprint: dict[str, Any]
    last_changed: datetime | None

    def version(self, *parts: object) -> str:
        payload = json.dumps([self.fingerprint, *parts], sort_keys=True, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()[:20]


# The staff pages' verdicts (:mod:`scoring.reports.verdicts`) are computed again at least this
# often even when the change stamp says nothing happened, to catch what the stamp cannot see (a
# deleted judgement, an edited label or gold label). Inserts and recomputed scores are seen at once.
FULL_CHECK_SECONDS = 60


def change_stamp() -> tuple[Any, ...]:
    """Largest ids and latest score time across all campaigns: index lookups, one query.

    Any new judgement, score, pair, volunteer or metric configuration, and any score that
    was recomputed, changes it.
    """
    latest = {
        "j": Judgement.objects.order_by("-id").values("id")[:1],
        "s": Score.objects.order_by("-id").values("id")[:1],
        "t": Score.objects.order_by("-computed_at").values("computed_at")[:1],
        "p": Pair.objects.order_by("-id").values("id")[:1],
        "v": Volunteer.objects.order_by("-id").values("id")[:1],
        "m": MetricConfig.objects.order_by("-id").values("id")[:1],
    }
    # One SELECT of six scalar subqueries, hung on any single row (the campaign table may be empty).
    row = (
        Campaign.objects.annotate(**{name: Subquery(query) for name, query in latest.items()})
        .values_list(*latest)
        .order_by()[:1]
    )
    values = list(row)
    return tuple(values[0]) if values else ()


def _fingerprint(campaign: Campaign) -> tuple[dict[str, Any], datetime | None]:
    """What a report of ``campaign`` reads, as the database's change counters of its rows (kept by
    triggers in the transaction of every write an analysis can see: judgements, pairs, volunteers,
    scores; migrations ``campaign_change_counters`` and ``score_change_counters``), its exclusion
    and stopping rules and its probe set. The counters only grow, so equal fingerprints saw the
    same rows. ``campaign`` comes from :func:`data_state`'s query, which read the counters with it."""
    counters = [getattr(campaign, f"{name}_count", None) or 0 for name in ("written", "scored")]
    rule = [campaign.exclude_failed_checks, campaign.exclude_median_seconds, campaign.exclude_same_answer_share]
    stopping = getattr(campaign, "stopping_updated", None)
    fingerprint = {
        "campaign": [campaign.pk, campaign.created_at.isoformat()],
        "changes": counters,
        "rule": rule,
        "stopping": stopping.isoformat() if stopping else None,
        "probes": probe_fingerprint(campaign),
    }
    moments = [getattr(campaign, f"{name}_at", None) for name in ("written", "scored")]
    known = [moment for moment in moments if moment is not None]
    return fingerprint, max(known) if known else None


def data_state(campaign_id: int) -> DataState:
    """What a report of the campaign depends on, cheaply: one statement reads the campaign, its
    stopping rule and its change counters (indexed sums over a few tally rows), one more its probe
    set's. A dashboard polled every few seconds reads them each time: nothing is kept, so nothing
    can be stale. Raises ``Campaign.DoesNotExist``.
    """
    stopping = StoppingRule.objects.filter(campaign=OuterRef("pk")).values("updated_at")[:1]
    campaign = Campaign.objects.annotate(
        stopping_updated=Subquery(stopping), **changes_subqueries("written"), **score_changes_subqueries("scored")
    ).get(pk=campaign_id)
    fingerprint, last_changed = _fingerprint(campaign)
    return DataState(campaign=campaign, fingerprint=fingerprint, last_changed=last_changed)


def load(campaign: Campaign, filters: Filters) -> AnalysisInput:
    """Read the campaign's pairs, judgements, volunteers and scores (after ``filters``)."""
    pair_q = Q(campaign=campaign, is_training=False, is_check=False)
    if filters.origin is not None:
        pair_q &= Q(origin=filters.origin)
    if filters.pair_ids is not None:
        pair_q &= Q(id__in=filters.pair_ids)
    pair_rows = list(
        Pair.objects.filter(pair_q)
        .order_by("id")
        .values_list("id", "origin", "source", "hypothesis", "gold_label", "gold_score", "system", "external_id")
    )
    ids = np.array([row[0] for row in pair_rows], dtype=np.int64)  # sorted: positions by searchsorted
    excluded = sorted(excluded_volunteer_ids(campaign)) if filters.exclude_flagged else []
    judgements = _counted_judgements(campaign, filters, ids, excluded)
    volunteers, training_total = _volunteers(campaign, filters, excluded, judgements)
    metrics, scores, failed = _scores(campaign, filters, ids)
    return AnalysisInput(
        inclusion_probability=pool_inclusion_probabilities(campaign, ids),
        pair_ids=ids,
        origins=[row[1] for row in pair_rows],
        edit_distance=np.array([normalised_char_distance(row[2], row[3]) for row in pair_rows], dtype=np.float64),
        gold_label=np.array([np.nan if row[4] is None else float(row[4]) for row in pair_rows], dtype=np.float64),
        gold_score=np.array([np.nan if row[5] is None else float(row[5]) for row in pair_rows], dtype=np.float64),
        judgements=judgements,
        volunteers=volunteers,
        metrics=metrics,
        scores=scores,
        failed=failed,
        training_judgements=training_total,
        sources=[row[2] for row in pair_rows],
        systems=[row[6] for row in pair_rows],
        external_ids=[row[7] for row in pair_rows],
        probes=campaign_probe_scores(campaign),
    )


def _counted_judgements(
    campaign: Campaign, filters: Filters, ids: NDArray[np.int64], excluded: list[int]
) -> JudgementRows:
    """The judgements the statistics count (neither training nor check answers), in id order."""
    # Check answers are on check pairs; both flags are tested so neither can slip in alone.
    counted_q = (
        Q(pair__campaign=campaign, is_training=False, pair__is_training=False, is_check=False, pair__is_check=False)
        & filters.judgement_q()
    )
    if filters.origin is not None:
        counted_q &= Q(pair__origin=filters.origin)
    if filters.pair_ids is not None:
        counted_q &= Q(pair_id__in=filters.pair_ids)
    if excluded:
        counted_q &= ~Q(volunteer_id__in=excluded)
    judgement_rows = list(
        Judgement.objects.filter(counted_q)
        .order_by("id")
        .values_list("pair_id", "volunteer_id", "label", EpochSeconds("shown_at"), EpochSeconds("answered_at"))
    )
    # Times come as seconds from the database: parsing 2 datetimes per row in Python costs
    # more than everything else here.
    numbers = np.array([(row[0], row[1], row[3], row[4]) for row in judgement_rows], dtype=np.float64).reshape(-1, 4)
    judgements = JudgementRows(
        pair_index=np.searchsorted(ids, numbers[:, 0].astype(np.int64)),
        volunteer=numbers[:, 1].astype(np.int64),
        code=np.array([LABEL_CODES[row[2]] for row in judgement_rows], dtype=np.int64),
        answered_at=numbers[:, 3],
        response_seconds=numbers[:, 3] - numbers[:, 2],
    )

    return judgements


def _volunteers(
    campaign: Campaign, filters: Filters, excluded: list[int], judgements: JudgementRows
) -> tuple[list[VolunteerInfo], int]:
    """The volunteers behind the judgements or the training answers, and the training answers' count."""
    # Training answers only feed the volunteers' training accuracy (and a count).
    training_q = (
        Q(pair__campaign=campaign, is_check=False, pair__is_check=False)
        & (Q(is_training=True) | Q(pair__is_training=True))
        & filters.judgement_q()
    )
    if excluded:
        training_q &= ~Q(volunteer_id__in=excluded)
    training = (
        Judgement.objects.filter(training_q)
        .values("volunteer_id")
        .annotate(answers=Count("id"), correct=Count("id", filter=Q(label=F("pair__expected_label"))))
        .order_by()
    )
    training_by_volunteer = {row["volunteer_id"]: (row["answers"], row["correct"]) for row in training}
    contributors = set(judgements.volunteer.tolist()) | set(training_by_volunteer)
    volunteer_q = Q(campaign=campaign, id__in=contributors) if contributors else Q(pk__in=[])
    volunteers = [
        VolunteerInfo(pk, level, *training_by_volunteer.get(pk, (0, 0)), pseudonym=volunteer_pseudonym(token))
        for pk, level, token in Volunteer.objects.filter(volunteer_q)
        .order_by("id")
        .values_list("id", "english_level", "token")
    ]

    return volunteers, sum(answers for answers, _ in training_by_volunteer.values())


def _scores(
    campaign: Campaign, filters: Filters, ids: NDArray[np.int64]
) -> tuple[list[MetricInfo], NDArray[np.float64], NDArray[np.bool_]]:
    """Every configuration that scored the campaign, its scores per pair (NaN: none usable) and
    which of them failed."""
    configs = list(
        scored_configs(campaign)
        .order_by("metric", "id")
        .values_list("id", "metric", "label", "higher_is_closer", "natural_threshold")
    )
    metrics = [MetricInfo(pk, name, label, higher, natural) for pk, name, label, higher, natural in configs]
    scores = np.full((len(metrics), len(ids)), np.nan)
    failed = np.zeros((len(metrics), len(ids)), dtype=bool)
    score_q = Q(pair__campaign=campaign, pair__is_training=False, pair__is_check=False)
    if filters.origin is not None:
        score_q &= Q(pair__origin=filters.origin)
    if filters.pair_ids is not None:
        score_q &= Q(pair_id__in=filters.pair_ids)
    score_rows = list(
        Score.objects.filter(score_q).values_list(
            "pair_id", "metric_config_id", "value", Case(When(status=Score.Status.DONE, then=1), default=0)
        )
    )
    if score_rows and metrics:
        table = np.array(
            [(pair, config, np.nan if value is None else value, done) for pair, config, value, done in score_rows],
            dtype=np.float64,
        )
        config_ids = np.array([metric.id for metric in metrics], dtype=np.int64)
        order = np.argsort(config_ids)
        rows = order[np.searchsorted(config_ids, table[:, 1].astype(np.int64), sorter=order)]
        columns = np.searchsorted(ids, table[:, 0].astype(np.int64))  # pair ids are sorted
        usable = (table[:, 3] == 1) & np.isfinite(table[:, 2])
        scores[rows[usable], columns[usable]] = table[usable, 2]
        failed[rows[~usable], columns[~usable]] = True

    return metrics, scores, failed


def pool_inclusion_probabilities(campaign: Campaign, ids: np.ndarray) -> np.ndarray | None:
    """Adaptive selection: each pair's inclusion probability ``min(1, t q)`` (``t`` the largest
    order key among the pool's judged pairs, whatever the filters); None for a balanced campaign.
    Once every pool pair is judged all are 1: the figures are the whole pool's own.

    A pair without a planned weight (imported after the plan) counts as certain once judged.
    """
    if campaign.selection != "adaptive":
        return None
    pool = Pair.objects.filter(campaign=campaign, is_training=False, is_check=False)
    threshold = pool.filter(judgement_count__gt=0).aggregate(top=Max("selection_key"))["top"]
    planned = dict(pool.filter(id__in=ids.tolist()).values_list("id", "selection_probability"))
    weights = np.array([planned.get(int(pair_id)) or 1.0 for pair_id in ids], dtype=np.float64)
    if threshold is None or not pool.filter(judgement_count=0).exists():
        return np.ones(len(ids))  # nothing judged yet, or the whole pool: a census, every pair certain
    # The same rule as scoring.analysis.selection.inclusion_probabilities, with t read by the database.
    return np.minimum(1.0, float(threshold) * weights)


def origins(campaign: Campaign) -> list[str]:
    """The corpora of a campaign's pairs, for the filter menu."""
    pairs = Pair.objects.filter(campaign=campaign, is_training=False, is_check=False).order_by("origin")
    return list(pairs.values_list("origin", flat=True).distinct())
