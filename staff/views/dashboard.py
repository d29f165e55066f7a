"""The staff agreement dashboard: a page, and the JSON it polls (with an ETag).

Both views are thin: filters are read by a form, the numbers come from
:func:`scoring.reports.service.campaign_report`, which recomputes only when the data
version changed. The JSON view answers ``304 Not Modified`` to a poll whose
``If-None-Match`` carries the current version, so an unchanged campaign costs one query.
The bootstrap intervals are computed on the ``cpu`` queue: the first answer has the point
estimates, and the ETag changes again when the intervals are in.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import require_GET

from annotate.exports.links import export_links
from annotate.labels import ENGLISH_LEVEL_ORDER
from annotate.models import Campaign, campaign_label
from annotate.teams import campaigns_for
from scoring.reports import dataset, stopping
from scoring.reports.dataset import Filters
from scoring.reports.failures import failure_reasons
from scoring.reports.robustness import robustness_readings
from scoring.reports.service import (
    DashboardReport,
    FilterError,
    KeptBody,
    dashboard_content,
    dashboard_report,
    keep_body,
)
from scoring.tuning import service as judge_tuning

# Seconds between two polls of the JSON endpoint by the page.
REFRESH_SECONDS = 5

REFERENCE_CHOICES = [("volunteers", "Volunteers (majority)"), ("gold", "Imported gold labels")]
LEVEL_CHOICES = [("", "All levels"), *[(level.value, level.value.capitalize()) for level in ENGLISH_LEVEL_ORDER]]


class DashboardFilterForm(forms.Form):
    """The page's filters, also the query string of the JSON endpoint."""

    campaign = forms.SlugField(required=False)
    reference = forms.ChoiceField(choices=REFERENCE_CHOICES, required=False)
    origin = forms.CharField(required=False, max_length=100)
    english_level = forms.ChoiceField(choices=LEVEL_CHOICES, required=False)
    date_from = forms.DateField(required=False)
    date_to = forms.DateField(required=False)
    # A CharField, not a BooleanField: Django's checkbox reads "0" as checked.
    exclude_flagged = forms.CharField(required=False, max_length=5)

    def clean_exclude_flagged(self) -> bool:
        value = (self.cleaned_data.get("exclude_flagged") or "").lower()
        if value in ("", "0", "false", "off"):
            return False
        if value in ("1", "true", "on"):
            return True
        raise forms.ValidationError("expected 1 or 0")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        start, end = data.get("date_from"), data.get("date_to")
        if start and end and start > end:
            self.add_error("date_to", "must be on or after the start date")
        return data

    def filters(self) -> Filters:
        """The report's filters (:class:`FilterError` names a bad one)."""
        data = self.cleaned_data
        return Filters.build(
            reference=data.get("reference") or "volunteers",
            origin=data.get("origin") if data.get("origin") not in (None, "", "__all__") else None,
            english_level=data.get("english_level") or None,
            date_from=data.get("date_from"),
            date_to=data.get("date_to"),
            exclude_flagged=bool(data.get("exclude_flagged")),
        )


def _campaign(user: Any, slug: str | None) -> Campaign | None:
    """The campaign asked for, else the demo campaign, else the newest one (of those ``user`` sees)."""
    campaigns = campaigns_for(user)
    if slug:
        return campaigns.filter(slug=slug).first()
    preferred = campaigns.filter(slug=getattr(settings, "PARAEVAL_DEMO_CAMPAIGN", "demo")).first()
    return preferred or campaigns.order_by("-created_at").first()


