"""What the staff pages of pairs show: one pair with every judgement and score, and a
campaign's pairs, searchable, with their agreement.

Plain functions returning dataclasses; :mod:`staff.views.pairs` renders them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
from django.db import connection
from django.db.models import Q, QuerySet

from annotate import quality
from annotate.diff import Segment, highlight
from annotate.labels import LABEL_DISPLAY, Label
from annotate.models import Campaign, Judgement, Pair
from annotate.pseudonyms import volunteer_pseudonym
from annotate.tallies import tally
from scoring.analysis import disagreements
from scoring.models import MetricConfig, Score
from scoring.reports import dataset, refreshing, service, verdicts
from scoring.tallies import scored_configs

PAGE_SIZE = 50


@dataclass(frozen=True)
class JudgementRow:
    pseudonym: str
    answer: str
    seconds: float
    position: int | None
    excluded: bool
    answered_at: str


@dataclass(frozen=True)
class ScoreRow:
    label: str
    value: float | None
    status: str
    error: str


@dataclass(frozen=True)
class PairDetail:
    pair: Pair
    source: list[Segment]
    hypothesis: list[Segment]
    judgements: list[JudgementRow]
    scores: list[ScoreRow]
    gold: str


def gold_text(pair: Pair) -> str:
    """The pair's gold label (and graded score) in words."""
    parts = []
    if pair.gold_label is not None:
        parts.append("paraphrase" if pair.gold_label else "not paraphrase")
    if pair.gold_score is not None:
        parts.append(f"score {pair.gold_score:g}")
    return ", ".join(parts) or "none"


def _answer(label: str) -> str:
    try:
        return str(LABEL_DISPLAY[Label(label)])
    except ValueError:
        return label


def pair_detail(pair: Pair) -> PairDetail:
    """Both sentences highlighted, every judgement (pseudonym, answer, time, position, excluded
    or not) and every score with its configuration's label.

    Who is excluded is the rule's verdict on this pair's judges from their own judgements
    (:func:`annotate.quality.rule_verdicts`: exclusion never depends on the agreement with
    others), so the page costs what its judges answered, not a pass over the campaign."""
    rows = list(Judgement.objects.filter(pair=pair).select_related("volunteer").order_by("answered_at"))
    judges = quality.rule_verdicts(pair.campaign, {judgement.volunteer_id for judgement in rows})
    judgements = [
        JudgementRow(
            pseudonym=volunteer_pseudonym(judgement.volunteer.token),
            answer=_answer(judgement.label),
            seconds=(judgement.answered_at - judgement.shown_at).total_seconds(),
            position=judgement.position,
            excluded=judgement.volunteer_id in judges and judges[judgement.volunteer_id].excluded,
            answered_at=judgement.answered_at.strftime("%Y-%m-%d %H:%M"),
        )
        for judgement in rows
    ]
    scores = [
        ScoreRow(score.metric_config.label, score.value, score.status, score.error)
        for score in Score.objects.filter(pair=pair).select_related("metric_config").order_by("metric_config__label")
    ]
    source, hypothesis = highlight(pair.source, pair.hypothesis)
    return PairDetail(pair, source, hypothesis, judgements, scores, gold_text(pair))


@dataclass(frozen=True)
class PairRow:
    pk: int
    external_id: str
    source: str
    hypothesis: str
    origin: str
    system: str
    kind: str
    judgements: int
    agreement: float | None  # share of the pair's judgements that give its most common answer


@dataclass(frozen=True)
class Facets:
    """What the pair list's menus offer, and how many pairs the campaign holds in all."""

    pairs: int
    origins: list[str]
    systems: list[str]
    configs: list[tuple[int, str]]  # (id, label) of the configurations with a score in the campaign


# A loose index scan: the smallest value, then the smallest one above it, and so on, each an
# index step on (campaign, column); the values are the campaign's distinct non-empty ones, exact.
_LOOSE_SCAN = """
WITH RECURSIVE found(value) AS (
  SELECT min({column}) FROM annotate_pair WHERE campaign_id = %s AND {column} > ''
  UNION ALL
  SELECT (SELECT min({column}) FROM annotate_pair WHERE campaign_id = %s AND {column} > found.value)
  FROM found WHERE found.value IS NOT NULL
)
SELECT value FROM found WHERE value IS NOT NULL"""


