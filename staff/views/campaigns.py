"""Staff pages of a campaign's set-up: the settings form, a new campaign, clone, definition file.

Thin views over :mod:`staff.forms` and :mod:`annotate.definitions`.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotate import definitions, progress
from annotate.models import Campaign
from annotate.teams import TeamError, campaign_or_404, team_for_new_campaign
from paraeval.textcheck import loads_bounded
from scoring.analysis.planning import PlanError
from scoring.models import StoppingRule
from scoring.reports import stopping, verdicts
from scoring.reports.planning import COLUMNS, campaign_plan, parse_request, sizes_lines, summary, table_rows
from scoring.tallies import scored_configs
from staff.forms import CampaignSettingsForm, PlanForm, StoppingRuleForm
from staff.hub import public_campaign, volunteer_link

# A definition file is read whole (JSON): larger pair sets go through the upload page.
MAX_DEFINITION_BYTES = 32 * 1024 * 1024


def _is_on_the_home_page(campaign: Campaign) -> bool:
    found = public_campaign()
    return found is not None and found.link == reverse("annotate:welcome", args=[campaign.slug])


def _page(request: HttpRequest, form: CampaignSettingsForm, campaign: Campaign | None, **extra: Any) -> HttpResponse:
    context: dict[str, Any] = {"form": form, "campaign": campaign, **extra}
    if campaign is not None:
        # One scan of the campaign's pairs, kept until its data changes (the change stamp).
        totals = verdicts.kept(campaign.pk, "totals", lambda: progress.pair_totals(campaign), campaign.judges_per_pair)
        context.update(
            training=totals.training,
            checks=totals.checks,
            pairs=totals.pairs,
            volunteer_link=volunteer_link(campaign.slug),
            public=_is_on_the_home_page(campaign),
            public_setting=settings.PARAEVAL_PUBLIC_CAMPAIGN,
            progress=progress.campaign_progress(campaign, totals=totals),
            **_stopping_context(campaign, extra.pop("stopping_form", None)),
            **_plan_context(request, campaign),
        )
        context.update(extra)
    problems = ("clone_problems", "definition_problems", "stopping_problems", "plan_problems")
    status = 400 if form.errors or any(context.get(key) for key in problems) else 200
    return render(request, "staff/campaign_settings.html", context, status=status)


@never_cache
@staff_member_required
@require_http_methods(["GET", "HEAD", "POST"])
def settings_page(request: HttpRequest, slug: str) -> HttpResponse:
    """One form for the campaign's settings; clone and definition file below it."""
    campaign = campaign_or_404(request.user, slug)
    form = CampaignSettingsForm(request.POST or None, instance=campaign, user=request.user)
    if request.method == "POST" and form.is_valid():
        form.save()
        return redirect(f"{request.path}?saved=1")
    return _page(request, form, campaign, saved=request.GET.get("saved") == "1")


def _plan_context(request: HttpRequest, campaign: Campaign) -> dict[str, Any]:
    """The planner's section: its form, and the grid when the form was sent (``plan=1``)."""
    labels = list(scored_configs(campaign).order_by("label").values_list("label", flat=True))
    asked = request.method in ("GET", "HEAD") and request.GET.get("plan") == "1"
    form = PlanForm(request.GET if asked else None, labels=labels)
    context: dict[str, Any] = {"plan_form": form, "plan_labels": labels}
    if not asked:
        return context
    try:
        result = campaign_plan(campaign, parse_request(form.params()))
    except PlanError as error:
        context["plan_problems"] = [str(error)]
        return context
    context.update(
        plan_summary=summary(result),
        plan_sizes=sizes_lines(result),
        plan_columns=COLUMNS,
        plan_rows=[list(zip(COLUMNS, row, strict=True)) for row in table_rows(result)],
    )
    return context


def _stopping_context(campaign: Campaign, form: StoppingRuleForm | None) -> dict[str, Any]:
    """The stopping rule's section: the rule and its record, and its form (locked once judged)."""
    rule = StoppingRule.objects.filter(campaign=campaign).select_related("metric_a", "metric_b").first()
    if form is None:
        initial = (
            {
                "statistic": rule.statistic,
                "metric_a": rule.metric_a_id,
                "metric_b": rule.metric_b_id,
                "alpha": rule.alpha,
                "planned_pairs": rule.planned_pairs,
                "method": rule.method,
                "looks": rule.looks,
                "close_when_settled": rule.close_when_settled,
            }
            if rule
            else None
        )
        form = StoppingRuleForm(initial=initial)
    return {
        "stopping_rule": rule,
        "stopping_form": form,
        "stopping_judged": stopping.counted_judgements(campaign),
    }


