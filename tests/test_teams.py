"""Campaigns belong to teams: every staff route and API endpoint, walked as a member of another
team (a 404, nothing of the campaign in the answer, nothing changed) and as a member of the
campaign's team (it works).

The routes are enumerated from the URL resolver: a route added without being classified here
fails ``test_every_route_is_classified``, so a new page cannot skip the check.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.db.models import Model
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from annotate.models import Campaign, CorpusObjective, Judgement, Pair, PairUpload, Volunteer
from annotate.teams import (
    CAMPAIGN_PERMISSION,
    EVERYONE_TEAM,
    TeamError,
    campaigns_for,
    set_up_team,
    team_for_new_campaign,
)
from scoring.models import MetricConfig, Score
from tests.builders import (
    make_campaign,
    make_judgement,
    make_metric_config,
    make_pair,
    make_score,
    make_staff,
    make_team,
    make_volunteer,
)

pytestmark = pytest.mark.django_db

# Every text of the owners' campaign carries this word; no answer to an outsider may.
SECRET = "Zebra"
SLUG = "c-owls"
# DRF and Django's own words for "no such object" (a 404 must not say more).
NOT_FOUND_BODIES = ("No Campaign matches", "No Pair matches", "No PairUpload matches")


@dataclass
class World:
    campaign: Campaign
    pair: Pair
    judgement: Judgement
    volunteer: Volunteer
    config: MetricConfig
    score: Score
    upload: PairUpload
    owner: Any
    outsider: Any


def build_world() -> World:
    owls, larks = make_team("Owls"), make_team("Larks")
    campaign = make_campaign(slug=SLUG, name=f"{SECRET} study", description=f"{SECRET}s and their stripes.", team=owls)
    pair = make_pair(
        campaign,
        external_id=f"{SECRET.lower()}-1",
        source=f"{SECRET}s graze at dawn.",
        hypothesis=f"At dawn {SECRET}s eat.",
    )
    make_pair(campaign, external_id=f"{SECRET.lower()}-2", source=f"{SECRET}s run.", hypothesis=f"{SECRET}s sprint.")
    volunteer = make_volunteer(campaign, participant_id=f"{SECRET}-participant")
    judgement = make_judgement(pair, volunteer)
    config = make_metric_config(f"{SECRET.lower()}metric", label=f"{SECRET.lower()}metric")
    score = make_score(pair, config, 0.25)
    CorpusObjective.objects.create(campaign=campaign, origin="test", objective=CorpusObjective.Objective.MINIMISE)
    upload = PairUpload.objects.create(
        campaign=campaign, key=f"{SECRET.lower()}key", filename=f"{SECRET.lower()}.csv", size=10, state="imported"
    )
    # The outsider's own team has a campaign: their lists are not empty, only without the owls'.
    make_pair(make_campaign(slug="c-larks", name="Heron study", team=larks), source="Herons fish.")
    owner = make_staff("owl", teams=("Owls",))
    outsider = make_staff("lark", teams=("Larks",))
    return World(campaign, pair, judgement, volunteer, config, score, upload, owner, outsider)


@dataclass(frozen=True)
class Call:
    """One request to a route, and what each kind of caller must get."""

    method: str
    url: Callable[[World], str]
    data: Callable[[World], Any] | None = None
    json: bool = False  # the body as JSON (the API), else a form
    # The outsider: a 404 (another team's campaign does not exist for them), unless a list.
    outsider: frozenset[int] = frozenset({404})
    # The owner: the answer it gets, and whether it shows the campaign's data.
    member: frozenset[int] = frozenset({200})
    member_sees: bool = True


def staff(name: str, **kwargs: Any) -> Callable[[World], str]:
    def build(world: World) -> str:
        values = {
            "slug": world.campaign.slug,
            "pair_id": world.pair.pk,
            "upload_id": world.upload.pk,
        }
        return reverse(name, kwargs={key: values[key] for key in kwargs.get("keys", ())}) + kwargs.get("query", "")

    return build


def api(path: str) -> Callable[[World], str]:
    def build(world: World) -> str:
        return path.format(
            slug=world.campaign.slug,
            pair=world.pair.pk,
            judgement=world.judgement.pk,
            score=world.score.pk,
            config=world.config.pk,
        )

    return build


SLUGGED = ("slug",)
S = frozenset
BAD = S({400})

# Routes of one campaign: the outsider gets a 404 for every method, the owner what is written.
CAMPAIGN_ROUTES: dict[str, list[Call]] = {
    "staff:campaign-settings": [
        Call("GET", staff("staff:campaign-settings", keys=SLUGGED)),
        Call(
            "POST",
            staff("staff:campaign-settings", keys=SLUGGED),
            lambda w: {"name": "Renamed"},
            member=BAD,  # an incomplete form: refused, but to the team's member, with its fields
            member_sees=False,
        ),
    ],
    "staff:campaign-clone": [
        Call(
            "POST",
            staff("staff:campaign-clone", keys=SLUGGED),
            lambda w: {"slug": "copy"},
            member=S({302}),
            member_sees=False,
        ),
    ],
    "staff:campaign-stopping": [
        Call(
            "POST",
            staff("staff:campaign-stopping", keys=SLUGGED),
            lambda w: {"alpha": "0.05"},
            member=BAD,  # no metrics chosen: refused, to the team's member, with its fields
            member_sees=False,
        ),
    ],
    "staff:campaign-definition": [Call("GET", staff("staff:campaign-definition", keys=SLUGGED))],
    "staff:upload": [
        Call("GET", staff("staff:upload", keys=SLUGGED)),
        Call("POST", staff("staff:upload", keys=SLUGGED), lambda w: {"format": "auto"}, member=BAD),
    ],
    "staff:upload-detail": [
        Call("GET", staff("staff:upload-detail", keys=("slug", "upload_id"))),
        Call(
            "POST",
            staff("staff:upload-detail", keys=("slug", "upload_id")),
            lambda w: {},
            member=BAD,
            member_sees=False,
        ),
    ],
    "staff:upload-status": [Call("GET", staff("staff:upload-status", keys=("slug", "upload_id")), member_sees=False)],
    "staff:upload-start": [
        Call(
            "POST",
            lambda w: reverse("staff:upload-start", args=[w.campaign.slug, w.upload.pk, "check"]),
            lambda w: {},
            member=BAD,
            member_sees=False,
        )
    ],
    "staff:volunteers": [
        Call("GET", staff("staff:volunteers", keys=SLUGGED)),
        Call(
            "POST",
            staff("staff:volunteers", keys=SLUGGED),
            lambda w: {"override": "exclude", "volunteer": str(w.volunteer.pk), "note": "x"},
            member=S({302}),
            member_sees=False,
        ),
    ],
    "staff:participants-csv": [Call("GET", staff("staff:participants-csv", keys=SLUGGED))],
    "staff:pairs": [Call("GET", staff("staff:pairs", keys=SLUGGED))],
    "staff:pair": [Call("GET", staff("staff:pair", keys=("slug", "pair_id")))],
    "staff:campaign-export": [Call("GET", staff("staff:campaign-export", keys=SLUGGED))],
    "staff:probes": [
        Call("GET", staff("staff:probes", keys=SLUGGED), member_sees=False),
        Call(
            "POST",
            staff("staff:probes", keys=SLUGGED),
            lambda w: {"kinds": ["no-such-kind"]},
            member=BAD,
            member_sees=False,
        ),
    ],
    "api-campaign-probes": [
        Call(
            "POST",
            api("/api/campaigns/{slug}/probes/"),
            lambda w: {"kinds": ["no-such-kind"]},
            json=True,
            member=BAD,
            member_sees=False,
        ),
    ],
    "api-campaign-plan": [
        Call("GET", api("/api/campaigns/{slug}/plan/?noise=0.1"), member=S({409}), member_sees=False),
    ],
    "api-campaign-robustness": [
        Call("GET", api("/api/campaigns/{slug}/robustness/"), member=S({200, 404}), member_sees=False),
    ],
    "staff:objectives": [
        Call("GET", staff("staff:objectives", keys=SLUGGED)),
        Call(
            "POST", staff("staff:objectives", keys=SLUGGED), lambda w: {}, member=S({200, 302, 400}), member_sees=False
        ),
    ],
    "staff:dashboard-data": [Call("GET", staff("staff:dashboard-data", query=f"?campaign={SLUG}"), member_sees=False)],
    "api-campaign-detail": [Call("GET", api("/api/campaigns/{slug}/"))],
    "api-campaign-open": [Call("POST", api("/api/campaigns/{slug}/open/"))],
    "api-campaign-close": [Call("POST", api("/api/campaigns/{slug}/close/"))],
    "api-campaign-export": [Call("GET", api("/api/campaigns/{slug}/export/"))],
    "api-campaign-report": [Call("GET", api("/api/campaigns/{slug}/report/"), member_sees=False)],
    "api-campaign-meta-evaluation": [
        Call("GET", api("/api/campaigns/{slug}/meta-evaluation/"), member=S({200, 202, 503}), member_sees=False)
    ],
    "api-campaign-objectives": [
        Call("GET", api("/api/campaigns/{slug}/objectives/"), member_sees=False),
        Call(
            "PUT",
            api("/api/campaigns/{slug}/objectives/"),
            lambda w: {"objectives": {"test": "maximise"}},
            json=True,
            member_sees=False,
        ),
    ],
    "api-campaign-paraphrasus": [Call("GET", api("/api/campaigns/{slug}/paraphrasus/"), member_sees=False)],
    "api-pair-detail": [Call("GET", api("/api/pairs/{pair}/"))],
    "api-judgement-detail": [Call("GET", api("/api/judgements/{judgement}/"), member_sees=False)],
    "api-score-detail": [Call("GET", api("/api/scores/{score}/"), member_sees=False)],
    "api-metric-config-detail": [Call("GET", api("/api/metric-configs/{config}/"))],
}


def score_file(world: World) -> dict[str, Any]:
    upload = io.BytesIO(f"pair_id,score\n{world.pair.pk},0.5\n".encode())
    upload.name = "scores.csv"
    return {"campaign": SLUG, "file": upload, "name": "mine", "version": "1", "direction": "higher"}


# Routes that are not one campaign's but list campaigns or take one in their body: the outsider
# gets their answer (a list without the owls' campaign, or a refusal naming no campaign of it).
OTHER_ROUTES: dict[str, list[Call]] = {
    "home": [Call("GET", staff("home"), outsider=S({200}))],
    "staff:home": [Call("GET", staff("staff:home"), outsider=S({200}))],
    "staff:exports": [Call("GET", staff("staff:exports"), outsider=S({200}))],
    "staff:dashboard": [
        Call("GET", staff("staff:dashboard"), outsider=S({200})),
        Call("GET", staff("staff:dashboard", query=f"?campaign={SLUG}")),
    ],
    "staff:campaign-new": [
        Call("GET", staff("staff:campaign-new"), outsider=S({200}), member_sees=False),
        # Into the owls' team: refused to a lark, nothing created.
        Call(
            "POST",
            staff("staff:campaign-new"),
            lambda w: (
                {"slug": "intruder", "name": "Intruder", "team": w.campaign.team_id, "language": "en", "quota": 5}
                | {"judges_per_pair": 1, "reservation_minutes": 5, "completion_url": "x"}
            ),
            outsider=BAD,
            member=S({302}),
            member_sees=False,
        ),
    ],
    "staff:campaign-load": [
        Call(
            "POST",
            staff("staff:campaign-load"),
            lambda w: {"slug": "loaded", "team": "Owls"},
            outsider=BAD,
            member=BAD,  # no file: refused, but not for the team
            member_sees=False,
        )
    ],
    "staff:score-import": [
        Call("GET", staff("staff:score-import"), outsider=S({200})),
        Call("POST", staff("staff:score-import"), score_file, outsider=BAD),
    ],
    "staff:tuning": [
        Call("GET", staff("staff:tuning"), outsider=S({200})),
        # Another team's campaign is not among the choices: refused, nothing queued.
        Call("POST", staff("staff:tuning"), lambda w: {"campaign": w.campaign.pk}, outsider=BAD, member=BAD),
    ],
    "staff:generate": [
        Call("GET", staff("staff:generate"), outsider=S({200})),
        Call("POST", staff("staff:generate"), lambda w: {"campaign": SLUG, "count": 1}, outsider=BAD, member=BAD),
    ],
    "api-root": [Call("GET", api("/api/"), outsider=S({200}), member_sees=False)],
    "api-campaign-list": [
        Call("GET", api("/api/campaigns/"), outsider=S({200})),
        Call(
            "POST",
            api("/api/campaigns/"),
            lambda w: {"slug": "intruder", "name": "Intruder", "team": "Owls"},
            json=True,
            outsider=S({404}),  # not one of the caller's teams: not found, as another team's campaign
            member=S({201}),
            member_sees=False,
        ),
    ],
    "api-pair-list": [
        Call("GET", api("/api/pairs/"), outsider=S({200})),
        Call("GET", api("/api/pairs/?campaign={slug}")),
        Call(
            "POST",
            api("/api/pairs/"),
            lambda w: {"campaign": SLUG, "pairs": [{"id": "n1", "source": "A b.", "hypothesis": "B a."}]},
            json=True,
            member=S({201}),
            member_sees=False,
        ),
    ],
    "api-judgement-list": [
        Call("GET", api("/api/judgements/?campaign={slug}"), member_sees=False),
        Call("GET", api("/api/judgements/"), outsider=S({200}), member_sees=False),
    ],
    "api-score-list": [
        Call("GET", api("/api/scores/"), outsider=S({200}), member_sees=False),
        Call("GET", api("/api/scores/?campaign={slug}"), member_sees=False),
    ],
    "api-metric-config-list": [
        Call("GET", api("/api/metric-configs/"), outsider=S({200})),
        Call("GET", api("/api/metric-configs/?campaign={slug}")),
    ],
    "api-score-import": [Call("POST", api("/api/scores/import/"), score_file, member=S({201}), member_sees=False)],
}

# Routes with nothing of any campaign in them, each with the reason.
NO_CAMPAIGN_DATA: dict[str, str] = {
    "staff:status": "the scoring workers are shared: queues, workers and totals per enabled metric, no campaign",
    "staff:status-json": "the same report as the status page",
    "docs": "the documentation site, static text",
    "docs-page": "the documentation site, static text",
    "api-schema": "the OpenAPI document (no data)",
    "api-docs": "Swagger UI over the schema",
    "api-redoc": "ReDoc over the schema",
    "set_language": "the volunteer pages' language switch",
}
# Whole namespaces, with the reason.
NAMESPACES: dict[str, str] = {
    "annotate": "the volunteer pages: public by the campaign's link, no staff data (tested in test_campaign_*)",
    "admin": "the admin: its campaign pages are scoped by TeamScopedAdmin (test_admin_lists_only_the_teams_rows)",
}


def _routes(patterns: list[Any], namespace: str = "") -> Iterator[str]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            yield from _routes(pattern.url_patterns, inner)
        elif isinstance(pattern, URLPattern):
            yield f"{namespace}{pattern.name}" if pattern.name else f"{namespace}<unnamed {pattern.pattern}>"


def every_route() -> set[str]:
    """The name of every route the site answers (namespaced), from the URL resolver."""
    return set(_routes(get_resolver().url_patterns))


def test_every_route_is_classified() -> None:
    routes = every_route()
    classified = set(CAMPAIGN_ROUTES) | set(OTHER_ROUTES) | set(NO_CAMPAIGN_DATA)
    unclassified = {name for name in routes - classified if name.partition(":")[0] not in NAMESPACES or ":" not in name}
    assert not unclassified, f"classify these routes in tests/test_teams.py: {sorted(unclassified)}"
    assert not classified - routes, f"these routes no longer exist: {sorted(classified - routes)}"


def _body(response: Any) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode()
    return response.content.decode()


def _send(client: Client, call: Call, world: World) -> tuple[int, str]:
    url = call.url(world)
    data = call.data(world) if call.data else None
    if call.method == "GET":
        response = client.get(url)
    elif call.json:
        response = client.generic(call.method, url, json.dumps(data or {}), content_type="application/json")
    elif call.method == "POST":
        response = client.post(url, data or {})
    else:
        response = client.generic(call.method, url, "", content_type="application/json")
    return response.status_code, _body(response)


def _state() -> dict[str, Any]:
    """Every row a request could add or change, to check an outsider's request changed nothing."""
    models: list[type[Model]] = [Campaign, Pair, Volunteer, Judgement, MetricConfig, Score, PairUpload, CorpusObjective]
    state: dict[str, Any] = {model.__name__: model._default_manager.count() for model in models}
    state["campaign"] = list(Campaign.objects.filter(slug=SLUG).values())
    state["volunteer"] = list(Volunteer.objects.filter(campaign__slug=SLUG).values("exclusion_override"))
    state["objectives"] = list(CorpusObjective.objects.values("origin", "objective"))
    return state


