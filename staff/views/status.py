"""The staff status page of the scoring workers (HTML, and JSON for polling)."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache

from scoring.access import status_for
from scoring.pipeline import status as scoring_status

# Seconds between two polls of the JSON variant by the page.
REFRESH_SECONDS = 5


@never_cache
@staff_member_required
def status_page(request: HttpRequest) -> HttpResponse:
    """Queues, workers, scores per metric configuration and throughput; refreshes itself."""
    report = status_for(scoring_status.collect(), request.user)
    return render(request, "staff/status.html", {"report": report, "refresh_seconds": REFRESH_SECONDS})


@never_cache
@staff_member_required
def status_json(request: HttpRequest) -> JsonResponse:
    """The same report as JSON (what the page polls)."""
    return JsonResponse(scoring_status.as_json(status_for(scoring_status.collect(), request.user)))
