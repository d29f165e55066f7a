"""The volunteer flow: start, the current pair, record an answer, training feedback, the end.

Plain typed functions; the views only translate HTTP to these calls and back.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotate import allocation
from annotate.allocation import Answered, CampaignSize, EndReason
from annotate.diff import Segment, highlight
from annotate.labels import EnglishLevel, Label
from annotate.models import Assignment, Campaign, Judgement, Pair, Volunteer
from annotate.signals import announce_judgement_recorded

# Rough reading-and-deciding time per pair, for the length estimate on the welcome page.
SECONDS_PER_PAIR = 15


class CampaignClosedError(Exception):
    """The campaign accepts no new volunteers."""


class NotAssignedError(Exception):
    """The pair is not one this volunteer was given (or it does not exist)."""


class AnswerOutcome(StrEnum):
    STORED = "stored"  # a new judgement
    DUPLICATE = "duplicate"  # already answered (double click, replayed POST): nothing stored
    REASSIGNED = "reassigned"  # the reservation expired and the pair went to others: not stored


@dataclass(frozen=True)
class Progress:
    """Where a volunteer stands: "Pair ``position`` of ``total``", training included."""

    position: int
    total: int
    training_total: int
    answered: int
    campaign_answered: int

    @property
    def pairs_judged(self) -> int:
        """Pairs judged after the training, check pairs included: what the welcome page's
        "N pairs to judge" counts (a volunteer cannot tell a check from another pair)."""
        return max(self.answered - self.training_total, 0)

    @property
    def in_training(self) -> bool:
        return self.answered < self.training_total

    @property
    def percent_done(self) -> int:
        return round(100 * self.answered / self.total) if self.total else 100

    @property
    def minutes_left(self) -> int:
        """Estimated minutes for the pairs not answered yet (0: less than a minute)."""
        return round(max(self.total - self.answered, 0) * SECONDS_PER_PAIR / 60)


@dataclass(frozen=True)
class Sentence:
    text: str
    segments: list[Segment]


@dataclass(frozen=True)
class CurrentPair:
    """What the pair page shows."""

    assignment: Assignment
    pair: Pair
    top: Sentence
    bottom: Sentence
    progress: Progress
    # An expired reservation could not be renewed and was replaced by this pair.
    replaced_expired: bool = False

    @property
    def is_training(self) -> bool:
        return self.pair.is_training

    @property
    def item(self) -> int:
        """How the page names the pair: its place in the volunteer's own sequence.

        Never the pair's database id: ids follow the import order, so check pairs imported
        apart from the real ones would stand out by their ids.
        """
        return self.assignment.position or 0


def pair_of_item(volunteer: Volunteer, item: int) -> int | None:
    """The pair the volunteer was given as item ``item`` of their sequence (None: no such item)."""
    return (
        Assignment.objects.filter(volunteer=volunteer, position=item)
        .order_by("-id")
        .values_list("pair_id", flat=True)
        .first()
    )


@dataclass(frozen=True)
class AnswerResult:
    outcome: AnswerOutcome
    judgement: Judgement | None
    pair: Pair

    @property
    def show_training_feedback(self) -> bool:
        return self.judgement is not None and self.judgement.is_training


@dataclass(frozen=True)
class TrainingFeedback:
    """The expected answer of a training pair beside the volunteer's."""

    pair: Pair
    judgement: Judgement
    top: Sentence
    bottom: Sentence
    given: Label
    expected: Label | None
    progress: Progress

    @property
    def matches(self) -> bool:
        return self.expected is not None and self.given == self.expected


class Step(StrEnum):
    """What a volunteer must see before their next pair."""

    GUIDELINES = "guidelines"  # the guidelines, once, before the training
    TRAINING_DONE = "training_done"  # the page that says the training is over, once
    PAIR = "pair"


def next_step(volunteer: Volunteer) -> Step:
    """Whether the volunteer still has the guidelines or the end-of-training page to see.

    Costs nothing once both were seen (two fields of the volunteer's row); until then, two
    small counts.
    """
    if volunteer.guidelines_seen_at is None:
        return Step.GUIDELINES
    if volunteer.training_done_seen_at is None:
        training = Pair.objects.filter(campaign_id=volunteer.campaign_id, is_training=True).count()
        if training == 0:
            return Step.PAIR
        answered = Judgement.objects.filter(volunteer=volunteer, is_training=True).count()
        if answered >= training:
            return Step.TRAINING_DONE
    return Step.PAIR


