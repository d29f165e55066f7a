"""A campaign's set-up from the browser: one settings form, a clone, a definition file."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils.html import escape

import paraeval
from annotate import definitions
from annotate.models import Campaign, Pair
from staff.forms import EXPLANATIONS
from tests.builders import make_campaign, make_judgement, make_pair, make_staff, make_training_pairs, make_volunteer

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client() -> Client:
    user = make_staff("setter", "x")
    client = Client()
    client.force_login(user)
    return client


def study() -> Campaign:
    campaign = make_campaign(
        slug="study",
        name="Study",
        description="Judge with care.",
        judges_per_pair=3,
        quota=20,
        check_positions="5, 15",
        exclude_failed_checks=2,
        platform="prolific",
        completion_code="C0DE",
    )
    make_training_pairs(campaign, 2)
    make_pair(campaign, source="Check A.", hypothesis="Check B.", is_check=True, expected_label="same_meaning")
    pair = make_pair(campaign, external_id="p1", source="A cat.", hypothesis="A feline.", gold_label=True, system="s1")
    make_judgement(pair=pair, volunteer=make_volunteer(campaign))
    return campaign


def test_the_settings_form_explains_each_setting_and_saves(staff_client: Client) -> None:
    campaign = study()
    page = staff_client.get("/staff/campaigns/study/settings/").content.decode()
    for name, line in EXPLANATIONS.items():
        assert f'<p class="muted small setting-help" id="help-{name}">{escape(line)}</p>' in page
    data = {
        "name": "Study 2",
        "slug": "ignored",
        "description": "Judge.",
        "language": "fr",
        "judges_per_pair": "5",
        "quota": "30",
        "reservation_minutes": "10",
        "check_positions": "",
        "check_every": "10",
        "exclude_failed_checks": "1",
        "exclude_median_seconds": "2.5",
        "exclude_same_answer_share": "0.9",
        "platform": "",
        "completion_code": "",
        "screened_out_code": "",
        "completion_url": "",
        "is_open": "",
    }
    response = staff_client.post("/staff/campaigns/study/settings/", data)
    assert response.status_code == 302
    campaign.refresh_from_db()
    assert (campaign.slug, campaign.name, campaign.language, campaign.judges_per_pair, campaign.quota) == (
        "study",
        "Study 2",
        "fr",
        5,
        30,
    )
    assert (campaign.check_every, campaign.exclude_median_seconds, campaign.is_open) == (10, 2.5, False)
    response = staff_client.post("/staff/campaigns/study/settings/", {**data, "judges_per_pair": "0"})
    assert response.status_code == 400
    assert "Ensure this value is greater than or equal to 1." in response.content.decode()
    response = staff_client.post("/staff/campaigns/study/settings/", {**data, "check_positions": "5, x"})
    assert "&#x27;x&#x27; is not a position (a whole number from 1)" in response.content.decode()


def test_a_clone_copies_settings_training_and_checks_never_volunteers(staff_client: Client) -> None:
    study()
    response = staff_client.post("/staff/campaigns/study/clone/", {"slug": "study-2", "name": "Study again"})
    assert response.status_code == 302
    assert response["Location"] == "/staff/campaigns/study-2/settings/?cloned=study"
    clone = Campaign.objects.get(slug="study-2")
    assert clone.name == "Study again"
    for name in definitions.SETTINGS_FIELDS:
        if name != "name":
            assert getattr(clone, name) == getattr(Campaign.objects.get(slug="study"), name), name
    rows = list(Pair.objects.filter(campaign=clone).values_list("is_training", "is_check", "source"))
    original = Pair.objects.filter(campaign__slug="study").exclude(external_id="p1").order_by("id")
    assert rows == list(original.values_list("is_training", "is_check", "source"))
    assert clone.volunteers.count() == 0

    staff_client.post("/staff/campaigns/study/clone/", {"slug": "study-3", "name": "", "include_pairs": "on"})
    copied = Pair.objects.get(campaign__slug="study-3", external_id="p1")
    assert (copied.source, copied.gold_label, copied.system, copied.judgement_count) == ("A cat.", True, "s1", 0)

    response = staff_client.post("/staff/campaigns/study/clone/", {"slug": "study-2"})
    assert response.status_code == 400
    assert "a campaign &#x27;study-2&#x27; exists already: choose another slug" in response.content.decode()
    assert staff_client.post("/staff/campaigns/study/clone/", {"slug": "no spaces"}).status_code == 400


def test_the_definition_file_round_trips_and_names_its_version(staff_client: Client) -> None:
    study()
    response = staff_client.get("/staff/campaigns/study/definition.json?pairs=1")
    assert response["Content-Disposition"] == 'attachment; filename="study-definition.json"'
    data = json.loads(response.content)
    assert data["kind"] == "paraeval.campaign-definition"
    assert data["paraeval_version"] == paraeval.__version__
    assert len(data["pairs"]) == 4
    upload = SimpleUploadedFile("study-definition.json", response.content, content_type="application/json")
    response = staff_client.post("/staff/campaigns/new/from-definition/", {"definition": upload, "slug": "elsewhere"})
    assert response.status_code == 302
    assert response["Location"] == f"/staff/campaigns/elsewhere/settings/?imported=4&written_by={paraeval.__version__}"
    again = json.loads(staff_client.get("/staff/campaigns/elsewhere/definition.json?pairs=1").content)
    assert again["pairs"] == data["pairs"]
    assert again["campaign"] == {**data["campaign"], "slug": "elsewhere"}


def test_a_bad_definition_is_refused_whole_with_every_reason(staff_client: Client) -> None:
    data = definitions.definition(study(), include_pairs=True)
    data["campaign"]["judges_per_pair"] = 0
    data["campaign"]["colour"] = "blue"
    upload = SimpleUploadedFile("d.json", json.dumps(data).encode())
    response = staff_client.post("/staff/campaigns/new/from-definition/", {"definition": upload, "slug": "bad"})
    assert response.status_code == 400
    assert "unknown campaign settings: colour" in response.content.decode()
    data["pairs"][3]["hypothesis"] = ""
    # Every reason at once: the unknown setting, the bad value and the bad pair.
    with pytest.raises(definitions.DefinitionError) as refused:
        definitions.load(data, slug="bad")
    assert refused.value.problems == [
        "unknown campaign settings: colour",
        "judges_per_pair: Ensure this value is greater than or equal to 1.",
        "pair line 4: hypothesis is empty",
    ]
    assert not Campaign.objects.filter(slug="bad").exists()
    del data["campaign"]["colour"]
    data["campaign"]["judges_per_pair"] = 2
    with pytest.raises(definitions.DefinitionError) as refused:
        definitions.load(data, slug="bad")
    assert refused.value.problems == ["pair line 4: hypothesis is empty"]
    assert not Campaign.objects.filter(slug="bad").exists()
    upload = SimpleUploadedFile("d.json", b"{not json")
    response = staff_client.post("/staff/campaigns/new/from-definition/", {"definition": upload, "slug": "bad2"})
    assert response.status_code == 400
    assert "the file is not JSON" in response.content.decode()


def test_the_version_is_pyprojects() -> None:
    project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())
    assert paraeval.__version__ == project["project"]["version"]


def test_a_new_campaign_leads_to_the_upload(staff_client: Client) -> None:
    response = staff_client.post(
        "/staff/campaigns/new/",
        {
            "name": "Mine",
            "slug": "mine",
            "language": "en",
            "judges_per_pair": "2",
            "quota": "10",
            "reservation_minutes": "15",
            "exclude_failed_checks": "1",
            "platform": "",
        },
    )
    assert response.status_code == 302
    assert response["Location"] == "/staff/campaigns/mine/upload/"
    assert Campaign.objects.get(slug="mine").judges_per_pair == 2


def test_progress_counts_judgements_against_targets(staff_client: Client) -> None:
    import datetime

    from django.utils import timezone

    from annotate.models import Assignment
    from annotate.progress import campaign_progress

    campaign = make_campaign(slug="prog", judges_per_pair=2, quota=3)
    make_training_pairs(campaign, 1)
    make_pair(campaign, is_check=True, expected_label="same_meaning")
    pairs = [make_pair(campaign, external_id=f"q{i}") for i in range(5)]
    volunteers = [make_volunteer(campaign) for _ in range(3)]
    now = timezone.now()
    # Pair 0: three answers (one beyond its target of 2); pair 1: one, two hours ago; pair 2: one.
    for volunteer in volunteers:
        make_judgement(pair=pairs[0], volunteer=volunteer)
    old = make_judgement(pair=pairs[1], volunteer=volunteers[0])
    type(old).objects.filter(pk=old.pk).update(answered_at=now - datetime.timedelta(hours=2))
    make_judgement(pair=pairs[2], volunteer=volunteers[1])
    Pair.objects.filter(pk=pairs[0].pk).update(judgement_count=3)
    Pair.objects.filter(pk__in=[pairs[1].pk, pairs[2].pk]).update(judgement_count=1)
    Assignment.objects.create(
        volunteer=volunteers[2], pair=pairs[3], source_on_top=True, expires_at=now + datetime.timedelta(minutes=5)
    )
    Assignment.objects.create(
        volunteer=volunteers[2], pair=pairs[4], source_on_top=True, expires_at=now - datetime.timedelta(minutes=5)
    )
    result = campaign_progress(campaign, now=now)
    # Target 10; counted 2 + 1 + 1 = 4; missing 10 - 4 - 1 reserved = 5 -> 2 places of 3 pairs.
    assert (result.pairs, result.target, result.judged, result.pairs_lacking) == (5, 10, 4, 4)
    assert (result.reserved_now, result.places_left, result.last_hour, result.state) == (1, 2, 4, "open")
    assert result.hours_left == pytest.approx(6 / 4)
    page = staff_client.get("/staff/campaigns/prog/settings/").content.decode()
    assert "4 of 10 judgements (40%)" in page
    assert '<dd data-count="eta">1.5 h at this rate</dd>' in page
    campaign.is_open = False
    campaign.save()
    assert campaign_progress(campaign, now=now).state == "closed"
    campaign.is_open = True
    campaign.save()
    Pair.objects.filter(campaign=campaign, is_training=False, is_check=False).update(judgement_count=2)
    done = campaign_progress(campaign, now=now)
    assert (done.judged, done.places_left, done.state) == (10, 0, "full")


def test_the_form_holds_every_setting_the_study_needs(staff_client: Client, settings) -> None:
    """Platform (plain link, Prolific, both), closing when full, public or not — each
    with its line — and saved from the form; the home page invites to the public campaign."""
    settings.PARAEVAL_PUBLIC_CAMPAIGN = ""
    study()
    other = make_campaign(slug="other", name="Other", is_public=True)
    make_pair(other)  # the home page invites only to a campaign with pairs to judge
    page = staff_client.get("/staff/campaigns/study/settings/").content.decode()
    for name in ("platform", "accepts_plain_link", "close_when_full", "is_public", "session_param"):
        assert f'data-setting="{name}"' in page and f'id="help-{name}"' in page
    form = {
        "name": "Study",
        "description": "",
        "language": "en",
        "judges_per_pair": "3",
        "quota": "20",
        "reservation_minutes": "20",
        "check_positions": "5, 15",
        "exclude_failed_checks": "1",
        "platform": "prolific",
        "accepts_plain_link": "on",  # Prolific participants and lab volunteers at once
        "participant_param": "PROLIFIC_PID",
        "study_param": "STUDY_ID",
        "session_param": "SESSION_ID",
        "completion_code": "C0DE",
        "completion_url": "https://app.prolific.com/submissions/complete?cc={code}",
        "is_open": "on",
        "close_when_full": "on",
        "is_public": "on",
    }
    assert staff_client.post("/staff/campaigns/study/settings/", form).status_code == 302
    campaign = Campaign.objects.get(slug="study")
    assert (campaign.platform, campaign.accepts_plain_link, campaign.close_when_full) == ("prolific", True, True)
    # One public campaign at a time: the other one is no longer public.
    assert campaign.is_public and not Campaign.objects.get(pk=other.pk).is_public
    assert '<dd data-count="public">yes</dd>' in staff_client.get("/staff/campaigns/study/settings/").content.decode()
    assert 'href="/c/study/"' in Client().get("/").content.decode()
    # The deployment's setting wins over the form, and the settings page says so.
    settings.PARAEVAL_PUBLIC_CAMPAIGN = "other"
    page = staff_client.get("/staff/campaigns/study/settings/").content.decode()
    assert '<dd data-count="public">no</dd>' in page and "<code>other</code>" in page
    assert 'href="/c/other/"' in Client().get("/").content.decode()
    # Platform and closing travel with a clone and a definition file; being public does not.
    staff_client.post("/staff/campaigns/study/clone/", {"slug": "study-copy", "name": ""})
    copy = Campaign.objects.get(slug="study-copy")
    assert (copy.accepts_plain_link, copy.close_when_full, copy.is_public) == (True, True, False)


def test_progress_says_full_exactly_when_the_welcome_page_does() -> None:
    """One definition of "full": the settings page's progress counts
    reservations as the allocator does, so pairs held by scripts that never answered (past the
    grace period, they yield to a newcomer) leave the campaign open there as on the welcome page."""
    import datetime

    from django.utils import timezone

    from annotate import allocation
    from annotate.progress import campaign_progress

    campaign = make_campaign(slug="held", judges_per_pair=1, quota=5)
    for _ in range(2):
        make_pair(campaign)
    served = timezone.now() - datetime.timedelta(seconds=90)  # past the 60 s grace period
    for _ in range(2):
        assert allocation.next_assignment(make_volunteer(campaign), now=served).assignment is not None
    progress = campaign_progress(campaign)
    assert not allocation.openness(campaign).is_full
    assert (progress.state, progress.reserved_now, progress.places_left) == ("open", 0, 1)
    # Within the grace period the same reservations hold: full on both pages.
    for volunteer in campaign.volunteers.all():
        volunteer.assignments.update(shown_at=timezone.now())
    assert allocation.openness(campaign).is_full and campaign_progress(campaign).state == "full"