@staff_member_required
@require_POST
def stopping_rule(request: HttpRequest, slug: str) -> HttpResponse:
    """Set (or remove) the campaign's question and stopping rule; refused with the reason once
    the campaign has a judgement, except ``close_when_settled``."""
    campaign = campaign_or_404(request.user, slug)
    settings_form = CampaignSettingsForm(instance=campaign, user=request.user)
    try:
        if request.POST.get("remove") == "1":
            stopping.remove_rule(campaign)
            return redirect(reverse("staff:campaign-settings", args=[campaign.slug]) + "?stopping=removed#stopping")
        form = StoppingRuleForm(request.POST)
        if not form.is_valid():
            return _page(request, settings_form, campaign, stopping_form=form, stopping_problems=["See the fields."])
        data = form.cleaned_data
        stopping.set_rule(
            campaign,
            data["metric_a"],
            data["metric_b"],
            data["alpha"],
            data["planned_pairs"],
            data["close_when_settled"],
            data["statistic"] or StoppingRule.Statistic.AUC,
            data["method"] or StoppingRule.Method.CONFIDENCE_SEQUENCE,
            data["looks"] or 5,
        )
    except stopping.StoppingError as error:
        return _page(
            request,
            settings_form,
            campaign,
            stopping_form=StoppingRuleForm(request.POST),
            stopping_problems=[str(error)],
        )
    return redirect(reverse("staff:campaign-settings", args=[campaign.slug]) + "?stopping=saved#stopping")


@never_cache
@staff_member_required
@require_http_methods(["GET", "HEAD", "POST"])
def new_campaign(request: HttpRequest) -> HttpResponse:
    """The same form for a new campaign; then its pairs are uploaded."""
    form = CampaignSettingsForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        campaign = form.save()
        return redirect("staff:upload", slug=campaign.slug)
    return _page(request, form, None, definition_problems=[])


def _new_slug_problems(slug: str) -> list[str]:
    try:
        validate_slug(slug)
    except ValidationError:
        return [f"{slug!r} is not a slug: letters, digits, hyphens and underscores"]
    if Campaign.objects.filter(slug=slug).exists():
        return [f"a campaign {slug!r} exists already: choose another slug"]
    return []


@staff_member_required
@require_POST
def clone(request: HttpRequest, slug: str) -> HttpResponse:
    """A new campaign with this one's settings, training and check pairs (and, if asked, its pairs)."""
    campaign = campaign_or_404(request.user, slug)
    new_slug = request.POST.get("slug", "").strip()
    problems = _new_slug_problems(new_slug)
    if not problems:
        try:
            loaded = definitions.clone(
                campaign,
                slug=new_slug,
                name=request.POST.get("name", ""),
                include_pairs=request.POST.get("include_pairs") == "on",
            )
        except definitions.DefinitionError as error:
            problems = error.problems
        else:
            Campaign.objects.filter(pk=loaded.campaign.pk).update(team=campaign.team)  # the clone stays in the team
            return redirect(f"/staff/campaigns/{loaded.campaign.slug}/settings/?cloned={campaign.slug}")
    form = CampaignSettingsForm(instance=campaign, user=request.user)
    return _page(request, form, campaign, clone_problems=problems)


@never_cache
@staff_member_required
@require_GET
def definition_file(request: HttpRequest, slug: str) -> JsonResponse:
    """The campaign's definition as a JSON file (``?pairs=1``: every pair, not only training and checks)."""
    campaign = campaign_or_404(request.user, slug)
    data = definitions.definition(campaign, include_pairs=request.GET.get("pairs") == "1")
    response = JsonResponse(data, json_dumps_params={"ensure_ascii": False, "indent": 1})
    response["Content-Disposition"] = f'attachment; filename="{campaign.slug}-definition.json"'
    return response


@staff_member_required
@require_POST
def import_definition(request: HttpRequest) -> HttpResponse:
    """Create a campaign from a definition file (its pairs through the importer, all or nothing)."""
    upload = request.FILES.get("definition")
    slug = request.POST.get("slug", "").strip()
    problems = _new_slug_problems(slug)
    try:
        team = team_for_new_campaign(request.user, request.POST.get("team") or None)
    except TeamError as error:
        problems.append(str(error))
    if upload is None:
        problems.insert(0, "choose a definition file")
    elif upload.size is not None and upload.size > MAX_DEFINITION_BYTES:
        problems.insert(0, f"the definition is larger than {MAX_DEFINITION_BYTES // (1024 * 1024)} MB")
    if not problems:
        assert upload is not None
        try:
            # Bounded depth: a definition nested 1,000 deep raised RecursionError (a 500).
            data = loads_bounded(upload.read())
        except (ValueError, UnicodeDecodeError) as error:
            problems = [f"the file is not JSON: {error}"]
        else:
            try:
                loaded = definitions.load(data, slug=slug, name=request.POST.get("name", ""))
            except definitions.DefinitionError as error:
                problems = error.problems
            else:
                Campaign.objects.filter(pk=loaded.campaign.pk).update(team=team)
                return redirect(
                    f"/staff/campaigns/{loaded.campaign.slug}/settings/?imported={loaded.pairs}"
                    f"&written_by={loaded.written_by}"
                )
    return _page(request, CampaignSettingsForm(user=request.user), None, definition_problems=problems)
