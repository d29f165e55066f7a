"""Querysets of the API, built so a list page costs a fixed number of queries."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, F, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from annotate.models import Campaign, Judgement, Pair, Volunteer


def _count(queryset: QuerySet[Any], group: str) -> Coalesce:
    """``COUNT(*)`` of ``queryset`` for the outer row, as a correlated subquery.

    Subqueries instead of ``Count`` over joins: joining pairs, volunteers and judgements at once
    would multiply the rows and the counts.
    """
    counted = queryset.order_by().values(group).annotate(n=Count("*")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def campaigns_with_counts() -> QuerySet[Campaign]:
    """Campaigns with their numbers of pairs, training pairs, volunteers and (corpus) judgements."""
    return Campaign.objects.annotate(
        pair_count=_count(Pair.objects.filter(campaign=OuterRef("pk"), is_training=False, is_check=False), "campaign"),
        training_pair_count=_count(Pair.objects.filter(campaign=OuterRef("pk"), is_training=True), "campaign"),
        volunteer_count=_count(Volunteer.objects.filter(campaign=OuterRef("pk")), "campaign"),
        judgement_count=_count(
            Judgement.objects.filter(pair__campaign=OuterRef("pk"), is_training=False, is_check=False),
            "pair__campaign",
        ),
    )


def pairs_for_api() -> QuerySet[Pair]:
    """Pairs with their campaign slug (their judgement count is a column kept by annotate.counters)."""
    return Pair.objects.annotate(campaign_slug=F("campaign__slug")).order_by("id")


def judgements_for_api() -> QuerySet[Judgement]:
    """Judgements with what the list shows of their pair and volunteer, in one query."""
    return (
        Judgement.objects.select_related("volunteer", "pair__campaign")
        .annotate(
            campaign_slug=F("pair__campaign__slug"),
            pair_external_id=F("pair__external_id"),
        )
        .order_by("id")
    )
