"""Volunteer pages: thin views over ``annotate.flow``.

A volunteer is known only by the unguessable token in their link (and a cookie that brings
them back from the campaign link). Every page looks the volunteer up by that token and only
ever touches that volunteer's rows: an unknown token, or a pair that is not theirs, is a 404.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, wraps
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from annotate import allocation, flow, platforms
from annotate.allocation import EndReason
from annotate.forms import AnswerForm, StartForm
from annotate.guidelines import highlighted_examples
from annotate.guidelines import introduction as guidelines_introduction
from annotate.label_text import LABEL_TEXT, level_question
from annotate.labels import LABEL_ORDER, Label
from annotate.models import Campaign, Judgement, Volunteer
from paraeval.ratelimit import limit_volunteer_starts

# The volunteer cookie lasts long enough to come back to an unfinished campaign.
COOKIE_MAX_AGE = 180 * 24 * 3600

ANSWERS = [
    {"key": position, "value": label.value, "display": LABEL_TEXT[label], "dont_know": label is Label.DONT_KNOW}
    for position, label in enumerate(LABEL_ORDER, start=1)
]
LANGUAGE_CODES = {code for code, _ in settings.LANGUAGES}
PAGE_LANGUAGE_COOKIE = "paraeval_page_language"  # the language of the volunteer's last page


def _campaign_language(request: HttpRequest, kwargs: dict[str, Any]) -> str | None:
    """The language of the campaign a volunteer URL belongs to.

    For a volunteer's own URL the volunteer (and campaign) row is loaded here once and kept on
    the request for the view (``_volunteer``), so the language costs no query of its own.
    """
    if "slug" in kwargs:
        return Campaign.objects.filter(slug=kwargs["slug"]).values_list("language", flat=True).first()
    if "token" in kwargs:
        volunteer = Volunteer.objects.select_related("campaign").filter(token=kwargs["token"]).first()
        request.paraeval_volunteer = volunteer  # type: ignore[attr-defined]
        return volunteer.campaign.language if volunteer else None
    return None


def volunteer_language(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Render a volunteer page in the language the volunteer chose, else in the campaign's.

    The choice is Django's language cookie (set by the switch in the page header through
    ``set_language``). Only the volunteer pages are translated, so the language is activated
    around the view, not for the whole site (the staff pages stay in English).
    """

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        chosen = request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME)
        language = chosen if chosen in LANGUAGE_CODES else None
        language = language or _campaign_language(request, kwargs) or "en"
        with translation.override(language):
            response = view(request, *args, **kwargs)
        response.headers.setdefault("Content-Language", language)
        if request.COOKIES.get(PAGE_LANGUAGE_COOKIE) != language:
            # Remembered for the page shown while the database is down (paraeval.errors), when
            # the campaign's language cannot be read.
            response.set_cookie(PAGE_LANGUAGE_COOKIE, language, max_age=30 * 24 * 3600, samesite="Lax")
        return response

    return wrapper


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


def _volunteer(request: HttpRequest, token: str) -> Volunteer:
    """The volunteer of this link (404 for an unknown token), loaded once per request."""
    volunteer = getattr(request, "paraeval_volunteer", None)
    if isinstance(volunteer, Volunteer) and volunteer.token == token:
        return volunteer
    return get_object_or_404(Volunteer.objects.select_related("campaign"), token=token)


@cache
def _guidelines_html(language: str) -> SafeString:
    with translation.override(language):
        return render_to_string(
            "annotate/_guidelines.html",
            {
                "guidelines_intro": guidelines_introduction(language),
                "guidelines_examples": highlighted_examples(language),
                "guidelines_language": language,
            },
        )


def guidelines_html() -> SafeString:
    """The guidelines in the active language, rendered once per process and language (every page
    carries them in its dialog)."""
    language = translation.get_language() or "en"
    return _guidelines_html(language if language in LANGUAGE_CODES else "en")


