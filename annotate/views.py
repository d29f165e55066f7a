"""Volunteer pages: thin views over ``annotate.flow``.

A volunteer is known only by the unguessable token in their link (and a cookie that brings
them back from the campaign link). Every page looks the volunteer up by that token and only
ever touches that volunteer's rows: an unknown token, or a pair that is not theirs, is a 404.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils.safestring import SafeString
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from annotate import flow
from annotate.allocation import EndReason
from annotate.forms import AnswerForm, StartForm
from annotate.guidelines import INTRODUCTION, highlighted_examples
from annotate.labels import LABEL_DISPLAY, LABEL_ORDER, Label
from annotate.models import Campaign, Judgement, Volunteer

# The volunteer cookie lasts long enough to come back to an unfinished campaign.
COOKIE_MAX_AGE = 180 * 24 * 3600

ANSWERS = [
    {"key": position, "value": label.value, "display": LABEL_DISPLAY[label], "dont_know": label is Label.DONT_KNOW}
    for position, label in enumerate(LABEL_ORDER, start=1)
]


def cookie_name(campaign: Campaign) -> str:
    """One cookie per campaign: a volunteer may take part in several."""
    return f"paraeval_volunteer_{campaign.pk}"


def _set_volunteer_cookie(response: HttpResponse, volunteer: Volunteer) -> None:
    response.set_cookie(
        cookie_name(volunteer.campaign),
        volunteer.token,
        max_age=COOKIE_MAX_AGE,
        httponly=True,
        samesite="Lax",
        secure=settings.SESSION_COOKIE_SECURE,
    )


def _volunteer_from_cookie(request: HttpRequest, campaign: Campaign) -> Volunteer | None:
    token = request.COOKIES.get(cookie_name(campaign))
    if not token:
        return None
    return Volunteer.objects.select_related("campaign").filter(token=token, campaign=campaign).first()


def _volunteer(token: str) -> Volunteer:
    return get_object_or_404(Volunteer.objects.select_related("campaign"), token=token)


@cache
def guidelines_html() -> SafeString:
    """The guidelines, rendered once per process: every campaign page carries them (dialog)."""
    return render_to_string(
        "annotate/_guidelines.html", {"guidelines_intro": INTRODUCTION, "guidelines_examples": highlighted_examples()}
    )


def _campaign_context(campaign: Campaign, volunteer: Volunteer | None = None) -> dict[str, Any]:
    return {"campaign": campaign, "volunteer": volunteer, "guidelines_html": guidelines_html()}


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def welcome(request: HttpRequest, slug: str) -> HttpResponse:
    """The campaign link: the task, its length, consent and English level; resumes with the cookie."""
    campaign = get_object_or_404(Campaign, slug=slug)
    returning = _volunteer_from_cookie(request, campaign)
    if returning is not None:
        return redirect("annotate:pair", token=returning.token)
    context = _campaign_context(campaign)
    if not campaign.is_open:
        return render(request, "annotate/closed.html", context)
    form = StartForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            volunteer = flow.start_volunteer(
                campaign, english_level=form.cleaned_data["english_level"], consented=form.cleaned_data["consent"]
            )
        except flow.CampaignClosedError:
            return render(request, "annotate/closed.html", context)
        response = redirect("annotate:pair", token=volunteer.token)
        _set_volunteer_cookie(response, volunteer)
        return response
    training, pairs, minutes = flow.campaign_length(campaign)
    context.update(form=form, training_count=training, pair_count=pairs, minutes=minutes, total=training + pairs)
    return render(request, "annotate/welcome.html", context, status=400 if form.errors else 200)


@require_http_methods(["GET", "HEAD"])
def guidelines(request: HttpRequest, slug: str) -> HttpResponse:
    """The guidelines on a page of their own (the pair pages open them in a dialog)."""
    campaign = get_object_or_404(Campaign, slug=slug)
    return render(
        request, "annotate/guidelines.html", _campaign_context(campaign, _volunteer_from_cookie(request, campaign))
    )


def _pair_response(
    request: HttpRequest,
    volunteer: Volunteer,
    item: flow.CurrentPair,
    *,
    form: AnswerForm | None = None,
    status: int = 200,
) -> HttpResponse:
    context = _campaign_context(volunteer.campaign, volunteer)
    context.update(item=item, progress=item.progress, answers=ANSWERS, form=form)
    response = render(request, "annotate/pair.html", context, status=status)
    _set_volunteer_cookie(response, volunteer)
    return response


@never_cache
@require_http_methods(["GET", "HEAD"])
def pair(request: HttpRequest, token: str) -> HttpResponse:
    """The pair to answer now (resumed after a reload), or the end page."""
    volunteer = _volunteer(token)
    item = flow.current_pair(volunteer)
    if item is None:
        return redirect("annotate:done", token=token)
    if item.replaced_expired:
        messages.info(request, "Welcome back! Your previous pair went to another volunteer while you were away.")
    return _pair_response(request, volunteer, item)


@never_cache
@require_POST
def answer(request: HttpRequest, token: str) -> HttpResponse:
    """Store one answer (once, however often it is posted) and go on."""
    volunteer = _volunteer(token)
    form = AnswerForm(request.POST)
    if not form.is_valid():
        item = flow.current_pair(volunteer)
        if item is None:
            return redirect("annotate:done", token=token)
        return _pair_response(request, volunteer, item, form=form, status=400)
    try:
        result = flow.record_answer(volunteer, form.cleaned_data["pair"], form.cleaned_data["label"])
    except flow.NotAssignedError:
        raise Http404("This pair is not one of yours.") from None
    if result.outcome is flow.AnswerOutcome.REASSIGNED:
        messages.info(
            request,
            "This pair was given to another volunteer while you were away, so that answer was not needed. "
            "Here is a new pair.",
        )
    if result.show_training_feedback:
        return redirect("annotate:feedback", token=token, pair_id=result.pair.pk)
    return redirect("annotate:pair", token=token)


@never_cache
@require_http_methods(["GET", "HEAD"])
def feedback(request: HttpRequest, token: str, pair_id: int) -> HttpResponse:
    """After a training answer: the expected answer and its explanation."""
    volunteer = _volunteer(token)
    try:
        result = flow.training_feedback(volunteer, pair_id)
    except Judgement.DoesNotExist:
        raise Http404("No training answer of yours for this pair.") from None
    context = _campaign_context(volunteer.campaign, volunteer)
    context.update(
        feedback=result,
        given_display=LABEL_DISPLAY[result.given],
        expected_display=LABEL_DISPLAY[result.expected] if result.expected else None,
        given_dont_know=result.given is Label.DONT_KNOW,
        expected_dont_know=result.expected is Label.DONT_KNOW,
    )
    return render(request, "annotate/feedback.html", context)


@never_cache
@require_http_methods(["GET", "HEAD"])
def done(request: HttpRequest, token: str) -> HttpResponse | HttpResponseRedirect:
    """The end page, with thanks."""
    volunteer = _volunteer(token)
    if volunteer.finished_at is None:
        return redirect("annotate:pair", token=token)
    context = _campaign_context(volunteer.campaign, volunteer)
    progress = flow.progress_of(volunteer)
    context.update(
        progress=progress,
        pool_exhausted=flow.end_reason(progress, volunteer.campaign) is EndReason.EXHAUSTED,
    )
    return render(request, "annotate/done.html", context)