def _login(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize("name", sorted(CAMPAIGN_ROUTES) + sorted(OTHER_ROUTES))
def test_another_team_gets_nothing_and_the_team_gets_its_campaign(name: str) -> None:
    world = build_world()
    calls = CAMPAIGN_ROUTES.get(name) or OTHER_ROUTES[name]
    outsider = _login(world.outsider)
    for call in calls:
        before = _state()
        status, body = _send(outsider, call, world)
        where = f"{call.method} {call.url(world)} as another team's member"
        assert status in call.outsider, f"{where}: {status} {body[:300]}"
        assert SECRET.lower() not in body.lower(), f"{where}: the answer shows the campaign: {body[:500]}"
        assert _state() == before, f"{where}: changed something"
    member = _login(world.owner)
    for call in calls:
        status, body = _send(member, call, world)
        where = f"{call.method} {call.url(world)} as the team's member"
        assert status in call.member, f"{where}: {status} {body[:300]}"
        assert not any(words in body for words in NOT_FOUND_BODIES), f"{where}: {body[:300]}"
        if call.member_sees:
            assert SECRET.lower() in body.lower(), f"{where}: the campaign's data is missing: {body[:500]}"


@pytest.mark.parametrize("name", sorted(NO_CAMPAIGN_DATA))
def test_routes_without_campaign_data_show_none(name: str) -> None:
    world = build_world()
    if name == "set_language":
        return  # a redirect to the volunteer page, no content
    url = reverse(name, kwargs={"path": "index.html"} if name == "docs-page" else None)
    response = _login(world.outsider).get(url)
    assert SECRET.lower() not in _body(response).lower()
    if name.startswith("staff:status"):  # the team's own imported metric is listed to the team
        assert f"{SECRET.lower()}metric" in _body(_login(world.owner).get(url))


def test_a_superuser_sees_every_campaign_and_a_campaign_without_team_only_they_do() -> None:
    world = build_world()
    orphan = make_campaign(slug="orphan", name="Orphan", team=None)
    boss = make_staff("boss", superuser=True, teams=())
    assert set(campaigns_for(boss).values_list("slug", flat=True)) == {SLUG, "c-larks", "orphan"}
    assert set(campaigns_for(world.owner).values_list("slug", flat=True)) == {SLUG}
    assert set(campaigns_for(world.outsider).values_list("slug", flat=True)) == {"c-larks"}
    assert _login(boss).get(f"/api/campaigns/{orphan.slug}/").status_code == 200
    assert _login(world.owner).get(f"/api/campaigns/{orphan.slug}/").status_code == 404
    assert _login(boss).get(reverse("staff:pairs", args=[SLUG])).status_code == 200


def test_the_queryset_and_the_object_permission_agree() -> None:
    """Two writings of one rule (a queryset for lists, django-rules for one object): the same answers."""
    world = build_world()
    make_campaign(slug="orphan", team=None)
    both = make_staff("both", teams=("Owls", "Larks"))
    nobody = make_staff("nobody", teams=())
    inactive = make_staff("inactive", teams=("Owls",))
    inactive.is_active = False
    inactive.save()
    not_staff = make_staff("not-staff", teams=("Owls",))
    not_staff.is_staff = False
    not_staff.save()
    boss = make_staff("boss", superuser=True, teams=())
    for user in (world.owner, world.outsider, both, nobody, inactive, not_staff, boss):
        for campaign in Campaign.objects.all():
            allowed = campaigns_for(user).filter(pk=campaign.pk).exists()
            assert user.has_perm(CAMPAIGN_PERMISSION, campaign) == allowed, (user.username, campaign.slug)
    assert campaigns_for(both).count() == 2
    assert not campaigns_for(inactive).exists() and not campaigns_for(not_staff).exists()


def test_admin_lists_only_the_teams_rows() -> None:
    world = build_world()
    for user in (world.owner, world.outsider):
        user.user_permissions.add(
            *__import__("django.contrib.auth.models", fromlist=["Permission"]).Permission.objects.filter(
                codename__in=["view_campaign", "change_campaign", "view_pair", "view_judgement", "view_score"]
            )
        )
    outsider, owner = _login(world.outsider), _login(world.owner)
    for url in [
        "/admin/annotate/campaign/",
        "/admin/annotate/pair/",
        "/admin/annotate/judgement/",
        "/admin/scoring/score/",
    ]:
        shown = _body(outsider.get(url))
        assert SECRET.lower() not in shown.lower(), url
        assert SECRET.lower() in _body(owner.get(url)).lower(), url
    change = f"/admin/annotate/campaign/{world.campaign.pk}/change/"
    assert outsider.get(change).status_code == 302  # "does not exist": back to the admin's index
    assert owner.get(change).status_code == 200
    # The team select offers the owner's teams only.
    assert "Larks" not in _body(owner.get(change))


def test_a_new_campaign_goes_to_the_creators_team() -> None:
    owl = make_staff("owl", teams=("Owls",))
    response = _login(owl).post("/api/campaigns/", {"slug": "fresh", "name": "Fresh"}, content_type="application/json")
    assert response.status_code == 201, response.content
    assert response.json()["team"] == "Owls"
    assert Campaign.objects.get(slug="fresh").team.name == "Owls"
    both = make_staff("both", teams=("Owls", "Larks"))
    refused = _login(both).post("/api/campaigns/", {"slug": "fresh2", "name": "F"}, content_type="application/json")
    assert refused.status_code == 400
    assert refused.json() == {"team": ["You are in several teams: choose the team that owns the campaign."]}
    lonely = make_staff("lonely", teams=())
    refused = _login(lonely).post("/api/campaigns/", {"slug": "fresh3", "name": "F"}, content_type="application/json")
    assert refused.json() == {"team": ["You are in no team: ask an administrator to add you to one (manage.py team)."]}
    assert not Campaign.objects.filter(slug__in=["fresh2", "fresh3"]).exists()


def test_the_settings_form_shows_and_keeps_the_campaigns_team() -> None:
    world = build_world()
    boss = make_staff("boss", superuser=True, teams=())
    owls = world.campaign.team
    assert owls is not None
    for user in (world.owner, boss):
        page = _body(_login(user).get(reverse("staff:campaign-settings", args=[SLUG])))
        assert f'<option value="{owls.pk}" selected>Owls</option>' in page
    # The owner is offered their own teams only; a superuser every team and "none".
    owner_page = _body(_login(world.owner).get(reverse("staff:campaign-settings", args=[SLUG])))
    assert "Larks" not in owner_page and "---------" not in owner_page.split('name="team"')[1].split("</select>")[0]


def test_a_clone_stays_in_its_team() -> None:
    world = build_world()
    response = _login(world.owner).post(reverse("staff:campaign-clone", args=[SLUG]), {"slug": "copy", "name": "C"})
    assert response.status_code == 302
    assert Campaign.objects.get(slug="copy").team.name == "Owls"


def test_the_team_command_creates_a_team_and_assigns_campaigns_and_members() -> None:
    make_campaign(slug="one", team=None)
    make_campaign(slug="two", team=None)
    make_staff("carol", teams=())
    out = io.StringIO()
    call_command("team", "nlp-lab", "--campaign", "one", "--campaign", "two", "--member", "carol", stdout=out)
    assert out.getvalue() == "Created team 'nlp-lab': campaigns given one, two; members added carol.\n"
    team = Group.objects.get(name="nlp-lab")
    assert set(team.campaigns.values_list("slug", flat=True)) == {"one", "two"}
    assert list(team.user_set.values_list("username", flat=True)) == ["carol"]
    with pytest.raises(CommandError, match=r"^Nothing changed: no campaign 'three'; no user 'dave'\.$"):
        call_command("team", "other", "--campaign", "three", "--campaign", "one", "--member", "dave")
    assert not Group.objects.filter(name="other").exists()
    assert Campaign.objects.get(slug="one").team == team


def test_team_choice_rules() -> None:
    make_team("Owls")
    boss = make_staff("boss", superuser=True, teams=())
    assert team_for_new_campaign(boss, None) is None
    assert team_for_new_campaign(boss, "Owls").name == "Owls"
    with pytest.raises(TeamError, match="No team named 'Nope'"):
        team_for_new_campaign(boss, "Nope")
    owl = make_staff("owl2", teams=("Larks",))
    with pytest.raises(TeamError, match="You are not a member of a team named 'Owls'"):
        team_for_new_campaign(owl, "Owls")
    with pytest.raises(TeamError, match="A team needs a name"):
        set_up_team("  ")


def test_the_migration_keeps_an_installation_usable() -> None:
    """Existing campaigns and staff go into one team: everyone sees what they saw before."""
    import importlib

    from django.apps import apps

    migration = importlib.import_module("annotate.migrations.0011_campaign_team")
    old = make_campaign(slug="old", team=None)
    alice = make_staff("alice", teams=())
    volunteer_account = __import__("django.contrib.auth", fromlist=["get_user_model"]).get_user_model()
    outsider = volunteer_account.objects.create_user("visitor", password="x")
    assert not campaigns_for(alice).exists()
    migration.existing_campaigns_to_everyone(apps, None)
    old.refresh_from_db()
    assert old.team is not None and old.team.name == EVERYONE_TEAM == migration.EVERYONE_TEAM
    assert list(campaigns_for(alice)) == [old]
    assert not outsider.groups.exists()


def test_the_apis_object_permission_is_a_second_lock() -> None:
    """Were a viewset's queryset to forget the teams, the object permission still answers 404."""
    from rest_framework.exceptions import NotFound
    from rest_framework.request import Request
    from rest_framework.test import APIRequestFactory

    from api.permissions import InCampaignTeam

    world = build_world()
    rows = [world.campaign, world.pair, world.judgement, world.score]
    for user, allowed in ((world.owner, True), (world.outsider, False)):
        request = Request(APIRequestFactory().get("/api/"))
        request.user = user
        for row in rows:
            if allowed:
                assert InCampaignTeam().has_object_permission(request, None, row)
            else:
                with pytest.raises(NotFound):
                    InCampaignTeam().has_object_permission(request, None, row)
    # Rows of no campaign (a metric configuration) are left to their queryset.
    request = Request(APIRequestFactory().get("/api/"))
    request.user = world.outsider
    assert InCampaignTeam().has_object_permission(request, None, world.config)