def _campaign_context(campaign: Campaign, volunteer: Volunteer | None = None) -> dict[str, Any]:
    return {"campaign": campaign, "volunteer": volunteer, "guidelines_html": guidelines_html()}


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
@volunteer_language
@limit_volunteer_starts
def welcome(request: HttpRequest, slug: str) -> HttpResponse:
    """The campaign link: the task, its length, consent and English level; resumes a volunteer.

    A returning volunteer is recognised by their cookie or, in a campaign that recruits through
    a crowd platform, by the participant id in the link: a second start resumes the first.
    """
    campaign = get_object_or_404(Campaign, slug=slug)
    try:
        ids = platforms.participant_ids(campaign, request.POST if request.method == "POST" else request.GET)
        returning = platforms.returning_participant(campaign, ids) if ids else None
    except platforms.SessionMismatchError:
        return render(request, "annotate/session_mismatch.html", _campaign_context(campaign), status=403)
    except platforms.PlatformError as error:
        context = {**_campaign_context(campaign), "error": error}
        return render(request, "annotate/platform_error.html", context, status=400)
    if ids is None:
        returning = _volunteer_from_cookie(request, campaign)
    if returning is not None:
        response = redirect("annotate:pair", token=returning.token)
        _set_volunteer_cookie(response, returning)
        return response
    context = _campaign_context(campaign)
    if not campaign.is_open:
        return render(request, "annotate/closed.html", context)
    training, pairs, minutes = flow.campaign_length(campaign)
    if pairs:
        # Before anything else: a newcomer the campaign cannot serve is told so now, not after
        # the training, and a campaign that closes itself when full closes.
        found = allocation.openness(campaign)
        allocation.close_if_complete(campaign, found.complete)
        if found.is_full:
            return render(request, "annotate/full.html", context)
    form = StartForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            if ids is not None:
                level = form.cleaned_data["english_level"]
                volunteer, _ = platforms.start_participant(campaign, ids, english_level=level)
            else:
                volunteer = flow.start_volunteer(
                    campaign, english_level=form.cleaned_data["english_level"], consented=form.cleaned_data["consent"]
                )
        except platforms.SessionMismatchError:
            return render(request, "annotate/session_mismatch.html", context, status=403)
        except flow.CampaignClosedError:
            return render(request, "annotate/closed.html", context)
        response = redirect("annotate:pair", token=volunteer.token)
        _set_volunteer_cookie(response, volunteer)
        return response
    context.update(
        form=form,
        training_count=training,
        pair_count=pairs,
        minutes=minutes,
        total=training + pairs,
        platform_fields=_platform_fields(campaign, ids),
        level_question=level_question(campaign.language),
    )
    return render(request, "annotate/welcome.html", context, status=400 if form.errors else 200)


def _platform_fields(campaign: Campaign, ids: platforms.ParticipantIds | None) -> list[tuple[str, str]]:
    """The identifiers to carry from the link through the start form (hidden fields)."""
    if ids is None:
        return []
    return [
        (campaign.participant_param, ids.participant),
        (campaign.study_param, ids.study),
        (campaign.session_param, ids.session),
    ]


@require_http_methods(["GET", "HEAD"])
@volunteer_language
def guidelines(request: HttpRequest, slug: str) -> HttpResponse:
    """The guidelines on a page of their own (the pair pages open them in a dialog)."""
    campaign = get_object_or_404(Campaign, slug=slug)
    return render(
        request, "annotate/guidelines.html", _campaign_context(campaign, _volunteer_from_cookie(request, campaign))
    )


def personal_link(volunteer: Volunteer) -> str:
    """The volunteer's own link, to continue later from any device (built from SITE_URL)."""
    return settings.SITE_URL + reverse("annotate:pair", args=[volunteer.token])


def _step_redirect(volunteer: Volunteer) -> HttpResponseRedirect | None:
    """Send the volunteer to the guidelines or the end-of-training page when they are due."""
    step = flow.next_step(volunteer)
    if step is flow.Step.GUIDELINES:
        return redirect("annotate:introduction", token=volunteer.token)
    if step is flow.Step.TRAINING_DONE:
        return redirect("annotate:training_done", token=volunteer.token)
    return None


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
@volunteer_language
def introduction(request: HttpRequest, token: str) -> HttpResponse:
    """The guidelines step between the welcome page and the training, shown once."""
    volunteer = _volunteer(request, token)
    if request.method == "POST":
        flow.mark_seen(volunteer, flow.Step.GUIDELINES)
        return redirect("annotate:pair", token=token)
    if volunteer.guidelines_seen_at is not None:
        return redirect("annotate:pair", token=token)
    context = _campaign_context(volunteer.campaign, volunteer)
    context.update(training_count=flow.training_count(volunteer.campaign))
    response = render(request, "annotate/introduction.html", context)
    _set_volunteer_cookie(response, volunteer)
    return response


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
@volunteer_language
def training_done(request: HttpRequest, token: str) -> HttpResponse:
    """After the last training pair: the training is over and answers now count."""
    volunteer = _volunteer(request, token)
    if request.method == "POST":
        flow.mark_seen(volunteer, flow.Step.TRAINING_DONE)
        return redirect("annotate:pair", token=token)
    if flow.next_step(volunteer) is not flow.Step.TRAINING_DONE:
        return redirect("annotate:pair", token=token)
    context = _campaign_context(volunteer.campaign, volunteer)
    progress = flow.progress_of(volunteer)
    context.update(progress=progress, remaining=progress.total - progress.answered)
    return render(request, "annotate/training_done.html", context)


def _pair_response(
    request: HttpRequest,
    volunteer: Volunteer,
    item: flow.CurrentPair,
    *,
    form: AnswerForm | None = None,
    status: int = 200,
) -> HttpResponse:
    context = _campaign_context(volunteer.campaign, volunteer)
    context.update(
        item=item, progress=item.progress, answers=ANSWERS, form=form, personal_link=personal_link(volunteer)
    )
    response = render(request, "annotate/pair.html", context, status=status)
    _set_volunteer_cookie(response, volunteer)
    return response


