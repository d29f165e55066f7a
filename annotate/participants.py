"""Crowd-platform participants as staff see them: who started, finished, returned, is excluded.

The list of participant ids with their status is what a researcher needs to approve payments
on the platform; it carries the platform's own ids (not pseudonyms), so it is a staff download,
never part of the corpus exports.
"""

from __future__ import annotations

import csv
import io
import statistics
from collections.abc import Iterator
from dataclasses import dataclass

from annotate.exports.spreadsheet import neutralise
from annotate.models import Campaign, Volunteer
from annotate.platforms import CodeKind
from annotate.quality import VolunteerQuality, campaign_quality

PARTICIPANT_COLUMNS = (
    "participant_id",
    "study_id",
    "session_id",
    "status",
    "excluded",
    "exclusion_reason",
    "code_shown",
    "code_shown_text",
    "code_shown_at",
    "code_under_current_rule",
    "checks_passed",
    "checks_seen",
    "pairs_judged",
    "minutes_judging",
    "started_at",
    "finished_at",
)


@dataclass(frozen=True)
class Summary:
    """Counts a researcher checks before approving a platform study."""

    started: int
    finished: int
    returned: int
    excluded: int
    median_minutes: float | None  # median time spent judging, over volunteers who finished

    @property
    def in_progress(self) -> int:
        return self.started - self.finished - self.returned


def status_of(verdict: VolunteerQuality) -> str:
    if verdict.returned:
        return "returned"
    return "finished" if verdict.finished else "in progress"


def code_of(campaign: Campaign, verdict: VolunteerQuality) -> str:
    """Which code the campaign's *current* rule would give: completed, screened_out, none, full, or ''.

    The same rule as :func:`annotate.platforms.completion_for`, read from the verdict. The code
    the participant was actually shown is the record ``Volunteer.completion_kind`` (column
    ``code_shown``); this one changes when staff change the rule.
    """
    if not verdict.finished or verdict.returned:
        return ""
    if verdict.campaign_answers == 0:
        return CodeKind.FULL.value
    if not verdict.excluded and campaign.completion_code:
        return CodeKind.COMPLETED.value
    if verdict.excluded and campaign.screened_out_code:
        return CodeKind.SCREENED_OUT.value
    return CodeKind.NONE.value


def summary(campaign: Campaign, verdicts: list[VolunteerQuality] | None = None) -> Summary:
    """Started / finished / returned / excluded volunteers and the median time of those who finished."""
    verdicts = campaign_quality(campaign) if verdicts is None else verdicts
    finished_minutes = [v.minutes_spent for v in verdicts if v.finished and not v.returned and v.minutes_spent]
    return Summary(
        started=len(verdicts),
        finished=sum(v.finished and not v.returned for v in verdicts),
        returned=sum(v.returned for v in verdicts),
        excluded=sum(v.excluded for v in verdicts),
        median_minutes=statistics.median(finished_minutes) if finished_minutes else None,
    )


def csv_lines(campaign: Campaign) -> Iterator[str]:
    """The participants' CSV, line by line (RFC 4180; text cells safe for spreadsheets)."""
    volunteers = {v.pk: v for v in Volunteer.objects.filter(campaign=campaign)}
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(PARTICIPANT_COLUMNS)
    for verdict in campaign_quality(campaign):
        volunteer = volunteers[verdict.volunteer_id]
        writer.writerow(
            [
                neutralise(volunteer.participant_id),
                neutralise(volunteer.study_id),
                neutralise(volunteer.session_id),
                status_of(verdict),
                "yes" if verdict.excluded else "no",
                neutralise(verdict.exclusion_reason),
                volunteer.completion_kind,
                neutralise(volunteer.completion_code_shown),  # the code itself, as the page showed it
                volunteer.completion_shown_at.isoformat() if volunteer.completion_shown_at else "",
                code_of(campaign, verdict),
                verdict.checks_passed,
                verdict.checks_seen,
                verdict.campaign_answers,
                f"{verdict.minutes_spent:.2f}" if verdict.minutes_spent is not None else "",
                volunteer.created_at.isoformat(),
                volunteer.finished_at.isoformat() if volunteer.finished_at else "",
            ]
        )
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    if buffer.getvalue():
        yield buffer.getvalue()


__all__ = ["PARTICIPANT_COLUMNS", "Summary", "code_of", "csv_lines", "status_of", "summary"]
