"""Staff pages of a campaign's volunteers: judge quality, overrides, crowd-platform participants.

Thin views over :mod:`annotate.quality` (its verdicts kept by :mod:`scoring.reports.verdicts`)
and :mod:`annotate.participants`.
"""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from annotate import allocation, participants, quality
from annotate.models import Volunteer
from annotate.signals import announce_exclusions_changed
from annotate.teams import campaign_or_404
from paraeval.textcheck import InvalidText, first_invalid
from scoring.reports import verdicts

OVERRIDES = {"", "include", "exclude"}
# Volunteers a page of the volunteers table shows.
PAGE_SIZE = 100


def _refuse(reason: str) -> HttpResponseBadRequest:
    """A 400 whose text says what was wrong with the form."""
    return HttpResponseBadRequest(f"Bad request: {reason}", content_type="text/plain; charset=utf-8")


@never_cache
@staff_member_required
@require_http_methods(["GET", "HEAD", "POST"])
def volunteers(request: HttpRequest, slug: str) -> HttpResponse:
    """Every volunteer's evidence, the rule's verdict, and a form to override it."""
    campaign = campaign_or_404(request.user, slug)
    if request.method == "POST":
        override = request.POST.get("override", "")
        if override not in OVERRIDES:
            return _refuse(f"override must be one of include, exclude or empty, not {override!r}")
        raw_id = request.POST.get("volunteer", "")
        volunteer_id = int(raw_id) if raw_id.isascii() and raw_id.isdigit() and len(raw_id) < 19 else None
        if volunteer_id is None:
            return _refuse(f"volunteer must be a volunteer's number, not {raw_id!r}")
        note = request.POST.get("note", "")
        character = first_invalid(note)
        if character is not None:  # PostgreSQL cannot store it: a DataError (a 500) otherwise
            return _refuse(InvalidText("note", character).message)
        updated = Volunteer.objects.filter(campaign=campaign, pk=volunteer_id).update(
            exclusion_override=override, exclusion_note=note[:300]
        )
        if not updated:
            return _refuse("no such volunteer in this campaign")
        announce_exclusions_changed(campaign.pk)
        return redirect("staff:volunteers", slug=slug)
    shown = verdicts.staff_verdicts(campaign)
    found = shown.value or []
    # Flagged ones first, each group in the order they came (a stable sort).
    ordered = sorted(found, key=lambda verdict: verdict.flagged, reverse=True)
    page = Paginator(ordered, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "campaign": campaign,
        "page": page,
        "verdicts": page.object_list,
        "verdicts_notice": shown.notice,
        # No count at all rather than zeros while the first verdicts are computed.
        "summary": participants.summary(campaign, found) if shown.value is not None else None,
        "rule": quality.Rule.of(campaign),
        "places": allocation.places(campaign),
    }
    return render(request, "staff/volunteers.html", context)


@never_cache
@staff_member_required
@require_GET
def participants_csv(request: HttpRequest, slug: str) -> StreamingHttpResponse:
    """The participants with their status, for approving payments on the platform."""
    campaign = campaign_or_404(request.user, slug)
    response = StreamingHttpResponse(participants.csv_lines(campaign), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{campaign.slug}-participants.csv"'
    return response
