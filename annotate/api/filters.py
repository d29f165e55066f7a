"""Query-string filters of the list endpoints (django-filter: bad values give a 400 naming the field)."""

from __future__ import annotations

import django_filters
from django import forms
from django.db.models import Q, QuerySet

from annotate.exports.pseudonyms import volunteer_ids_for_pseudonym
from annotate.models import LABEL_CHOICES, Campaign, Judgement, Pair, Volunteer


class StrictBooleanField(forms.Field):
    """``true``/``false`` (also ``1``/``0``, ``yes``/``no``); anything else is an error, not "no filter"."""

    TRUE = frozenset({"true", "1", "yes"})
    FALSE = frozenset({"false", "0", "no"})

    def to_python(self, value: object) -> bool | None:
        if value in (None, ""):
            return None
        text = str(value).strip().lower()
        if text in self.TRUE:
            return True
        if text in self.FALSE:
            return False
        raise forms.ValidationError(f"Expected true or false, got {value!r}.", code="invalid")


class StrictBooleanFilter(django_filters.BooleanFilter):
    field_class = StrictBooleanField


class CampaignSlugFilter(django_filters.ModelChoiceFilter):
    """``?campaign=<slug>``; an unknown slug is a 400 that says so, not an empty page."""

    def __init__(self, field_name: str = "campaign", **kwargs: object) -> None:
        super().__init__(
            field_name=field_name,
            queryset=Campaign.objects.all(),
            to_field_name="slug",
            help_text="Campaign slug.",
            error_messages={"invalid_choice": "No campaign with slug %(value)r."},
            **kwargs,
        )


class PairFilter(django_filters.FilterSet):
    campaign = CampaignSlugFilter()
    origin = django_filters.CharFilter(help_text="Corpus the pair comes from (exact).")
    external_id = django_filters.CharFilter(help_text="Identifier in the imported file (exact).")
    is_training = StrictBooleanFilter(help_text="true: training pairs only; false: campaign pairs only.")
    has_gold = StrictBooleanFilter(
        method="filter_has_gold", help_text="true: pairs with an imported gold label or score; false: without."
    )

    class Meta:
        model = Pair
        fields = ["campaign", "origin", "external_id", "is_training", "has_gold"]

    def filter_has_gold(self, queryset: QuerySet[Pair], name: str, value: bool) -> QuerySet[Pair]:
        has_gold = Q(gold_label__isnull=False) | Q(gold_score__isnull=False)
        return queryset.filter(has_gold) if value else queryset.exclude(has_gold)


class JudgementFilter(django_filters.FilterSet):
    campaign = CampaignSlugFilter(field_name="pair__campaign")
    pair = django_filters.NumberFilter(field_name="pair_id", help_text="Pair id.")
    volunteer = django_filters.CharFilter(
        method="filter_volunteer", help_text="Volunteer pseudonym, as shown in the exports and this list."
    )
    is_training = StrictBooleanFilter(help_text="true: training answers only; false: corpus answers only.")
    label = django_filters.ChoiceFilter(choices=LABEL_CHOICES)

    class Meta:
        model = Judgement
        fields = ["campaign", "pair", "volunteer", "is_training", "label"]

    def filter_volunteer(self, queryset: QuerySet[Judgement], name: str, value: str) -> QuerySet[Judgement]:
        # Pseudonyms are keyed hashes: hash the candidates' tokens (one campaign's when given).
        volunteers = Volunteer.objects.all()
        campaign = self.form.cleaned_data.get("campaign")
        if campaign is not None:
            volunteers = volunteers.filter(campaign=campaign)
        ids = volunteer_ids_for_pseudonym(value, volunteers.values_list("id", "token").iterator(chunk_size=2000))
        return queryset.filter(volunteer_id__in=ids)