@never_cache
@require_http_methods(["GET", "HEAD"])
@volunteer_language
def pair(request: HttpRequest, token: str) -> HttpResponse:
    """The pair to answer now (resumed after a reload), or the end page."""
    volunteer = _volunteer(request, token)
    if volunteer.returned_at is not None:
        return redirect("annotate:returned", token=token)
    step = _step_redirect(volunteer)
    if step is not None:
        return step
    item = flow.current_pair(volunteer)
    if item is None:
        return redirect("annotate:done", token=token)
    if item.replaced_expired:
        messages.info(request, _("Welcome back! Your previous pair went to another volunteer while you were away."))
    return _pair_response(request, volunteer, item)


@never_cache
@require_POST
@volunteer_language
def answer(request: HttpRequest, token: str) -> HttpResponse:
    """Store one answer (once, however often it is posted) and go on."""
    volunteer = _volunteer(request, token)
    form = AnswerForm(request.POST)
    if not form.is_valid():
        item = flow.current_pair(volunteer)
        if item is None:
            return redirect("annotate:done", token=token)
        return _pair_response(request, volunteer, item, form=form, status=400)
    # The form names the pair by its place in the volunteer's sequence, not by its id.
    pair_id = flow.pair_of_item(volunteer, form.cleaned_data["pair"])
    if pair_id is None:
        raise Http404("This pair is not one of yours.")
    try:
        result = flow.record_answer(volunteer, pair_id, form.cleaned_data["label"])
    except flow.NotAssignedError:
        raise Http404("This pair is not one of yours.") from None
    if result.outcome is flow.AnswerOutcome.REASSIGNED:
        messages.info(
            request,
            _(
                "This pair was given to another volunteer while you were away, so that answer was not needed. "
                "Here is a new pair."
            ),
        )
    if result.show_training_feedback:
        return redirect("annotate:feedback", token=token, pair_id=result.pair.pk)
    return redirect("annotate:pair", token=token)


@never_cache
@require_http_methods(["GET", "HEAD"])
@volunteer_language
def feedback(request: HttpRequest, token: str, pair_id: int) -> HttpResponse:
    """After a training answer: the expected answer and its explanation."""
    volunteer = _volunteer(request, token)
    try:
        result = flow.training_feedback(volunteer, pair_id)
    except Judgement.DoesNotExist:
        raise Http404("No training answer of yours for this pair.") from None
    context = _campaign_context(volunteer.campaign, volunteer)
    context.update(
        feedback=result,
        given_display=LABEL_TEXT[result.given],
        expected_display=LABEL_TEXT[result.expected] if result.expected else None,
        given_dont_know=result.given is Label.DONT_KNOW,
        expected_dont_know=result.expected is Label.DONT_KNOW,
    )
    return render(request, "annotate/feedback.html", context)


@never_cache
@require_http_methods(["GET", "HEAD"])
@volunteer_language
def done(request: HttpRequest, token: str) -> HttpResponse | HttpResponseRedirect:
    """The end page, with thanks, and for a crowd-platform participant their code.

    The code is computed here, after the last judgement, and only for a participant the
    campaign's exclusion rule keeps; a flagged one gets the other code, or none.
    """
    volunteer = _volunteer(request, token)
    if volunteer.returned_at is not None:
        return redirect("annotate:returned", token=token)
    if volunteer.finished_at is None:
        return redirect("annotate:pair", token=token)
    context = _campaign_context(volunteer.campaign, volunteer)
    progress = flow.progress_of(volunteer)
    # The verdict and the code are computed at the first visit and read back after (made again
    # only for a record without a code when pairs were judged since: later work is credited).
    completion = platforms.record_end(volunteer)
    pool_exhausted = flow.end_reason(progress, volunteer.campaign) is EndReason.EXHAUSTED
    if pool_exhausted and volunteer.campaign.close_when_full:
        allocation.close_if_complete(volunteer.campaign, allocation.openness(volunteer.campaign).complete)
    context.update(progress=progress, pool_exhausted=pool_exhausted, completion=completion)
    return render(request, "annotate/done.html", context)


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
@volunteer_language
def return_study(request: HttpRequest, token: str) -> HttpResponse:
    """A crowd-platform participant stops early and gives the study back: their pairs are freed."""
    volunteer = _volunteer(request, token)
    if not volunteer.campaign.platform or not volunteer.participant_id:  # a volunteer of the plain link
        raise Http404("Only studies run through a crowd platform can be returned.")
    if request.method == "POST":
        platforms.return_study(volunteer)
        return redirect("annotate:returned", token=token)
    if volunteer.returned_at is not None:
        return redirect("annotate:returned", token=token)
    return render(request, "annotate/return_confirm.html", _campaign_context(volunteer.campaign, volunteer))


@never_cache
@require_http_methods(["GET", "HEAD"])
@volunteer_language
def returned(request: HttpRequest, token: str) -> HttpResponse:
    """After returning the study: no code, and how to tell the platform."""
    volunteer = _volunteer(request, token)
    if volunteer.returned_at is None:
        return redirect("annotate:pair", token=token)
    return render(request, "annotate/returned.html", _campaign_context(volunteer.campaign, volunteer))