def mark_seen(volunteer: Volunteer, step: Step) -> None:
    """Record that the volunteer went past the guidelines or the end-of-training page (once).

    A campaign without training has no end-of-training page: leaving the guidelines marks both,
    so that later pages need no count.
    """
    fields = {Step.GUIDELINES: ["guidelines_seen_at"], Step.TRAINING_DONE: ["training_done_seen_at"]}[step]
    if step is Step.GUIDELINES and training_count(volunteer.campaign) == 0:
        fields.append("training_done_seen_at")
    now = timezone.now()
    for field in fields:
        # Only the first time counts: a replayed POST leaves the stored moment alone.
        Volunteer.objects.filter(pk=volunteer.pk, **{f"{field}__isnull": True}).update(**{field: now})
        if getattr(volunteer, field) is None:
            setattr(volunteer, field, now)


def training_count(campaign: Campaign) -> int:
    """How many training pairs the campaign has (the guidelines step names the next page)."""
    return Pair.objects.filter(campaign=campaign, is_training=True).count()


def campaign_length(campaign: Campaign) -> tuple[int, int, int]:
    """(training pairs, campaign pairs a volunteer will see at most (checks included), estimated minutes)."""
    size = allocation.campaign_size(campaign)
    minutes = max(1, round(size.total * SECONDS_PER_PAIR / 60))
    return size.training, size.pool_up_to_quota + size.checks, minutes


def start_volunteer(campaign: Campaign, *, english_level: str, consented: bool) -> Volunteer:
    """Create an anonymous volunteer who consented and stated their English level."""
    if not campaign.is_open:
        raise CampaignClosedError(f"campaign {campaign.slug!r} is closed")
    if not consented:
        raise ValueError("the volunteer must consent before starting")
    level = EnglishLevel(english_level)  # ValueError names the bad value
    return Volunteer.objects.create(campaign=campaign, english_level=level.value, consented_at=timezone.now())


def _progress(size: CampaignSize, answered: Answered) -> Progress:
    total = size.total
    return Progress(
        position=min(answered.total + 1, max(total, 1)),
        total=total,
        training_total=size.training,
        answered=answered.total,
        campaign_answered=answered.campaign,
    )


def progress_of(volunteer: Volunteer) -> Progress:
    """Pair N of T: T = training pairs + min(quota, campaign pairs in the pool)."""
    return _progress(allocation.campaign_size(volunteer.campaign), allocation.answered_by(volunteer))


def _sentences(pair: Pair, source_on_top: bool) -> tuple[Sentence, Sentence]:
    top, bottom = (pair.source, pair.hypothesis) if source_on_top else (pair.hypothesis, pair.source)
    top_segments, bottom_segments = highlight(top, bottom)
    return Sentence(top, top_segments), Sentence(bottom, bottom_segments)


def current_pair(volunteer: Volunteer) -> CurrentPair | None:
    """The pair the volunteer should answer now, or None when they are done (then marked finished)."""
    step = allocation.next_assignment(volunteer)
    if step.assignment is None:
        if volunteer.finished_at is None:
            volunteer.finished_at = timezone.now()
            Volunteer.objects.filter(pk=volunteer.pk, finished_at__isnull=True).update(
                finished_at=volunteer.finished_at
            )
        return None
    if volunteer.finished_at is not None:
        # New pairs arrived after the pool ran out: the volunteer is back at work.
        volunteer.finished_at = None
        Volunteer.objects.filter(pk=volunteer.pk).update(finished_at=None)
    assignment = step.assignment
    top, bottom = _sentences(assignment.pair, assignment.source_on_top)
    return CurrentPair(
        assignment=assignment,
        pair=assignment.pair,
        top=top,
        bottom=bottom,
        progress=_progress(step.size, step.answered),
        replaced_expired=step.dropped_expired,
    )


def end_reason(progress: Progress, campaign: Campaign) -> EndReason:
    """Why a finished volunteer stopped: their quota, or a pool with nothing left for them."""
    return EndReason.QUOTA if progress.campaign_answered >= campaign.quota else EndReason.EXHAUSTED


