"""The staff form of a campaign's settings: every setting a study needs, each explained in one line."""

from __future__ import annotations

import contextlib
from typing import Any

from django import forms

from annotate.models import Campaign, parse_metric_names
from annotate.teams import TeamError, team_for_new_campaign, teams_for
from scoring.models import MetricConfig, StoppingRule
from scoring.selection import SelectionError, plan_selection

# One line per setting, as the form shows it under the field (the model's help text is for the admin).
EXPLANATIONS: dict[str, str] = {
    "name": "What volunteers and staff see as the campaign's title.",
    "slug": "The campaign's address: volunteers open /c/<slug>/ (letters, digits, hyphens).",
    "team": "Who on the staff sees and changes this campaign: the team's members (and the superusers).",
    "description": "The welcome text volunteers read before they start (the guidelines follow it).",
    "language": "Language of the pairs and of the volunteer pages.",
    "judges_per_pair": "How many volunteers judge each pair; 2 or more makes agreement measurable.",
    "quota": "Campaign pairs each volunteer judges, training pairs not included.",
    "reservation_minutes": "How long a pair shown to a volunteer stays theirs before another may get it.",
    "selection": "Balanced: every pair equally likely. Adaptive: pairs where the compared metrics disagree come "
    "first, and the dashboard weights every figure so it still describes the whole pool.",
    "selection_metrics": "Adaptive: the two metrics whose ΔAUC you compare, e.g. bleu, bertscore (empty: all metrics).",
    "check_positions": "Where checks appear among a volunteer's pairs, e.g. 5, 20, 40 (empty: use the spacing).",
    "check_every": "Or one check after every N campaign pairs (used when no positions are given).",
    "exclude_failed_checks": "Exclude a volunteer who failed this many checks or more (empty: never).",
    "exclude_median_seconds": "Exclude a volunteer whose median time per pair is under this many seconds (empty: off).",
    "exclude_same_answer_share": "Exclude a volunteer who gave one answer to more than this share of pairs, e.g. 0.9.",
    "platform": "Plain link for volunteers, or a crowd platform whose participant ids the link carries.",
    "accepts_plain_link": "With a platform: also take volunteers through the plain link (they get no code).",
    "participant_param": "Other platform: the URL parameter of the participant id (Prolific: PROLIFIC_PID).",
    "study_param": "Other platform: the URL parameter of the study id (Prolific: STUDY_ID).",
    "session_param": "Other platform: the URL parameter of the session id, which resumes on another device.",
    "completion_code": "The code shown at the end to volunteers the rule keeps (Prolific's completion code).",
    "screened_out_code": "The code shown instead to volunteers the rule excludes (empty: none).",
    "completion_url": "Where the end page sends a platform participant; {code} is replaced by their code.",
    "is_open": "Open campaigns accept new volunteers; closed ones show a closed page.",
    "close_when_full": "Close by itself once every pair has its judges (a paid study stops recruiting).",
    "is_public": "Invite visitors of the site's home page to this campaign (one at a time).",
}


PLATFORM_PARAMETERS = ("participant_param", "study_param", "session_param")


