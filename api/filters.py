"""Query-string filters of the list endpoints (django-filter: bad values give a 400 naming the field)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import django_filters
from django import forms
from django.db.models import Q, QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema_field
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request

from annotate.models import LABEL_CHOICES, Campaign, Judgement, Pair, Volunteer
from annotate.pseudonyms import volunteer_ids_for_pseudonym
from annotate.quality import excluded_volunteer_ids
from annotate.teams import campaigns_for

MAX_ID = 2**63 - 1  # the largest primary key (bigint)


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


EMPTY_VALUE = "Empty value: give a value or leave the parameter out."


def refuse_empty_parameters(query_params: Mapping[str, str], names: Iterable[str]) -> None:
    """A 400 naming each of ``names`` given with an empty value (``?origin=``).

    django-filter and DRF read an empty value as "no filter", which the OpenAPI schema (a
    minimum length, an enum, a format) does not allow: the server says no, as the schema does.
    """
    empty = {name: [EMPTY_VALUE] for name in names if query_params.get(name) == ""}
    if empty:
        raise ValidationError(empty)


class NonEmptyFilterBackend(DjangoFilterBackend):
    """django-filter's backend, refusing filters given with an empty value (see above)."""

    def filter_queryset(self, request: Request, queryset: QuerySet[Any], view: Any) -> QuerySet[Any]:
        filterset_class = self.get_filterset_class(view, queryset)
        if filterset_class is not None:
            refuse_empty_parameters(request.query_params, filterset_class.base_filters)
        filtered: QuerySet[Any] = super().filter_queryset(request, queryset, view)
        return filtered


@extend_schema_field({"type": "string", "minLength": 1})
class TextFilter(django_filters.CharFilter):
    """Exact text; an empty value is refused (the schema's minimum length says so)."""


@extend_schema_field({"type": "integer", "minimum": 1, "maximum": MAX_ID})
class IdFilter(django_filters.NumberFilter):
    """An id: a whole number from 1 (the schema says so; a fraction is a 400)."""

    field_class = forms.IntegerField

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", MAX_ID)
        super().__init__(**kwargs)


class StrictChoiceField(django_filters.fields.ChoiceField):
    """A choice where an empty value is an error too (django-filter reads it as "no filter",
    which the OpenAPI enum does not allow)."""

    def to_python(self, value: object) -> str:
        if value == "":
            choices = ", ".join(str(key) for key, _ in self.choices if key != "")
            raise forms.ValidationError(f"Expected one of {choices}, got ''.", code="invalid_choice")
        return str(super().to_python(value))


class StrictChoiceFilter(django_filters.ChoiceFilter):
    field_class = StrictChoiceField


class CampaignSlugField(django_filters.fields.ModelChoiceField):
    """An unknown campaign is a 404 that says so (the query names something that does not
    exist), not an empty page; the body keeps the shape of a field error."""

    def to_python(self, value: object) -> Campaign | None:
        try:
            campaign: Campaign | None = super().to_python(value)
            return campaign
        except forms.ValidationError as error:
            if error.code != "invalid_choice":
                raise
            raise NotFound({"campaign": [f"No campaign with slug {value!r}."]}) from None


@extend_schema_field({"type": "string", "minLength": 1, "maxLength": 50, "pattern": "^[-a-zA-Z0-9_]+$"})
class CampaignSlugFilter(django_filters.ModelChoiceFilter):
    """``?campaign=<slug>``; an unknown slug is a 404 that says so, not an empty page."""

    field_class = CampaignSlugField

    def __init__(self, field_name: str = "campaign", **kwargs: object) -> None:
        super().__init__(
            field_name=field_name,
            # The caller's campaigns: another team's slug is a 404 as an unknown one.
            queryset=lambda request: campaigns_for(request.user if request is not None else None),
            to_field_name="slug",
            help_text="Campaign slug (an unknown one is a 404).",
            **kwargs,
        )


class PairFilter(django_filters.FilterSet):
    campaign = CampaignSlugFilter()
    origin = TextFilter(help_text="Corpus the pair comes from (exact).")
    external_id = TextFilter(help_text="Identifier in the imported file (exact).")
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
    pair = IdFilter(field_name="pair_id", help_text="Pair id.")
    volunteer = TextFilter(
        method="filter_volunteer", help_text="Volunteer pseudonym, as shown in the exports and this list."
    )
    is_training = StrictBooleanFilter(
        help_text="true: training answers only; false: the others (check answers included: add is_check=false)."
    )
    is_check = StrictBooleanFilter(help_text="true: answers to attention checks only; false: the others.")
    excluded = StrictBooleanFilter(
        method="filter_excluded",
        help_text="true: answers of volunteers the campaign's exclusion rule or staff leave out; false: the others.",
    )
    label = StrictChoiceFilter(choices=LABEL_CHOICES)

    class Meta:
        model = Judgement
        fields = ["campaign", "pair", "volunteer", "is_training", "is_check", "excluded", "label"]

    def filter_excluded(self, queryset: QuerySet[Judgement], name: str, value: bool) -> QuerySet[Judgement]:
        # Who is excluded follows from each campaign's rule and evidence: one quality pass per campaign.
        campaign = self.form.cleaned_data.get("campaign")
        campaigns = [campaign] if campaign is not None else Campaign.objects.filter(volunteers__isnull=False).distinct()
        ids = set().union(*(excluded_volunteer_ids(each) for each in campaigns))
        return queryset.filter(volunteer_id__in=ids) if value else queryset.exclude(volunteer_id__in=ids)

    def filter_volunteer(self, queryset: QuerySet[Judgement], name: str, value: str) -> QuerySet[Judgement]:
        # Pseudonyms are keyed hashes: hash the candidates' tokens (one campaign's when given).
        volunteers = Volunteer.objects.all()
        campaign = self.form.cleaned_data.get("campaign")
        if campaign is not None:
            volunteers = volunteers.filter(campaign=campaign)
        ids = volunteer_ids_for_pseudonym(value, volunteers.values_list("id", "token").iterator(chunk_size=2000))
        return queryset.filter(volunteer_id__in=ids)