def record_answer(volunteer: Volunteer, pair_id: int, label: str) -> AnswerResult:
    """Store the volunteer's answer about one of their pairs, once.

    Idempotent: a double click or a replayed POST finds the assignment answered (its row lock
    makes copies take turns), or hits the unique constraint on (volunteer, pair), and stores
    nothing more. An answer to a reservation that expired is stored only if the pair is still
    available; otherwise it went to other volunteers meanwhile and the answer is dropped
    (outcome REASSIGNED), so the target is never overshot. Raises ``ValueError`` for a label
    that is not one of the five, ``NotAssignedError`` for a pair this volunteer was never given.
    """
    answer = Label(label)
    try:
        return _store_answer(volunteer, pair_id, answer)
    except IntegrityError:
        # The unique constraint: a judgement of this volunteer for this pair was stored by
        # another path. The transaction rolled back whole; keep the stored judgement and
        # close the assignment so that the pair is not shown again.
        with transaction.atomic():
            existing = Judgement.objects.select_related("pair").filter(volunteer=volunteer, pair_id=pair_id).first()
            if existing is None:
                raise
            Assignment.objects.filter(volunteer=volunteer, pair_id=pair_id, answered_at__isnull=True).update(
                answered_at=existing.answered_at
            )
        return AnswerResult(AnswerOutcome.DUPLICATE, existing, existing.pair)


def _store_answer(volunteer: Volunteer, pair_id: int, answer: Label) -> AnswerResult:
    now = timezone.now()
    with transaction.atomic():
        if volunteer.reservation_lapsed_at is not None:
            # This answer clears the lapse on the volunteer's row: take that lock first, as
            # the allocator does (the module's lock order: volunteer, assignment, pair).
            allocation.lock_volunteer(volunteer)
        assignment = allocation.lock_open_assignments(volunteer).filter(pair_id=pair_id).first()
        if assignment is None:
            existing = Judgement.objects.select_related("pair").filter(volunteer=volunteer, pair_id=pair_id).first()
            if existing is not None:  # already answered: a double click or a replayed POST
                return AnswerResult(AnswerOutcome.DUPLICATE, existing, existing.pair)
            raise NotAssignedError(f"pair {pair_id} is not assigned to this volunteer")
        pair = assignment.pair
        assignment.volunteer = volunteer
        if not allocation.revalidate(assignment, volunteer.campaign, now, reshow=False):
            assignment.delete()
            return AnswerResult(AnswerOutcome.REASSIGNED, None, pair)
        judgement = Judgement.objects.create(
            volunteer=volunteer,
            pair=pair,
            label=answer.value,
            source_on_top=assignment.source_on_top,
            is_training=pair.is_training,
            is_check=pair.is_check,
            position=assignment.position,
            shown_at=assignment.shown_at,
            answered_at=now,
        )
        Assignment.objects.filter(pk=assignment.pk).update(answered_at=now)
        if not (pair.is_training or pair.is_check):
            allocation.clear_lapse(volunteer)
        announce_judgement_recorded(judgement.pk, pair.pk)
    return AnswerResult(AnswerOutcome.STORED, judgement, pair)


def training_feedback(volunteer: Volunteer, pair_id: int) -> TrainingFeedback:
    """The feedback on a training pair this volunteer answered (``Judgement.DoesNotExist`` otherwise)."""
    # By the (volunteer, pair) key alone, then checked: with ``is_training`` in the statement the
    # planner may walk the training pair's index instead, every volunteer's answer to that pair.
    judgement = Judgement.objects.select_related("pair").get(volunteer=volunteer, pair_id=pair_id)
    if not judgement.is_training:
        raise Judgement.DoesNotExist(f"pair {pair_id} is not a training pair of this volunteer")
    pair = judgement.pair
    top, bottom = _sentences(pair, judgement.source_on_top)
    return TrainingFeedback(
        pair=pair,
        judgement=judgement,
        top=top,
        bottom=bottom,
        given=Label(judgement.label),
        expected=Label(pair.expected_label) if pair.expected_label else None,
        progress=progress_of(volunteer),
    )


__all__ = [
    "AnswerOutcome",
    "AnswerResult",
    "CampaignClosedError",
    "CurrentPair",
    "NotAssignedError",
    "Progress",
    "Step",
    "TrainingFeedback",
    "campaign_length",
    "current_pair",
    "end_reason",
    "mark_seen",
    "next_step",
    "pair_of_item",
    "progress_of",
    "record_answer",
    "start_volunteer",
    "training_count",
    "training_feedback",
]