def distinct_values(campaign: Campaign, column: str) -> list[str]:
    """The campaign's distinct non-empty values of the pair column ``column`` ("origin" or
    "system"), sorted. PostgreSQL walks the index (campaign, column) a step per value (a DISTINCT
    there reads every pair of the campaign); SQLite's DISTINCT skips through the index itself."""
    if column not in ("origin", "system"):
        raise ValueError(f"not a pair column of the menus: {column!r}")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_LOOSE_SCAN.format(column=column), [campaign.pk, campaign.pk])
            return sorted(str(value) for (value,) in cursor.fetchall())
    pairs = Pair.objects.filter(campaign=campaign).order_by().exclude(**{column: ""})
    return sorted(pairs.values_list(column, flat=True).distinct())


def _facets(campaign: Campaign) -> Facets:
    pairs = Pair.objects.filter(campaign=campaign).order_by()
    origins = distinct_values(campaign, "origin")
    systems = distinct_values(campaign, "system")
    # One EXISTS per configuration (a handful), not a DISTINCT over every score of the campaign.
    configs = list(scored_configs(campaign).order_by("label").values_list("pk", "label"))
    # Every pair the list shows: the kept tallies, and the few training pairs (an index range).
    kept = tally(campaign)
    count = kept.pairs + kept.checks + pairs.filter(is_training=True).count()
    return Facets(count, origins, systems, configs)


def facets(campaign: Campaign) -> Facets:
    """The campaign's pair count, origins, systems and scored metric configurations, computed
    once per change of the campaign's data (:mod:`scoring.reports.verdicts`)."""
    return verdicts.kept(campaign.pk, "facets", lambda: _facets(campaign))


def search(campaign: Campaign, query: str = "", origin: str = "", system: str = "") -> QuerySet[Pair]:
    """The campaign's pairs whose text or id holds ``query``, of ``origin`` and ``system`` when given."""
    pairs = Pair.objects.filter(campaign=campaign).order_by("id")
    if query.strip():
        text = query.strip()
        pairs = pairs.filter(Q(source__icontains=text) | Q(hypothesis__icontains=text) | Q(external_id__icontains=text))
    if origin:
        pairs = pairs.filter(origin=origin)
    if system:
        pairs = pairs.filter(system=system)
    return pairs


def pair_rows(pairs: list[Pair]) -> list[PairRow]:
    """The rows of one page of pairs, with their agreement (one query for their judgements)."""
    answers: dict[int, Counter[str]] = {pair.pk: Counter() for pair in pairs}
    for pair_id, label in Judgement.objects.filter(pair__in=pairs).values_list("pair_id", "label"):
        answers[pair_id][label] += 1
    rows = []
    for pair in pairs:
        counts = answers[pair.pk]
        total = sum(counts.values())
        kind = "training" if pair.is_training else "check" if pair.is_check else "pair"
        rows.append(
            PairRow(
                pair.pk,
                pair.external_id,
                pair.source,
                pair.hypothesis,
                pair.origin,
                pair.system,
                kind,
                total,
                (max(counts.values()) / total) if total >= 2 else None,
            )
        )
    return rows


@dataclass(frozen=True)
class Disagreement:
    """A pair where a metric and the volunteers disagree most: a paraphrase the metric places
    among the farthest pairs, or a non-paraphrase it places among the closest."""

    pk: int
    external_id: str
    source: str
    hypothesis: str
    volunteers: str  # "paraphrase" or "not paraphrase" (the majority of the binary reading)
    score: float
    rank: float  # closeness among the campaign's scored pairs: 0 the farthest, 1 the closest
    disagreement: float  # 1 - rank for a paraphrase, rank for a non-paraphrase


def worst_disagreements(campaign: Campaign, config_id: int, limit: int = 20) -> list[Disagreement]:
    """The ``limit`` corpus pairs whose score under configuration ``config_id`` disagrees most
    with the volunteers' binary verdict, by the score's closeness rank in the metric's own
    direction (:mod:`scoring.analysis.disagreements`, which the dashboard uses too).

    Pairs without a volunteer verdict (no judgement, a tie, only Don't know) or without a score
    are left out; ties of scores share their mean rank.
    """
    config = MetricConfig.objects.filter(pk=config_id).only("higher_is_closer").first()
    if config is None:
        return []
    return verdicts.kept(
        campaign.pk, "disagreements", lambda: _worst_disagreements(campaign, config, limit), (config_id, limit)
    )