@never_cache
@staff_member_required
@require_GET
def dashboard(request: HttpRequest) -> HttpResponse:
    """The page: filters, live counts, the paper's tables and charts drawn from the JSON."""
    form = DashboardFilterForm(request.GET)
    form.is_valid()  # the page shows what it can; the JSON endpoint reports bad filters
    slug = form.cleaned_data.get("campaign") if hasattr(form, "cleaned_data") else None
    campaign = _campaign(request.user, slug)
    context: dict[str, Any] = {
        "campaigns": [
            (slug, campaign_label(name, slug))
            for slug, name in campaigns_for(request.user).order_by("name", "slug").values_list("slug", "name")
        ],
        "campaign": campaign,
        "missing_slug": slug if slug and campaign is None else None,
        "filters": form.cleaned_data,
        "reference_choices": REFERENCE_CHOICES,
        "level_choices": LEVEL_CHOICES,
        "refresh_seconds": REFRESH_SECONDS,
    }
    if campaign is not None:
        context.update(
            origins=dataset.origins(campaign),
            exports=export_links(campaign.slug),
            tuned_notes=judge_tuning.dashboard_notes(campaign),
            failure_reasons=failure_reasons(campaign),
            stopping=stopping.stopping_json(campaign),
            robustness_readings=robustness_readings(),
            **_paraphrasus_context(campaign, request.GET.get("fit_on") or None),
        )
    status = 404 if context["missing_slug"] else 200
    return render(request, "staff/dashboard.html", context, status=status)


def _paraphrasus_context(campaign: Campaign, fit_on: str | None) -> dict[str, Any]:
    """The PARAPHRASUS section: its table (when the campaign's corpora have objectives) or why not."""
    from scoring.analysis.paraphrasus import Objective
    from scoring.reports.paraphrasus import (
        ObjectiveError,
        campaign_paraphrasus,
        objectives,
        paraphrasus_table,
    )

    stored = objectives(campaign)
    if not stored:
        return {"paraphrasus": None}
    try:
        report = campaign_paraphrasus(campaign, fit_on=fit_on)
    except ObjectiveError as error:
        return {"paraphrasus": None, "paraphrasus_error": str(error)}
    return {
        "paraphrasus": paraphrasus_table(report),
        "paraphrasus_fit_on": report.result.fit_on,
        "paraphrasus_fit_choices": sorted(origin for origin, value in stored.items() if value is Objective.CLASSIFY),
    }


@gzip_page
@never_cache
@require_GET
def dashboard_data(request: HttpRequest) -> HttpResponse:
    """The report as JSON; ``304`` when ``If-None-Match`` holds the current version.

    ``report_status`` says whether the report is live, the last kept one while a newer one is
    computed ("stale"), or not there yet ("computing", "unavailable"), in words."""
    user = request.user
    if not (user.is_authenticated and user.is_active and user.is_staff):
        return JsonResponse({"error": "Staff login required.", "login": reverse("admin:login")}, status=403)
    form = DashboardFilterForm(request.GET)
    if not form.is_valid():
        return JsonResponse({"error": "Invalid filters.", "fields": form.errors.get_json_data()}, status=400)
    campaign = _campaign(user, form.cleaned_data.get("campaign"))
    if campaign is None:
        return JsonResponse({"error": f"No campaign {form.cleaned_data.get('campaign')!r}."}, status=404)
    try:
        answer = dashboard_report(
            campaign.pk, filters=form.filters(), if_none_match=request.headers.get("If-None-Match")
        )
    except FilterError as error:
        return JsonResponse({"error": str(error)}, status=400)
    if answer.not_modified or request.headers.get("If-None-Match") == answer.etag:
        response: HttpResponse = HttpResponseNotModified()
    else:
        response = HttpResponse(_body(campaign, answer), content_type="application/json")
    response["ETag"] = answer.etag
    return response


def _body(campaign: Campaign, answer: DashboardReport) -> bytes:
    """The answer's JSON: its status first, then the report (bytes the worker built or kept
    earlier, or computed now and kept once its intervals are in, so that a repeat view costs the
    same at any size)."""
    status = json.dumps({"report_status": {"state": answer.state, "message": answer.message}})[:-1].encode()
    report = answer.report
    if report is None:
        kept = answer.body
        if kept is None:  # nothing to show yet
            return status + b', "version": ' + json.dumps(answer.version).encode() + b"}"
        return status + b", " + kept.content[1:]
    content = dashboard_content(campaign, report)
    if report.report.bootstrap.state in ("ready", "off") and not report.cache_unavailable:
        keep_body(campaign.pk, report.filters, KeptBody(report.version, answer.etag, report.generated_at, content))
    return status + b", " + content[1:]
