"""Crowd platforms: participant identifiers in, completion codes out (Prolific first).

A campaign that recruits through a platform takes the platform's participant, study and
session identifiers from the URL of its link (Prolific appends ``PROLIFIC_PID``, ``STUDY_ID``
and ``SESSION_ID``; other platforms name their parameters in the campaign). One participant is
one volunteer: a second start with the same participant id *and the same session id* resumes
the first; the same participant id with another session id is refused (the participant id is
no password: anyone who knows it could otherwise finish the study in their name and read
their code). The completion code is computed by the server only for a volunteer who has
finished, and only if the campaign's exclusion rule keeps them (``annotate.quality``); a
flagged volunteer gets the campaign's screened-out code, or none; a volunteer who judged no
campaign pair (the campaign filled up meanwhile) gets none. The code shown is recorded
(``Volunteer.completion_*``), with the rule's verdict of that moment; a code once shown is never
taken back, and a participant told "no code" who judges pairs afterwards (places came free) is
judged again at their next end page, so work done is always credited.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import quote

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotate import quality
from annotate.labels import EnglishLevel
from annotate.models import Assignment, Campaign, Judgement, Volunteer

# Identifiers are short opaque strings; anything else is refused rather than stored.
MAX_IDENTIFIER_LENGTH = 100


class PlatformError(ValueError):
    """The link lacks the participant identifier, or one identifier is not acceptable."""


@dataclass(frozen=True)
class ParticipantIds:
    """What the platform put in the URL."""

    participant: str
    study: str = ""
    session: str = ""


def _clean(name: str, value: str | None) -> str:
    value = (value or "").strip()
    if len(value) > MAX_IDENTIFIER_LENGTH:
        raise PlatformError(f"{name} is longer than {MAX_IDENTIFIER_LENGTH} characters")
    if any(not character.isprintable() for character in value):
        raise PlatformError(f"{name} contains characters that are not allowed")
    return value


def participant_ids(campaign: Campaign, params: dict[str, str]) -> ParticipantIds | None:
    """The identifiers in ``params`` (query string or form), or None for a campaign without platform.

    Raises ``PlatformError`` naming the parameter when the participant id is missing or bad;
    a campaign that ``accepts_plain_link`` takes a link without the parameter as a volunteer's (None).
    """
    if not campaign.platform:
        return None
    if campaign.accepts_plain_link and campaign.participant_param not in params:
        return None  # the plain link: a volunteer beside the platform's participants
    participant = _clean(campaign.participant_param, params.get(campaign.participant_param))
    if not participant:
        raise PlatformError(
            f"this link needs your participant ID ({campaign.participant_param}): "
            f"please open the study from {campaign.get_platform_display()}"
        )
    return ParticipantIds(
        participant=participant,
        study=_clean(campaign.study_param, params.get(campaign.study_param)),
        session=_clean(campaign.session_param, params.get(campaign.session_param)),
    )


class SessionMismatchError(PlatformError):
    """The participant id started before, in another platform session: no resume."""


def returning_participant(campaign: Campaign, ids: ParticipantIds | None) -> Volunteer | None:
    """The volunteer this participant already is, if they started before (they resume).

    Raises ``SessionMismatchError`` when the participant id is known but the link's session id
    is not the one they started with: a platform session is what proves the participant.
    """
    if ids is None:
        return None
    volunteer = (
        Volunteer.objects.select_related("campaign").filter(campaign=campaign, participant_id=ids.participant).first()
    )
    if volunteer is not None and volunteer.session_id != ids.session:
        raise SessionMismatchError(
            f"this participant ID already started the study in another session ({campaign.session_param} differs)"
        )
    return volunteer


def start_participant(campaign: Campaign, ids: ParticipantIds, *, english_level: str) -> tuple[Volunteer, bool]:
    """Create the participant's volunteer, or return the one they already are.

    Returns (volunteer, created). The unique constraint (campaign, participant_id) settles two
    starts at the same moment: the second finds the first.
    """
    level = EnglishLevel(english_level)
    try:
        with transaction.atomic():
            volunteer = Volunteer.objects.create(
                campaign=campaign,
                english_level=level.value,
                consented_at=timezone.now(),
                participant_id=ids.participant,
                study_id=ids.study,
                session_id=ids.session,
            )
        return volunteer, True
    except IntegrityError:
        existing = returning_participant(campaign, ids)  # SessionMismatchError for another session
        if existing is None:
            raise
        return existing, False


class CodeKind(StrEnum):
    COMPLETED = "completed"  # the completion code: the participant may be approved
    SCREENED_OUT = "screened_out"  # the campaign's other code for flagged participants
    NONE = "none"  # flagged, and the campaign has no other code
    FULL = "full"  # judged no campaign pair (the campaign filled up): nothing to pay for


@dataclass(frozen=True)
class Completion:
    """What the end page shows a participant."""

    kind: CodeKind
    code: str
    url: str

    @property
    def has_code(self) -> bool:
        return bool(self.code)


def completion_for(volunteer: Volunteer, *, excluded: bool, judged: int = 1) -> Completion | None:
    """The code the rule would give a participant who finished; None before the end or without a platform.

    ``judged`` is how many campaign pairs they judged: with none (the campaign was full by the
    time they finished the training) there is nothing to pay for and no code.
    """
    campaign = volunteer.campaign
    if not campaign.platform or volunteer.finished_at is None or volunteer.returned_at is not None:
        return None
    if not volunteer.participant_id:
        return None  # came through the plain link (accepts_plain_link): not a platform participant
    if judged == 0:
        return Completion(CodeKind.FULL, "", "")
    if not excluded and campaign.completion_code:
        kind, code = CodeKind.COMPLETED, campaign.completion_code
    elif excluded and campaign.screened_out_code:
        kind, code = CodeKind.SCREENED_OUT, campaign.screened_out_code
    else:
        return Completion(CodeKind.NONE, "", "")
    return Completion(kind, code, _url(campaign, code))


def _url(campaign: Campaign, code: str) -> str:
    return campaign.completion_url.replace("{code}", quote(code, safe="")) if campaign.completion_url else ""


def worked_since_verdict(volunteer: Volunteer) -> bool:
    """Whether the volunteer's end record showed no code and they judged pairs after it.

    Such a record is out of date: a participant told "full" (0 pairs) who was given pairs once
    places came free, or one flagged who judged more. A record that showed a code never is:
    the participant may have handed it in already, so it stands (one query only without a code).
    """
    if volunteer.verdict_at is None or volunteer.completion_code_shown:
        return False
    since = Judgement.objects.filter(volunteer=volunteer, is_training=False, answered_at__gt=volunteer.verdict_at)
    return since.exists()


def record_end(volunteer: Volunteer) -> Completion | None:
    """The end page's verdict and code, computed when the volunteer reaches it with work not judged yet.

    The first call judges the volunteer by the campaign's rule (their own answers only,
    :func:`annotate.quality.rule_verdict`) and stores the verdict and the code shown with the
    moment; later calls read the record back (a reload costs one row, and a later change of the
    rule never changes what the participant was shown). The one exception: a record that
    showed no code is made again when the volunteer judged pairs after it
    (:func:`worked_since_verdict`), so that work done after being told "full" is credited, and
    the code shown then is the one recorded. Concurrent calls store once: the UPDATE only
    writes a record that is still the one it replaces.
    """
    if volunteer.verdict_at is None or worked_since_verdict(volunteer):
        verdict = quality.rule_verdict(volunteer)
        completion = completion_for(volunteer, excluded=verdict.excluded, judged=verdict.campaign_answers)
        now = timezone.now()
        record = {
            "verdict_at": now,
            "verdict_reasons": verdict.exclusion_reason[:300],
            "completion_kind": completion.kind.value if completion else "",
            "completion_code_shown": completion.code if completion else "",
            "completion_shown_at": now if completion else None,
        }
        # ``verdict_at=None`` matches a volunteer with no record yet (Django reads it as IS NULL).
        Volunteer.objects.filter(pk=volunteer.pk, verdict_at=volunteer.verdict_at).update(**record)
        volunteer.refresh_from_db(fields=list(record))
    if not volunteer.completion_kind:
        return None
    code = volunteer.completion_code_shown
    return Completion(CodeKind(volunteer.completion_kind), code, _url(volunteer.campaign, code) if code else "")


def return_study(volunteer: Volunteer) -> int:
    """The participant gives the study back early: free their reserved pairs at once.

    Returns how many reservations were released. Answers already given stay (they were given
    in good faith); the volunteer gets no code.
    """
    with transaction.atomic():
        released, _ = Assignment.objects.filter(volunteer=volunteer, answered_at__isnull=True).delete()
        Volunteer.objects.filter(pk=volunteer.pk, returned_at__isnull=True).update(returned_at=timezone.now())
    volunteer.refresh_from_db(fields=["returned_at"])
    return released


__all__ = [
    "CodeKind",
    "Completion",
    "ParticipantIds",
    "PlatformError",
    "SessionMismatchError",
    "completion_for",
    "participant_ids",
    "record_end",
    "return_study",
    "returning_participant",
    "start_participant",
    "worked_since_verdict",
]