class CampaignSettingsForm(forms.ModelForm[Campaign]):
    """Name, language, judges per pair, pairs per volunteer, checks, exclusion rule, platform
    (plain link, a platform, or both), completion codes, open, closing when full, public."""

    class Meta:
        model = Campaign
        fields = list(EXPLANATIONS)
        labels = {
            "quota": "Pairs per volunteer",
            "judges_per_pair": "Judges per pair",
            "reservation_minutes": "Reservation (minutes)",
            "selection": "Selection of the next pairs",
            "selection_metrics": "Compared metrics",
            "check_positions": "Check positions",
            "check_every": "Check spacing",
            "exclude_failed_checks": "Exclude after failed checks",
            "exclude_median_seconds": "Exclude if median seconds under",
            "exclude_same_answer_share": "Exclude if one answer's share over",
            "is_open": "Open",
            "accepts_plain_link": "Plain link too",
            "participant_param": "Participant parameter",
            "study_param": "Study parameter",
            "session_param": "Session parameter",
            "close_when_full": "Close when full",
            "is_public": "Public",
        }
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}

    def __init__(self, *args: object, user: Any = None, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.user = user
        for name, field in self.fields.items():
            field.help_text = EXPLANATIONS[name]
        # The teams the user may give the campaign to (a superuser: any, or none).
        team = self.fields["team"]
        team.queryset = teams_for(user)  # type: ignore[attr-defined]
        if self.instance.pk is None and not team.initial:
            own = list(team.queryset[:2])
            if len(own) == 1:
                team.initial = own[0].pk
        if user is not None and not user.is_superuser:
            # No empty choice; no team at all is refused by clean_team with what to do.
            team.empty_label = None  # type: ignore[attr-defined]
        for name in PLATFORM_PARAMETERS:  # left empty: Prolific's name, the model's default
            self.fields[name].required = False
        self.fields["selection"].required = False  # left out (an older script): the balanced order
        if self.instance.pk is not None:
            # The address volunteers were given stays: a new slug is a clone.
            self.fields["slug"].disabled = True

    def clean_team(self) -> object:
        team = self.cleaned_data.get("team")
        if self.user is None:
            return team
        try:  # the same rule as the API: a staff member's own team, a superuser's any or none
            return team_for_new_campaign(self.user, team.name if team is not None else None)
        except TeamError as error:
            raise forms.ValidationError(str(error)) from None

    def clean_selection(self) -> str:
        return str(self.cleaned_data.get("selection") or "balanced")

    def clean_selection_metrics(self) -> str:
        """Named metrics must be among those that scored the campaign's pairs (once any did)."""
        text = str(self.cleaned_data.get("selection_metrics") or "")
        if self.instance.pk is None or not text.strip():
            return text
        scored = set(MetricConfig.objects.filter(scores__pair__campaign=self.instance).values_list("metric", flat=True))
        unknown = [name for name in parse_metric_names(text) if name not in scored]
        if scored and unknown:
            raise forms.ValidationError(
                f"No scores of {', '.join(repr(name) for name in unknown)} in this campaign; "
                f"the metrics that scored its pairs are: {', '.join(sorted(scored))}."
            )
        return text

    def save(self, commit: bool = True) -> Campaign:
        """Save; an adaptive campaign without judgements gets its order planned from the scores."""
        campaign: Campaign = super().save(commit=commit)
        if commit and campaign.selection == "adaptive":
            # Judged already (the order stays) or no scores yet: the plan_selection command runs later.
            with contextlib.suppress(SelectionError):
                plan_selection(campaign)
        return campaign

    def clean(self) -> dict[str, object]:
        cleaned = super().clean() or {}
        for name in PLATFORM_PARAMETERS:
            if not str(cleaned.get(name) or "").strip():
                cleaned[name] = getattr(Campaign(), name)  # the model's default (PROLIFIC_PID, ...)
        return cleaned


class StoppingRuleForm(forms.Form):
    """The campaign's question and its stopping rule (fixed before the first judgement)."""

    statistic = forms.ChoiceField(
        label="Statistic",
        choices=StoppingRule.Statistic.choices,
        initial=StoppingRule.Statistic.AUC,
        required=False,  # ROC AUC when not given
        help_text="What the two metrics are compared on.",
    )
    # Labelled by their label (MetricConfig.__str__); a lazy queryset, read per form.
    metric_a: forms.ModelChoiceField[MetricConfig] = forms.ModelChoiceField(
        queryset=MetricConfig.objects.order_by("label"), label="Metric A", help_text="The first metric of the question."
    )
    metric_b: forms.ModelChoiceField[MetricConfig] = forms.ModelChoiceField(
        queryset=MetricConfig.objects.order_by("label"), label="Metric B", help_text="The metric A is compared with."
    )
    alpha = forms.FloatField(
        label="Alpha",
        initial=0.05,
        min_value=0.001,
        max_value=0.2,
        help_text="The chance, kept however often the dashboard is read, of calling a difference that is not there.",
    )
    planned_pairs = forms.IntegerField(
        label="Planned labelled pairs",
        initial=1000,
        min_value=1,
        max_value=1_000_000,
        help_text="Where the always-valid interval is tightest; a wrong guess costs width, never validity.",
    )
    method = forms.ChoiceField(
        label="Stopping method",
        choices=StoppingRule.Method.choices,
        initial=StoppingRule.Method.CONFIDENCE_SEQUENCE,
        required=False,  # the confidence sequence when not given
        help_text=(
            "Confidence sequence: may settle at any judgement, needs about 1.6 times the fixed design's pairs "
            "for the same power. Group-sequential: decides only at its looks, needs about 1.03 times; its maximum "
            "is the planned pairs times that. The planner shows both."
        ),
    )
    looks = forms.IntegerField(
        label="Looks (group-sequential)",
        initial=5,
        min_value=1,
        max_value=20,
        required=False,
        help_text="Equally spaced looks up to the plan's maximum size (group-sequential only).",
    )
    close_when_settled = forms.BooleanField(
        label="Close when settled",
        required=False,
        help_text="Close the campaign by itself once the question is settled (the record says when and why).",
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("metric_a") is not None and data.get("metric_a") == data.get("metric_b"):
            self.add_error("metric_b", "choose a metric other than metric A")
        return data


class PlanForm(forms.Form):
    """The planner's question and grid (a GET form: the plan is computed, nothing is saved).
    The values are read by :func:`scoring.reports.planning.parse_request`, which names what is wrong."""

    question = forms.ChoiceField(
        label="Question",
        choices=[
            ("auc", "Paired ΔAUC of two metrics"),
            ("correlation", "Difference of Pearson r"),
            ("clusters", "Clusters of all metrics"),
        ],
        initial="auc",
        required=False,
        help_text="What the campaign must answer (the clusters compare every metric; A and B are then not used).",
    )
    a = forms.ChoiceField(label="Metric A", required=False, help_text="A metric the workers scored the pool with.")
    b = forms.ChoiceField(label="Metric B", required=False, help_text="The metric A is compared with.")
    noise = forms.CharField(
        label="Noise",
        required=False,
        initial="0.1",
        help_text="The chance one judge gives the wrong answer; empty: estimated from the judgements already there.",
    )
    pairs = forms.CharField(
        label="Pairs", required=False, initial="100,200,400,800", help_text="Numbers of pairs, comma-separated."
    )
    judges = forms.CharField(label="Judges per pair", required=False, initial="1,3,5", help_text="Comma-separated.")
    reward = forms.CharField(label="Reward per participant", required=False, help_text="Empty: no cost column.")
    fee = forms.CharField(
        label="Platform fee", required=False, help_text="A share of the reward, e.g. 0.33 for a third."
    )

    def __init__(self, *args: Any, labels: list[str], **kwargs: Any) -> None:
        kwargs["prefix"] = "plan"
        super().__init__(*args, **kwargs)
        choices = [("", "—"), *((label, label) for label in labels)]
        for name in ("a", "b"):
            field = self.fields[name]
            assert isinstance(field, forms.ChoiceField)
            field.choices = choices
        if len(labels) >= 2 and not self.is_bound:
            self.initial.setdefault("a", labels[0])
            self.initial.setdefault("b", labels[1])

    def params(self) -> dict[str, str]:
        """The form's values as the planner's text parameters (unvalidated: parse_request checks)."""

        def value(name: str) -> str:
            return str(self.data.get(f"plan-{name}", "")).strip()

        metrics = ",".join(name for name in (value("a"), value("b")) if name)
        return {
            "question": value("question"),
            "metrics": "" if value("question") == "clusters" else metrics,
            "noise": value("noise"),
            "pairs": value("pairs"),
            "judges": value("judges"),
            "reward": value("reward"),
            "fee": value("fee"),
        }
