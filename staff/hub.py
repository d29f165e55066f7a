"""What the site's own pages show: the staff hub's campaigns and links, the public home page.

Plain functions returning dataclasses; ``staff.views.site`` only renders them. The site pages
read campaigns through the annotate models and never import worker code (scoring.pipeline.worker,
scoring.pipeline.tasks, torch): the web layer stays on its side.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import Exists, OuterRef, Sum
from django.db.models.functions import Coalesce
from django.urls import reverse

from annotate.exports.links import ExportLink, export_links
from annotate.models import Campaign, Pair
from annotate.teams import campaigns_for


@dataclass(frozen=True)
class CampaignEntry:
    """One campaign as the staff hub lists it."""

    slug: str
    name: str
    is_open: bool
    created_at: datetime.datetime
    pairs: int
    judgements: int
    volunteer_link: str
    dashboard_url: str
    exports: tuple[ExportLink, ...]


@dataclass(frozen=True)
class StaffPage:
    """A staff page of the navigation bar: its URL name, address and title."""

    name: str
    url: str
    title: str
    description: str


def volunteer_link(slug: str) -> str:
    """The absolute link volunteers open (built from SITE_URL, as the admin builds it)."""
    return settings.SITE_URL + reverse("annotate:welcome", args=[slug])


def campaign_entries(user: Any) -> list[CampaignEntry]:
    """The campaigns ``user`` may see, open ones first then by name, with counts and links (one query).

    The counts are the campaign's kept tallies (:mod:`annotate.tallies`, stripes summed): corpus pairs and their
    judgements (training and attention-check pairs are not corpus pairs, as in the exports, the
    API and the dashboard), one joined row per campaign instead of counting its rows."""
    dashboard = reverse("staff:dashboard")
    rows = (
        campaigns_for(user)
        .annotate(
            pair_count=Coalesce(Sum("tallies__pairs"), 0), judgement_count=Coalesce(Sum("tallies__judgements"), 0)
        )
        .order_by("-is_open", "name", "slug")
        .values_list("slug", "name", "is_open", "created_at", "pair_count", "judgement_count")
    )
    return [
        CampaignEntry(
            slug=slug,
            name=name,
            is_open=is_open,
            created_at=created_at,
            pairs=pairs,
            judgements=judgements,
            volunteer_link=volunteer_link(slug),
            dashboard_url=f"{dashboard}?campaign={slug}",
            exports=export_links(slug),
        )
        for slug, name, is_open, created_at, pairs, judgements in rows
    ]


def staff_pages() -> list[StaffPage]:
    """The staff pages, in the order of the navigation bar."""
    return [
        StaffPage("staff:home", reverse("staff:home"), "Staff home", "Campaigns and their volunteer links."),
        StaffPage(
            "staff:dashboard",
            reverse("staff:dashboard"),
            "Dashboard",
            "Agreement of the metrics with the volunteers, live.",
        ),
        StaffPage("staff:status", reverse("staff:status"), "Scoring status", "Queues, workers and pending scores."),
        StaffPage("staff:exports", reverse("staff:exports"), "Exports", "Pairs and judgements as CSV or JSONL."),
        StaffPage("api-docs", reverse("api-docs"), "API docs", "The REST API, browsable (Swagger UI)."),
        StaffPage("docs", reverse("docs"), "Documentation", "Tutorials, how-to guides, reference, explanation."),
        StaffPage("admin:index", reverse("admin:index"), "Admin", "Campaigns, pairs, volunteers, metric settings."),
    ]


@dataclass(frozen=True)
class PublicCampaign:
    """The campaign the public home page invites visitors to."""

    name: str
    description: str
    link: str


def public_campaign() -> PublicCampaign | None:
    """The open public campaign: the one PARAEVAL_PUBLIC_CAMPAIGN names when it is set (the
    deployment decides), else the one staff made public on its settings page, if any; never
    one that has no pair to judge yet."""
    slug = settings.PARAEVAL_PUBLIC_CAMPAIGN
    chosen = Campaign.objects.filter(slug=slug) if slug else Campaign.objects.filter(is_public=True)
    # A campaign without a pair to judge invites nobody: a visitor would find nothing to do.
    has_pairs = Exists(Pair.objects.filter(campaign=OuterRef("pk"), is_training=False, is_check=False))
    campaign = (
        chosen.filter(has_pairs, is_open=True).order_by("-created_at").only("name", "description", "slug").first()
    )
    if campaign is None:
        return None
    return PublicCampaign(campaign.name, campaign.description, reverse("annotate:welcome", args=[campaign.slug]))


def full_campaigns() -> set[str]:
    """Slugs of the open campaigns that cannot serve a pair to a new volunteer now (shown "full")."""
    from annotate.allocation import full_campaign_slugs

    return full_campaign_slugs()
