"""Who on the staff sees and changes which campaign: each campaign belongs to a team.

A team is a Django group (``auth.Group``); a campaign's ``team`` names the one that owns it.

- A superuser sees and changes every campaign.
- Any other staff account sees and changes the campaigns of its teams, and no other: the staff
  pages, the REST API, the exports and the admin answer 404 for another team's campaign, exactly
  as for a slug that does not exist, so nothing tells them it exists.
- A campaign with no team is the superusers' alone. This is the safe side: a campaign nobody
  assigned is never shown to a stranger by mistake. The migration that brought teams put every
  campaign of an existing installation, and every staff account, into one team ("All staff"), so
  an upgraded installation works as before until campaigns are moved to narrower teams.

The rule is written twice on purpose, once per kind of question, and a test holds them equal:
:func:`campaigns_for` answers "which campaigns" as a queryset (lists, lookups by slug, filters),
and the django-rules permission :data:`CAMPAIGN_PERMISSION` answers "may this user touch this
campaign" for one object (``user.has_perm(CAMPAIGN_PERMISSION, campaign)``: the admin, the API's
object permission). django-rules (predicates, no table) rather than django-guardian (a row per
user and object): membership of the campaign's team is the whole rule, so there is nothing to
store per object and nothing to keep in step when people join or leave a team.

Every view reaches campaigns through these functions, so each view's check is one line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

import rules
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.db.models import Model, QuerySet
from django.shortcuts import get_object_or_404

from annotate.models import Campaign

# The one object permission (django-rules): see, export and change a campaign.
CAMPAIGN_PERMISSION = "annotate.manage_campaign"

# The team the migration that introduced teams put existing campaigns and staff into.
EVERYONE_TEAM = "All staff"

M = TypeVar("M", bound=Model)


def _is_staff(user: Any) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_active and user.is_staff)


def campaigns_for(user: Any) -> QuerySet[Campaign]:
    """The campaigns ``user`` may see and change: all for a superuser, their teams' for other
    staff, none for anyone else."""
    if not _is_staff(user):
        return Campaign.objects.none()
    if user.is_superuser:
        return Campaign.objects.all()
    return Campaign.objects.filter(team__in=user.groups.all())


def campaign_or_404(user: Any, slug: str) -> Campaign:
    """The campaign ``slug`` if ``user`` may see it; a 404 otherwise (another team's campaign
    answers as a slug that does not exist)."""
    return get_object_or_404(campaigns_for(user), slug=slug)


def visible_to(queryset: QuerySet[M], user: Any, campaign_path: str = "campaign") -> QuerySet[M]:
    """``queryset`` narrowed to rows of campaigns ``user`` may see; ``campaign_path`` leads from
    the row to its campaign (``"campaign"`` for a pair, ``"pair__campaign"`` for a judgement)."""
    if _is_staff(user) and user.is_superuser:
        return queryset
    return queryset.filter(**{f"{campaign_path}__in": campaigns_for(user)})


@rules.predicate
def is_in_campaign_team(user: Any, campaign: Campaign | None) -> bool:
    """The user belongs to the team that owns ``campaign`` (a campaign with no team: nobody does)."""
    if campaign is None or campaign.team_id is None or not _is_staff(user):
        return False
    return bool(user.groups.filter(pk=campaign.team_id).exists())


# Superusers pass before any predicate runs (Django's has_perm), but only when active: the
# predicate keeps "active staff" explicit for the object check too.
may_manage_campaign = rules.is_active & rules.is_staff & (rules.is_superuser | is_in_campaign_team)


def register() -> None:
    """Register the campaign permission with django-rules (called once, from the app's ``ready``)."""
    rules.set_perm(CAMPAIGN_PERMISSION, may_manage_campaign)


class TeamError(ValueError):
    """A team that cannot be used: the message says what to do."""


def teams_for(user: Any) -> QuerySet[Group]:
    """The teams ``user`` may give a campaign to: every team for a superuser, their own otherwise."""
    if not _is_staff(user):
        return Group.objects.none()
    if user.is_superuser:
        return Group.objects.order_by("name")
    groups: QuerySet[Group] = user.groups.order_by("name")
    return groups


def team_for_new_campaign(user: Any, name: str | None) -> Group | None:
    """The team a campaign ``user`` creates goes into: the team named, else the user's only team.

    A superuser may name any team or none (the campaign is then the superusers' alone). Raises
    :class:`TeamError` for a team the user is not in, or when a staff member in several teams
    (or none) names none.
    """
    teams = teams_for(user)
    if name:
        team = teams.filter(name=name).first()
        if team is None:
            if user.is_superuser:
                raise TeamError(f"No team named {name!r}: create it first (manage.py team {name!r}).")
            raise TeamError(f"You are not a member of a team named {name!r}.")
        return team
    if user.is_superuser:
        return None
    own = list(teams[:2])
    if len(own) == 1:
        return own[0]
    if not own:
        raise TeamError("You are in no team: ask an administrator to add you to one (manage.py team).")
    raise TeamError("You are in several teams: choose the team that owns the campaign.")


@dataclass(frozen=True)
class TeamChange:
    """What :func:`set_up_team` did."""

    team: str
    created: bool
    campaigns: tuple[str, ...]
    members: tuple[str, ...]


def set_up_team(name: str, *, campaigns: Iterable[str] = (), members: Iterable[str] = ()) -> TeamChange:
    """Create team ``name`` if needed, give it the campaigns (by slug) and add the members (by
    username), all or nothing.

    A campaign moves from its former team (a campaign has one team). Raises :class:`TeamError`
    naming every unknown slug and username, with nothing changed.
    """
    name = name.strip()
    if not name:
        raise TeamError("A team needs a name.")
    if len(name) > Group._meta.get_field("name").max_length:  # type: ignore[operator]
        raise TeamError(f"A team's name has at most {Group._meta.get_field('name').max_length} characters.")
    slugs, usernames = sorted(set(campaigns)), sorted(set(members))
    found = dict(Campaign.objects.filter(slug__in=slugs).values_list("slug", "pk"))
    users = get_user_model()
    people = {user.get_username(): user for user in users.objects.filter(**{f"{users.USERNAME_FIELD}__in": usernames})}
    problems = [f"no campaign {slug!r}" for slug in slugs if slug not in found]
    problems += [f"no user {username!r}" for username in usernames if username not in people]
    if problems:
        raise TeamError("Nothing changed: " + "; ".join(problems) + ".")
    with transaction.atomic():
        team, created = Group.objects.get_or_create(name=name)
        Campaign.objects.filter(pk__in=found.values()).update(team=team)
        team.user_set.add(*people.values())
    return TeamChange(team.name, created, tuple(slugs), tuple(usernames))
