"""Staff pages for two steps that needed a shell: tune a judge on a campaign's labels, and set
the PARAPHRASUS objective of a campaign's corpora.

Thin: the checks and the work are :mod:`scoring.tuning.service` (what ``manage.py tune_judge
--queue`` calls) and :mod:`scoring.reports.paraphrasus` (what ``manage.py corpus_objective``
calls). The page queues a tuning on its judge's worker; it never trains in the web process.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib.admin.views.decorators import staff_member_required
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from annotate.models import Campaign, CorpusObjective
from annotate.teams import campaign_or_404, campaigns_for
from scoring.metrics.judges import configured_models
from scoring.metrics.templates import TemplateError, TemplateKind, load_templates
from scoring.reports.paraphrasus import ObjectiveError, campaign_origins, objectives, set_objectives
from scoring.tuning import service as judge_tuning

DEFAULTS = judge_tuning.default_options


class TuningForm(forms.Form):
    """The options of ``manage.py tune_judge`` that a researcher sets; the others keep their defaults."""

    campaign = forms.ModelChoiceField(
        Campaign.objects.order_by("name", "slug"),
        to_field_name="slug",
        help_text="The campaign whose labelled pairs train the judge; its pairs are then scored by cross-fitting.",
    )
    reference = forms.ChoiceField(
        choices=[
            ("volunteers", "the volunteers' majority (excluded volunteers left out)"),
            ("gold", "the imported gold labels"),
        ],
        label="Labels",
    )
    judge = forms.ChoiceField(
        label="Judge model", help_text="A judge model of PARAPLUIE_MODELS, trained on its worker."
    )
    template = forms.ChoiceField(
        label="ParaPLUIE template", help_text="A question template (INDIRECT ones cannot be tuned)."
    )
    folds = forms.IntegerField(
        min_value=2, max_value=20, help_text="Cross-fitting folds: each pair is scored by an adapter that never saw it."
    )
    epochs = forms.IntegerField(min_value=1, max_value=100, help_text="Passes over the labelled pairs.")
    max_pairs = forms.IntegerField(min_value=0, label="Pairs at most", help_text="Train on at most this many (0: all).")
    max_tokens = forms.IntegerField(
        min_value=1, label="Tokens at most", help_text="Pairs with a longer prompt are left out (nothing is truncated)."
    )
    learning_rate = forms.FloatField(min_value=0, max_value=1, label="Learning rate")
    seed = forms.IntegerField(min_value=0, help_text="Seed of the splits and of the initial weights.")
    start_from = forms.ChoiceField(
        required=False,
        label="Start from",
        help_text="A judge tuned on other data from the same base model (never on this campaign's pairs).",
    )

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Only the campaigns of the user's teams can be chosen (another team's is "not a valid choice").
        self.fields["campaign"].queryset = campaigns_for(user).order_by("name", "slug")  # type: ignore[attr-defined]
        judges = configured_models()
        base = [judge for judge in judges if judge.tuned_from is None]
        tuned = [judge for judge in judges if judge.tuned_from is not None]
        self.fields["judge"].choices = [(judge.name, f"{judge.name} ({judge.model})") for judge in base]  # type: ignore[attr-defined]
        self.fields["start_from"].choices = [("", "nothing: start from scratch")] + [  # type: ignore[attr-defined]
            (judge.name, f"{judge.name} (tuned from {judge.tuned_from})") for judge in tuned
        ]
        try:
            templates = load_templates()
        except TemplateError:
            templates = {}
        self.fields["template"].choices = [  # type: ignore[attr-defined]
            (name, f"{name} ({template.language})")
            for name, template in templates.items()
            if template.kind is not TemplateKind.INDIRECT
        ]
        defaults = DEFAULTS()
        for name in ("template", "folds", "epochs", "max_pairs", "max_tokens", "learning_rate", "seed"):
            self.fields[name].initial = getattr(defaults, name)


@never_cache
@staff_member_required
@require_http_methods(["GET", "HEAD", "POST"])
def tune_judge(request: HttpRequest) -> HttpResponse:
    """``/staff/tuning/``: queue a tuning on the judge's worker; the tunings and where each one is."""
    form = TuningForm(request.POST or None, initial={"campaign": request.GET.get("campaign")}, user=request.user)
    error = ""
    status = 200
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            options = DEFAULTS(
                template=data["template"],
                folds=data["folds"],
                epochs=data["epochs"],
                max_pairs=data["max_pairs"],
                max_tokens=data["max_tokens"],
                learning_rate=data["learning_rate"],
                seed=data["seed"],
                start_from=data["start_from"] or None,
            )
            try:
                with transaction.atomic():
                    row = judge_tuning.request(
                        data["campaign"], judge=data["judge"], reference=data["reference"], options=options
                    )
                    judge_tuning.send(row)
            except judge_tuning.TuningRequestError as refused:
                error = str(refused)
            else:
                query = urlencode({"campaign": data["campaign"].slug, "queued": row.pk})
                return redirect(f"{reverse('staff:tuning')}?{query}")
        status = 400
    lines = judge_tuning.tuning_lines(campaigns_for(request.user))
    queued = next((line for line in lines if str(line.pk) == request.GET.get("queued")), None)
    context = {"form": form, "error": error, "tunings": lines, "queued": queued}
    return render(request, "staff/tuning.html", context, status=status)


OBJECTIVE_CHOICES = [("", "no objective (left out)")] + [
    (value, label) for value, label in CorpusObjective.Objective.choices
]


@never_cache
@staff_member_required
@require_http_methods(["GET", "HEAD", "POST"])
def corpus_objectives(request: HttpRequest, slug: str) -> HttpResponse:
    """``/staff/campaigns/<slug>/objectives/``: the PARAPHRASUS objective of each corpus (origin)."""
    campaign = campaign_or_404(request.user, slug)
    origins = campaign_origins(campaign)
    error = ""
    status = 200
    chosen: dict[str, str] = {}
    if request.method == "POST":
        wanted: dict[str, str | None] = {}
        for origin in origins:
            value = str(request.POST.get(f"objective:{origin}", "")).strip()
            chosen[origin] = value
            wanted[origin] = value or None
        unknown = sorted(
            key.removeprefix("objective:")
            for key in request.POST
            if key.startswith("objective:") and key.removeprefix("objective:") not in origins
        )
        try:
            if unknown:
                set_objectives(campaign, {origin: None for origin in unknown})  # names the origins it lacks
            set_objectives(campaign, wanted)
        except ObjectiveError as refused:
            error = str(refused)
            status = 400
        else:
            return redirect(f"{reverse('staff:objectives', args=[slug])}?saved=1")
    stored = objectives(campaign)
    rows = [
        {
            "origin": origin,
            "field": f"objective:{origin}",
            "value": chosen.get(origin, stored[origin].value if origin in stored else ""),
        }
        for origin in origins
    ]
    context = {
        "campaign": campaign,
        "rows": rows,
        "choices": OBJECTIVE_CHOICES,
        "error": error,
        "saved": request.GET.get("saved") == "1" and not error,
    }
    return render(request, "staff/objectives.html", context, status=status)
