"""The API's object permission: one campaign's rows are its team's (django-rules).

Every viewset's queryset is already narrowed to the caller's campaigns
(:func:`annotate.teams.visible_to`), so a stranger's detail URL is a 404 before this runs. This
check is the second lock, on the object itself, in case a queryset forgets: it asks the
django-rules permission and answers 404 too (never 403), so nothing tells the caller the
object exists.
"""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import NotFound
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from annotate.models import Campaign
from annotate.teams import CAMPAIGN_PERMISSION


def campaign_of(obj: Any) -> Campaign | None:
    """The campaign a row belongs to (a campaign, a pair's, a judgement's or a score's), if any."""
    if isinstance(obj, Campaign):
        return obj
    if hasattr(obj, "campaign_id"):
        campaign: Campaign = obj.campaign
        return campaign
    pair = getattr(obj, "pair", None)
    return pair.campaign if pair is not None else None


class InCampaignTeam(BasePermission):
    """A row of a campaign is for its team's members and the superusers."""

    def has_object_permission(self, request: Request, view: Any, obj: Any) -> bool:
        campaign = campaign_of(obj)
        if campaign is not None and not request.user.has_perm(CAMPAIGN_PERMISSION, campaign):
            raise NotFound()
        return True
