"""Staff pages for the researcher's own metric and generators: import a score file, generate candidates.

Thin: the checks and the work are :mod:`scoring.external.score_import` and :mod:`scoring.generation.candidates`.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from annotate.models import Campaign
from annotate.teams import campaigns_for
from scoring.external.score_import import ScoreFileMetric, ScoreImportError, import_scores, parse_options
from scoring.generation import candidates as generation
from scoring.metrics.judges import configured_models
from scoring.models import GenerationRun
from scoring.pipeline.status import queue_wait


class ScoreImportForm(forms.Form):
    campaign = forms.ModelChoiceField(
        Campaign.objects.order_by("slug"), to_field_name="slug", help_text="The campaign whose pairs the file scores."
    )
    file = forms.FileField(help_text="CSV (header: pair_id or external_id, score) or JSON Lines, UTF-8.")
    name = forms.CharField(max_length=64, help_text="The metric's name: letters, digits, _ . - (e.g. my_metric).")
    version = forms.CharField(max_length=64, help_text="The metric's version, e.g. 1.0 or 2024-05-01.")
    direction = forms.ChoiceField(
        choices=[("higher", "↑ higher is closer (like BLEU)"), ("lower", "↓ lower is closer (like an edit distance)")]
    )
    threshold = forms.FloatField(
        required=False, help_text="A score that means “paraphrase” by construction (ParaPLUIE's 0), if it has one."
    )
    options = forms.CharField(
        required=False,
        help_text='Its settings as a JSON object, e.g. {"model": "my-encoder-v2"}: part of its signature.',
    )

    def clean_options(self) -> dict[str, object]:
        try:
            return parse_options(self.cleaned_data["options"])
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None


@never_cache
@staff_member_required
@require_http_methods(["GET", "POST"])
def score_import(request: HttpRequest) -> HttpResponse:
    """``/staff/scores/import/``: a file of precomputed scores becomes a metric configuration."""
    form = ScoreImportForm(request.POST or None, request.FILES or None)
    form.fields["campaign"].queryset = campaigns_for(request.user).order_by("slug")  # type: ignore[attr-defined]
    context: dict[str, object] = {"form": form}
    status = 200
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        upload = data["file"]
        context["campaign"] = data["campaign"]
        metric = ScoreFileMetric(
            data["name"], data["version"], data["direction"] == "higher", data["threshold"], data["options"]
        )
        try:
            context["result"] = import_scores(data["campaign"], upload.read(), upload.name or "", metric)
        except ScoreImportError as error:
            # The first problems by line (a file wrong on every line would make a page of a
            # million items), and how many more there are.
            context.update(problems=error.problems, problem_count=error.total, problems_left=error.more)
            status = 400
    elif request.method == "POST":
        status = 400
    return render(request, "staff/score_import.html", context, status=status)


class GenerateForm(forms.Form):
    campaign = forms.ModelChoiceField(
        Campaign.objects.order_by("slug"),
        to_field_name="slug",
        help_text="Where the candidates are stored; without a list, the sources are sampled from its pairs.",
    )
    sources = forms.FileField(required=False, help_text="Your own source sentences, one a line (UTF-8).")
    count = forms.IntegerField(min_value=1, max_value=10000, initial=10, help_text="How many sources.")
    seed = forms.IntegerField(
        min_value=0, initial=0, help_text="Seed of the sample and of sampled decoding: the same seed, the same sources."
    )
    templates = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple, help_text="The paper's prompts (appendix A.1), in English and in French."
    )
    models = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple,
        help_text="The judge models of PARAPLUIE_MODELS; each generates on its own worker queue.",
    )
    sampled = forms.BooleanField(required=False, label="Sample instead of greedy decoding")
    temperature = forms.FloatField(
        initial=1.0, min_value=0.01, max_value=5, help_text="Used when sampling (the seed above seeds it)."
    )
    max_tokens = forms.IntegerField(initial=48, min_value=1, max_value=1024, help_text="Tokens at most per candidate.")

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        shipped = generation.templates()
        self.fields["templates"].choices = [(name, f"{name}: {t.description}") for name, t in shipped.items()]  # type: ignore[attr-defined]
        self.fields["templates"].initial = generation.default_templates("en")
        # Candidates are generated by a model loaded in a worker: served judges only score.
        judges = [
            (judge.name, f"{judge.name} ({judge.model}, {judge.device})")
            for judge in configured_models()
            if not judge.is_served
        ]
        self.fields["models"].choices = judges  # type: ignore[attr-defined]
        self.fields["models"].initial = [name for name, _ in judges[:1]]


@never_cache
@staff_member_required
@require_http_methods(["GET", "POST"])
def generate(request: HttpRequest) -> HttpResponse:
    """``/staff/generate/``: queue candidate generation on the models' worker queues."""
    form = GenerateForm(request.POST or None, request.FILES or None)
    form.fields["campaign"].queryset = campaigns_for(request.user).order_by("slug")  # type: ignore[attr-defined]
    context: dict[str, object] = {"form": form}
    status = 200
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        campaign = data["campaign"]
        settings = generation.GenerationSettings(
            sampled=data["sampled"],
            temperature=data["temperature"],
            max_new_tokens=data["max_tokens"],
            seed=data["seed"],
        )
        try:
            if data["sources"]:
                sources = generation.read_sources(data["sources"].read(), data["count"], data["seed"])
            else:
                sources = generation.sample_sources(campaign, data["count"], data["seed"])
            generators = [generation.Generator(t, m, settings) for m in data["models"] for t in data["templates"]]
            tasks = generation.plan(campaign, generators, sources)
        except generation.GenerationError as error:
            context["error"] = str(error)
            status = 400
        else:
            generation.send(tasks)
            context["queued"] = {
                "sources": len(sources),
                "systems": [generator.system for generator in generators],
                "tasks": len(tasks),
                "campaign": campaign,
            }
    elif request.method == "POST":
        status = 400
    context["runs"] = _runs_with_waits(request.user)
    return render(request, "staff/generate.html", context, status=status)


def _runs_with_waits(user: Any) -> list[tuple[GenerationRun, str]]:
    """The latest runs, each queued one with what it waits behind on its model queues."""
    waits: dict[str, str] = {}
    rows = []
    for run in generation.recent_runs(campaigns_for(user)):
        said = ""
        if run.state == "queued":
            for queue in run.queues.split(","):
                if queue not in waits:
                    waits[queue] = queue_wait(queue).message
            said = " ".join(waits[queue] for queue in run.queues.split(","))
        rows.append((run, said))
    return rows
