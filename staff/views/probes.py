"""The staff page of a campaign's probe set: each metric's robustness card and a sample of each
probe kind, so a researcher can judge the probes before trusting the figures.

A thin view over :mod:`scoring.reports.robustness`.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from annotate.teams import campaign_or_404
from scoring.probes.build import BUILDABLE
from scoring.probes.requests import ProbeSetError, parse_kinds, queue_probe_set
from scoring.reports.robustness import READINGS, probe_samples, probe_set_for, robustness_cards

SAMPLES_PER_KIND = 5


@never_cache
@staff_member_required
@require_http_methods(["GET", "HEAD", "POST"])
def probe_set_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The campaign's probe set (its own, or the latest built from it): cards and samples; a
    POST queues a new probe set of the kinds ticked."""
    campaign = campaign_or_404(request.user, slug)
    if request.method == "POST":
        try:
            kinds = parse_kinds(request.POST.getlist("kinds"))
            queue_probe_set(campaign, kinds=kinds, seed=settings.PARAEVAL_SEED)
        except ProbeSetError as error:
            return HttpResponseBadRequest(f"Bad request: {error}", content_type="text/plain; charset=utf-8")
        return redirect(f"{request.path}?queued=1")
    probe_set = probe_set_for(campaign)
    readings = [(name.replace("_", " ").capitalize(), text) for name, text in READINGS.items()]
    context: dict[str, object] = {
        "campaign": campaign,
        "probe_set": probe_set,
        "readings": readings,
        "buildable": [kind.value for kind in BUILDABLE],
        "queued": request.GET.get("queued") == "1",
    }
    if probe_set is not None:
        cards = robustness_cards(
            probe_set, resamples=settings.PARAEVAL_BOOTSTRAP_RESAMPLES, seed=settings.PARAEVAL_SEED
        )
        context["cards"] = cards
        context["kinds"] = [row.kind for row in cards[0].card.below_control] if cards else []
        context["samples"] = probe_samples(probe_set, SAMPLES_PER_KIND)
    return render(request, "staff/probes.html", context)