def _worst_disagreements(campaign: Campaign, config: MetricConfig, limit: int) -> list[Disagreement]:
    # The metric's scores through a join on the campaign (no list of ids), the people's
    # verdicts from the campaign's kept pair verdicts.
    rows_of_scores = list(
        Score.objects.filter(
            value__isnull=False,
            metric_config_id=config.pk,
            status=Score.Status.DONE,
            pair__campaign=campaign,
            pair__is_training=False,
            pair__is_check=False,
        )
        .order_by("pair_id")
        .values_list("pair_id", "value")
    )
    ids = np.fromiter((pair_id for pair_id, _ in rows_of_scores), dtype=np.int64, count=len(rows_of_scores))
    values = np.fromiter((value for _, value in rows_of_scores), dtype=np.float64, count=len(rows_of_scores))
    binary = verdicts.pair_verdicts(campaign).of(ids)
    found = disagreements.worst_disagreements(values, binary, config.higher_is_closer, limit)
    chosen = [int(ids[item.index]) for item in found]
    pairs = Pair.objects.in_bulk(chosen)
    return [
        Disagreement(
            pk,
            pairs[pk].external_id,
            pairs[pk].source,
            pairs[pk].hypothesis,
            "paraphrase" if item.paraphrase else "not paraphrase",
            item.score,
            item.rank,
            item.disagreement,
        )
        for pk, item in zip(chosen, found, strict=True)
    ]


# --- a large campaign's worst disagreements: the last ones kept, refreshed by a worker -------------

WORST_TASK = "scoring.reports.tasks.refresh_worst_disagreements"
WORST_LIMIT = 20
# Shown when no metric is chosen: no list, and nothing to say about one.
NO_WORST: refreshing.Kept[list[Disagreement]] = refreshing.Kept([])


def _worst_analysis(campaign_id: int, config_id: int, limit: int) -> refreshing.Analysis:
    return refreshing.Analysis(
        key=f"worst:{campaign_id}:{config_id}",
        subject="Worst disagreements",
        first_subject="The worst disagreements",
        task=WORST_TASK,
        arguments={"campaign_id": campaign_id, "config_id": config_id, "limit": limit},
    )


def _worst_version(campaign_id: int, config_id: int, limit: int) -> str:
    """The version of the campaign's data a list is computed at: the dashboard's fingerprint (the
    change counters of its judgements, pairs, volunteers and scores, kept by triggers)."""
    return dataset.data_state(campaign_id).version("worst-disagreements", config_id, limit)


def refresh_worst_pairs(campaign_id: int, config_id: int, limit: int = WORST_LIMIT) -> None:
    """Compute the worst disagreements of a campaign under a configuration now and keep them as
    its last ones (what the ``interactive`` worker runs). The version is read first: a change
    during the pass leaves them marked as older than the data, so the next page queues again."""
    campaign = Campaign.objects.get(pk=campaign_id)
    config = MetricConfig.objects.filter(pk=config_id).only("higher_is_closer").first()
    if config is None:
        return
    version = _worst_version(campaign_id, config_id, limit)
    judgements = tally(campaign).judgements
    rows = _worst_disagreements(campaign, config, limit)
    refreshing.keep(_worst_analysis(campaign_id, config_id, limit), version, judgements, rows)


def worst_pairs(campaign: Campaign, config_id: int, limit: int = WORST_LIMIT) -> refreshing.Kept[list[Disagreement]]:
    """The worst disagreements for the pair list, at a cost that does not grow with the campaign.

    A campaign of at most ``PARAEVAL_DASHBOARD_INLINE_PAIRS`` pairs (the dashboard's bound):
    :func:`worst_disagreements` (exact, in the request). A larger one: the last list kept for the
    current data, or else the last kept one with the moment it was computed while the
    ``interactive`` worker computes it again (:func:`refresh_worst_pairs`, through
    :mod:`scoring.reports.refreshing`; never shown as current). The ranking is the same function
    either way."""
    if not service.is_large(campaign):
        return refreshing.Kept(worst_disagreements(campaign, config_id, limit))
    version = _worst_version(campaign.pk, config_id, limit)
    analysis = _worst_analysis(campaign.pk, config_id, limit)
    return refreshing.shown(analysis, version, tally(campaign).judgements)
