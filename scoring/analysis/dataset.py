"""Load one campaign from the database into the pure :class:`~scoring.analysis.report.AnalysisInput`.

The only module of ``scoring.analysis`` that imports Django. A fixed number of queries
whatever the campaign size (pairs, judgements, training answers, volunteers, metric
configurations, scores), each a flat ``values_list`` read straight into arrays.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

import numpy as np
from django.db.models import Count, Exists, F, IntegerField, Max, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotate.labels import EnglishLevel
from annotate.models import Campaign, Judgement, Pair, Volunteer
from scoring.analysis.labels import LABEL_CODES, Reference
from scoring.analysis.report import AnalysisInput, JudgementRows, MetricInfo, VolunteerInfo
from scoring.metrics.lexical import normalised_char_distance
from scoring.models import MetricConfig, Score


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

    @classmethod
    def build(
        cls,
        reference: str = Reference.VOLUNTEERS.value,
        origin: str | None = None,
        english_level: str | None = None,
        date_from: date | None = None,
        date_to: date | None = None,
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
        return cls(checked_reference, origin or None, english_level or None, date_from, date_to)

    def as_dict(self) -> dict[str, Any]:
        return {
            "reference": self.reference.value,
            "origin": self.origin,
            "english_level": self.english_level,
            "date_from": self.date_from.isoformat() if self.date_from else None,
            "date_to": self.date_to.isoformat() if self.date_to else None,
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


def _subquery(queryset: Any, expression: Any, output: Any = None) -> Subquery:
    # Group by a constant: one aggregate row over the correlated rows.
    grouped = queryset.order_by().values("campaign_marker").annotate(v=expression).values("v")[:1]
    return Subquery(grouped, output_field=output)


def data_state(campaign_id: int) -> DataState:
    """Counts, largest ids and latest timestamps of everything a report reads, in one query.

    A new or deleted judgement, pair, volunteer or score, a score that changed status or was
    recomputed, and a new metric configuration all change it.
    """
    judgements = Judgement.objects.filter(pair__campaign_id=OuterRef("pk")).annotate(campaign_marker=Value(1))
    scores = Score.objects.filter(pair__campaign_id=OuterRef("pk")).annotate(campaign_marker=Value(1))
    pairs = Pair.objects.filter(campaign_id=OuterRef("pk")).annotate(campaign_marker=Value(1))
    volunteers = Volunteer.objects.filter(campaign_id=OuterRef("pk")).annotate(campaign_marker=Value(1))
    integer = IntegerField()
    row = (
        Campaign.objects.filter(pk=campaign_id)
        .annotate(
            j_count=_subquery(judgements, Count("id"), integer),
            j_max=_subquery(judgements, Max("id"), integer),
            j_last=_subquery(judgements, Max("answered_at")),
            s_count=_subquery(scores, Count("id"), integer),
            s_max=_subquery(scores, Max("id"), integer),
            s_last=_subquery(scores, Max("computed_at")),
            s_failed=_subquery(scores, Count("id", filter=Q(status=Score.Status.FAILED)), integer),
            p_count=_subquery(pairs, Count("id"), integer),
            p_max=_subquery(pairs, Max("id"), integer),
            p_last=_subquery(pairs, Max("created_at")),
            p_gold=_subquery(pairs, Count("id", filter=Q(gold_label=True)), integer),
            p_gold_any=_subquery(pairs, Count("gold_label"), integer),
            v_count=_subquery(volunteers, Count("id"), integer),
            v_max=_subquery(volunteers, Max("id"), integer),
            m_max=Coalesce(Subquery(MetricConfig.objects.order_by("-id").values("id")[:1]), 0),
        )
        .get()
    )
    fingerprint = {
        "campaign": [row.pk, row.created_at.isoformat()],
        "judgements": [row.j_count, row.j_max, row.j_last],
        "scores": [row.s_count, row.s_max, row.s_last, row.s_failed],
        "pairs": [row.p_count, row.p_max, row.p_last, row.p_gold, row.p_gold_any],
        "volunteers": [row.v_count, row.v_max],
        "metric_configs": row.m_max,
    }
    moments = [moment for moment in (row.j_last, row.s_last, row.p_last) if moment is not None]
    return DataState(campaign=row, fingerprint=fingerprint, last_changed=max(moments) if moments else None)


def load(campaign: Campaign, filters: Filters) -> AnalysisInput:
    """Read the campaign's pairs, judgements, volunteers and scores (after ``filters``)."""
    pair_q = Q(campaign=campaign, is_training=False)
    if filters.origin is not None:
        pair_q &= Q(origin=filters.origin)
    pair_rows = list(
        Pair.objects.filter(pair_q)
        .order_by("id")
        .values_list("id", "origin", "source", "hypothesis", "gold_label", "gold_score")
    )
    ids = np.array([row[0] for row in pair_rows], dtype=np.int64)
    position = {pair_id: index for index, pair_id in enumerate(ids.tolist())}
    origins = [row[1] for row in pair_rows]
    edit_distance = np.array([normalised_char_distance(row[2], row[3]) for row in pair_rows], dtype=np.float64)
    gold_label = np.array([np.nan if row[4] is None else float(row[4]) for row in pair_rows], dtype=np.float64)
    gold_score = np.array([np.nan if row[5] is None else float(row[5]) for row in pair_rows], dtype=np.float64)

    counted_q = Q(pair__campaign=campaign, is_training=False, pair__is_training=False) & filters.judgement_q()
    if filters.origin is not None:
        counted_q &= Q(pair__origin=filters.origin)
    judgement_rows = list(
        Judgement.objects.filter(counted_q)
        .order_by("id")
        .values_list("pair_id", "volunteer_id", "label", "shown_at", "answered_at")
    )
    judgements = JudgementRows(
        pair_index=np.array([position[row[0]] for row in judgement_rows], dtype=np.int64),
        volunteer=np.array([row[1] for row in judgement_rows], dtype=np.int64),
        code=np.array([LABEL_CODES[row[2]] for row in judgement_rows], dtype=np.int64),
        answered_at=np.array([row[4].timestamp() for row in judgement_rows], dtype=np.float64),
        response_seconds=np.array([(row[4] - row[3]).total_seconds() for row in judgement_rows], dtype=np.float64),
    )

    # Training answers only feed the volunteers' training accuracy (and a count).
    training_q = Q(pair__campaign=campaign) & (Q(is_training=True) | Q(pair__is_training=True)) & filters.judgement_q()
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
        VolunteerInfo(pk, level, *training_by_volunteer.get(pk, (0, 0)))
        for pk, level in Volunteer.objects.filter(volunteer_q).order_by("id").values_list("id", "english_level")
    ]

    configs = list(
        MetricConfig.objects.filter(Exists(Score.objects.filter(metric_config=OuterRef("pk"), pair__campaign=campaign)))
        .order_by("metric", "id")
        .values_list("id", "metric", "label", "higher_is_closer", "natural_threshold")
    )
    metrics = [MetricInfo(pk, name, label, higher, natural) for pk, name, label, higher, natural in configs]
    row_of_metric = {metric.id: index for index, metric in enumerate(metrics)}
    scores = np.full((len(metrics), len(ids)), np.nan)
    failed = np.zeros((len(metrics), len(ids)), dtype=bool)
    score_q = Q(pair__campaign=campaign, pair__is_training=False)
    if filters.origin is not None:
        score_q &= Q(pair__origin=filters.origin)
    for pair_id, config_id, value, status in Score.objects.filter(score_q).values_list(
        "pair_id", "metric_config_id", "value", "status"
    ):
        row, column = row_of_metric[config_id], position[pair_id]
        if status == Score.Status.DONE and value is not None and np.isfinite(value):
            scores[row, column] = value
        else:
            failed[row, column] = True

    training_total = sum(answers for answers, _ in training_by_volunteer.values())
    return AnalysisInput(
        pair_ids=ids,
        origins=origins,
        edit_distance=edit_distance,
        gold_label=gold_label,
        gold_score=gold_score,
        judgements=judgements,
        volunteers=volunteers,
        metrics=metrics,
        scores=scores,
        failed=failed,
        training_judgements=training_total,
    )


def origins(campaign: Campaign) -> list[str]:
    """The corpora of a campaign's pairs, for the filter menu."""
    pairs = Pair.objects.filter(campaign=campaign, is_training=False).order_by("origin")
    return list(pairs.values_list("origin", flat=True).distinct())
