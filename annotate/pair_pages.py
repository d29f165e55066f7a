"""What the staff pages of pairs show: one pair with every judgement and score, and a
campaign's pairs, searchable, with their agreement.

Plain functions returning dataclasses; :mod:`annotate.pair_views` renders them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from django.db.models import Q, QuerySet

from annotate import quality
from annotate.diff import Segment, highlight
from annotate.exports.pseudonyms import volunteer_pseudonym
from annotate.labels import LABEL_DISPLAY, Label
from annotate.models import Campaign, Judgement, Pair
from scoring.models import Score

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
    or not) and every score with its configuration's label."""
    excluded = quality.excluded_volunteer_ids(pair.campaign)
    judgements = [
        JudgementRow(
            pseudonym=volunteer_pseudonym(judgement.volunteer.token),
            answer=_answer(judgement.label),
            seconds=(judgement.answered_at - judgement.shown_at).total_seconds(),
            position=judgement.position,
            excluded=judgement.volunteer_id in excluded,
            answered_at=judgement.answered_at.strftime("%Y-%m-%d %H:%M"),
        )
        for judgement in Judgement.objects.filter(pair=pair).select_related("volunteer").order_by("answered_at")
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
