"""The staff form of a campaign's settings: every setting a study needs, each explained in one line."""

from __future__ import annotations

from django import forms

from annotate.models import Campaign

# One line per setting, as the form shows it under the field (the model's help text is for the admin).
EXPLANATIONS: dict[str, str] = {
    "name": "What volunteers and staff see as the campaign's title.",
    "slug": "The campaign's address: volunteers open /c/<slug>/ (letters, digits, hyphens).",
    "description": "The welcome text volunteers read before they start (the guidelines follow it).",
    "language": "Language of the pairs and of the volunteer pages.",
    "judges_per_pair": "How many volunteers judge each pair; 2 or more makes agreement measurable.",
    "quota": "Campaign pairs each volunteer judges, training pairs not included.",
    "reservation_minutes": "How long a pair shown to a volunteer stays theirs before another may get it.",
    "check_positions": "Where checks appear among a volunteer's pairs, e.g. 5, 20, 40 (empty: use the spacing).",
    "check_every": "Or one check after every N campaign pairs (used when no positions are given).",
    "exclude_failed_checks": "Exclude a volunteer who failed this many checks or more (empty: never).",
    "exclude_median_seconds": "Exclude a volunteer whose median time per pair is under this many seconds (empty: off).",
    "exclude_same_answer_share": "Exclude a volunteer who gave one answer to more than this share of pairs, e.g. 0.9.",
    "platform": "Plain link for volunteers, or a crowd platform whose participant ids the link carries.",
    "completion_code": "The code shown at the end to volunteers the rule keeps (Prolific's completion code).",
    "screened_out_code": "The code shown instead to volunteers the rule excludes (empty: none).",
    "completion_url": "Where the end page sends a platform participant; {code} is replaced by their code.",
    "is_open": "Open campaigns accept new volunteers; closed ones show a closed page.",
}


class CampaignSettingsForm(forms.ModelForm):
    """Name, language, judges per pair, pairs per volunteer, checks, exclusion rule, platform,
    completion codes and whether the campaign is open."""

    class Meta:
        model = Campaign
        fields = list(EXPLANATIONS)
        labels = {
            "quota": "Pairs per volunteer",
            "judges_per_pair": "Judges per pair",
            "reservation_minutes": "Reservation (minutes)",
            "check_positions": "Check positions",
            "check_every": "Check spacing",
            "exclude_failed_checks": "Exclude after failed checks",
            "exclude_median_seconds": "Exclude if median seconds under",
            "exclude_same_answer_share": "Exclude if one answer's share over",
            "is_open": "Open",
        }
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        for name, field in self.fields.items():
            field.help_text = EXPLANATIONS[name]
        if self.instance.pk is not None:
            # The address volunteers were given stays: a new slug is a clone.
            self.fields["slug"].disabled = True
