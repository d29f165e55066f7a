"""Staff manage campaigns here: the volunteer link, counts, opening and closing."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth.models import Group
from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from annotate.counters import recount_judgements
from annotate.models import Assignment, Campaign, Judgement, Pair, Volunteer
from annotate.pseudonyms import volunteer_pseudonym
from annotate.teams import campaigns_for, teams_for, visible_to


class TeamScopedAdmin(admin.ModelAdmin[Any]):
    """An admin page that lists and opens only rows of the campaigns the user's teams own (a
    superuser: all); another team's row is "does not exist", as on the staff pages.

    ``campaign_path`` leads from the row to its campaign (``"pk"`` for a campaign itself).
    """

    campaign_path = "campaign"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return visible_to(super().get_queryset(request), request.user, self.campaign_path)

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        # Choices of campaigns and teams: the user's own, never the names of others'.
        if db_field.related_model is Campaign:
            kwargs["queryset"] = campaigns_for(request.user)
        elif db_field.related_model is Group:
            kwargs["queryset"] = teams_for(request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


def _count(model: type[Pair | Volunteer | Judgement], campaign_path: str, **filters: object) -> Coalesce:
    """Rows of ``model`` per campaign as a correlated subquery (joined COUNTs multiply rows)."""
    rows = (
        model._default_manager.filter(**{campaign_path: OuterRef("pk")}, **filters)
        .order_by()
        .values(campaign_path)
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(rows, output_field=IntegerField()), 0)


def volunteer_link(campaign: Campaign) -> str:
    """The public link volunteers open to take part."""
    return settings.SITE_URL + reverse("annotate:welcome", args=[campaign.slug])


@admin.register(Campaign)
class CampaignAdmin(TeamScopedAdmin):
    campaign_path = "pk"
    list_display = [
        "name",
        "slug",
        "team",
        "is_open",
        "link",
        "pair_total",
        "training_total",
        "volunteer_total",
        "judgement_total",
        "quota",
        "judges_per_pair",
        "created_at",
    ]
    list_filter = ["is_open", ("team", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["name", "slug", "description"]
    prepopulated_fields = {"slug": ["name"]}
    readonly_fields = [
        "link",
        "volunteers_page",
        "pair_total",
        "training_total",
        "volunteer_total",
        "judgement_total",
        "created_at",
    ]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "name",
                    "slug",
                    "team",
                    "description",
                    "is_open",
                    "close_when_full",
                    "is_public",
                    "language",
                    "link",
                ]
            },
        ),
        (
            "Rules",
            {"fields": ["quota", "judges_per_pair", "reservation_minutes", "selection", "selection_metrics"]},
        ),
        (
            "Attention checks and the exclusion rule",
            {
                "fields": [
                    "check_positions",
                    "check_every",
                    "exclude_failed_checks",
                    "exclude_median_seconds",
                    "exclude_same_answer_share",
                    "volunteers_page",
                ]
            },
        ),
        (
            "Crowd platform",
            {
                "fields": [
                    "platform",
                    "accepts_plain_link",
                    "participant_param",
                    "study_param",
                    "session_param",
                    "completion_code",
                    "screened_out_code",
                    "completion_url",
                ]
            },
        ),
        ("Counts", {"fields": ["pair_total", "training_total", "volunteer_total", "judgement_total", "created_at"]}),
    ]
    actions = ["open_campaigns", "close_campaigns", "recount"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Campaign]:
        campaigns: QuerySet[Campaign] = (
            super()
            .get_queryset(request)
            .annotate(
                _pairs=_count(Pair, "campaign", is_training=False, is_check=False),
                _training=_count(Pair, "campaign", is_training=True),
                _volunteers=_count(Volunteer, "campaign"),
                _judgements=_count(Judgement, "pair__campaign", is_training=False, is_check=False),
            )
        )
        return campaigns

    @admin.display(description="Volunteer link")
    def link(self, campaign: Campaign) -> str:
        if not campaign.pk:
            return "—"
        url = volunteer_link(campaign)
        return format_html('<a href="{}" target="_blank" rel="noopener">{}</a>', url, url)

    @admin.display(description="Volunteers and their evidence")
    def volunteers_page(self, campaign: Campaign) -> str:
        if not campaign.pk:
            return "—"
        url = reverse("staff:volunteers", args=[campaign.slug])
        return format_html('<a href="{}">Flagged volunteers, evidence and overrides</a>', url)

    @admin.display(description="Pairs", ordering="_pairs")
    def pair_total(self, campaign: Campaign) -> int:
        return getattr(campaign, "_pairs", 0)

    @admin.display(description="Training pairs", ordering="_training")
    def training_total(self, campaign: Campaign) -> int:
        return getattr(campaign, "_training", 0)

    @admin.display(description="Volunteers", ordering="_volunteers")
    def volunteer_total(self, campaign: Campaign) -> int:
        return getattr(campaign, "_volunteers", 0)

    @admin.display(description="Judgements (without training)", ordering="_judgements")
    def judgement_total(self, campaign: Campaign) -> int:
        return getattr(campaign, "_judgements", 0)

    @admin.action(description="Open the selected campaigns to new volunteers")
    def open_campaigns(self, request: HttpRequest, queryset: QuerySet[Campaign]) -> None:
        changed = queryset.filter(is_open=False).update(is_open=True)
        self.message_user(request, f"{changed} campaign(s) opened.", messages.SUCCESS)

    @admin.action(description="Close the selected campaigns to new volunteers")
    def close_campaigns(self, request: HttpRequest, queryset: QuerySet[Campaign]) -> None:
        changed = queryset.filter(is_open=True).update(is_open=False)
        self.message_user(request, f"{changed} campaign(s) closed.", messages.SUCCESS)

    @admin.action(description="Recount the judgements of every pair (allocation counters)")
    def recount(self, request: HttpRequest, queryset: QuerySet[Campaign]) -> None:
        fixed = sum(recount_judgements(campaign) for campaign in queryset)
        self.message_user(request, f"{fixed} pair counter(s) corrected.", messages.SUCCESS)


@admin.register(Pair)
class PairAdmin(TeamScopedAdmin):
    def view_on_site(self, obj: Pair) -> str:
        """The admin's "View on site" leads to the pair's staff page (judgements, scores, gold)."""
        return reverse("staff:pair", args=[obj.campaign.slug, obj.pk])

    list_display = [
        "__str__",
        "campaign",
        "origin",
        "is_training",
        "is_check",
        "training_position",
        "short_source",
        "judgement_count",
    ]
    list_filter = [("campaign", admin.RelatedOnlyFieldListFilter), "origin", "is_training", "is_check", "gold_label"]
    search_fields = ["external_id", "source", "hypothesis"]
    list_select_related = ["campaign"]
    readonly_fields = ["judgement_count", "created_at"]
    ordering = ["campaign", "-is_training", "training_position", "id"]

    @admin.display(description="Source")
    def short_source(self, pair: Pair) -> str:
        return pair.source if len(pair.source) <= 80 else pair.source[:77] + "…"


@admin.register(Volunteer)
class VolunteerAdmin(TeamScopedAdmin):
    list_display = [
        "__str__",
        "campaign",
        "participant_id",
        "english_level",
        "answers",
        "exclusion_override",
        "created_at",
        "finished_at",
    ]
    list_filter = [
        ("campaign", admin.RelatedOnlyFieldListFilter),
        "english_level",
        "exclusion_override",
        ("finished_at", admin.EmptyFieldListFilter),
        ("returned_at", admin.EmptyFieldListFilter),
    ]
    search_fields = ["token", "participant_id"]
    list_select_related = ["campaign"]
    readonly_fields = [
        "pseudonym",
        "campaign",
        "english_level",
        "consented_at",
        "created_at",
        "finished_at",
        "participant_id",
        "study_id",
        "session_id",
        "returned_at",
        "guidelines_seen_at",
        "training_done_seen_at",
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Volunteer]:
        volunteers: QuerySet[Volunteer] = (
            super()
            .get_queryset(request)
            .annotate(_answers=Count("judgements", filter=Q(judgements__is_training=False, judgements__is_check=False)))
        )
        return volunteers

    @admin.display(description="Judgements", ordering="_answers")
    def answers(self, volunteer: Volunteer) -> int:
        return getattr(volunteer, "_answers", 0)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # volunteers come in through the campaign link

    @admin.display(description="Pseudonym")
    def pseudonym(self, volunteer: Volunteer) -> str:
        # The token is a credential (whoever has it answers in the volunteer's name): never shown.
        return volunteer_pseudonym(volunteer.token)


@admin.register(Judgement)
class JudgementAdmin(TeamScopedAdmin):
    """Read-only: the answers are the data."""

    campaign_path = "pair__campaign"
    list_display = [
        "pair",
        "label",
        "volunteer",
        "is_training",
        "is_check",
        "position",
        "source_on_top",
        "shown_at",
        "answered_at",
    ]
    list_filter = [
        ("pair__campaign", admin.RelatedOnlyFieldListFilter),
        "label",
        "is_training",
        "is_check",
        "volunteer__english_level",
    ]
    search_fields = ["pair__external_id", "volunteer__token"]
    list_select_related = ["pair", "volunteer"]
    date_hierarchy = "answered_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Judgement | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Judgement | None = None) -> bool:
        return False


@admin.register(Assignment)
class AssignmentAdmin(TeamScopedAdmin):
    campaign_path = "pair__campaign"
    list_display = ["pair", "volunteer", "source_on_top", "shown_at", "expires_at", "answered_at"]
    list_filter = [("pair__campaign", admin.RelatedOnlyFieldListFilter), ("answered_at", admin.EmptyFieldListFilter)]
    search_fields = ["pair__external_id", "volunteer__token"]
    list_select_related = ["pair", "volunteer"]
    readonly_fields = ["volunteer", "pair", "source_on_top", "shown_at", "answered_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
