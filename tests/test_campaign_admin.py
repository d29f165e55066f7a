"""Staff manage campaigns in the Django admin: link, counts, open/close, read-only answers."""

from __future__ import annotations

import pytest
from django.test import Client

from annotate.models import Campaign, Pair
from tests.builders import make_campaign, make_judgement, make_pair, make_training_pairs, make_volunteer

pytestmark = pytest.mark.django_db


def test_the_campaign_list_shows_the_volunteer_link_and_counts(admin_client: Client, settings) -> None:
    settings.SITE_URL = "https://paraeval.example.org"
    campaign = make_campaign(slug="spring", name="Spring study")
    make_training_pairs(campaign, 2)
    pairs = [make_pair(campaign) for _ in range(3)]
    volunteers = [make_volunteer(campaign) for _ in range(2)]
    for volunteer in volunteers:
        make_judgement(pairs[0], volunteer)
    make_judgement(Pair.objects.filter(campaign=campaign, is_training=True).first(), volunteers[0])
    response = admin_client.get("/admin/annotate/campaign/")
    page = response.content.decode()
    assert '<a href="https://paraeval.example.org/c/spring/"' in page
    (shown,) = response.context["cl"].result_list
    admin = response.context["cl"].model_admin
    # 3 pairs, 2 training pairs, 2 volunteers, 2 judgements (the training answer does not count)
    counts = [admin.pair_total(shown), admin.training_total(shown), admin.volunteer_total(shown)]
    assert [*counts, admin.judgement_total(shown)] == [3, 2, 2, 2]
    assert '<td class="field-judgement_total">2</td>' in page
    detail = admin_client.get(f"/admin/annotate/campaign/{campaign.pk}/change/").content.decode()
    assert "https://paraeval.example.org/c/spring/" in detail


def test_staff_open_and_close_campaigns(admin_client: Client) -> None:
    campaign = make_campaign()
    response = admin_client.post(
        "/admin/annotate/campaign/",
        {"action": "close_campaigns", "_selected_action": [campaign.pk]},
        follow=True,
    )
    assert "1 campaign(s) closed." in response.content.decode()
    campaign.refresh_from_db()
    assert not campaign.is_open
    admin_client.post("/admin/annotate/campaign/", {"action": "open_campaigns", "_selected_action": [campaign.pk]})
    campaign.refresh_from_db()
    assert campaign.is_open


def test_recount_action_repairs_counters(admin_client: Client) -> None:
    campaign = make_campaign(judges_per_pair=2)
    pair = make_pair(campaign)
    make_judgement(pair)
    Pair.objects.filter(pk=pair.pk).update(judgement_count=5)
    admin_client.post("/admin/annotate/campaign/", {"action": "recount", "_selected_action": [campaign.pk]})
    pair.refresh_from_db()
    assert pair.judgement_count == 1


def test_every_annotate_page_renders_and_judgements_are_read_only(admin_client: Client) -> None:
    campaign = make_campaign()
    pair = make_pair(campaign, origin="mrpc")
    judgement = make_judgement(pair)
    for url in (
        "/admin/annotate/campaign/add/",
        "/admin/annotate/pair/?is_training__exact=0&origin=mrpc",
        f"/admin/annotate/pair/?q=quenches&campaign__id__exact={campaign.pk}",
        f"/admin/annotate/pair/{pair.pk}/change/",
        "/admin/annotate/volunteer/",
        "/admin/annotate/judgement/",
        f"/admin/annotate/judgement/{judgement.pk}/change/",
        "/admin/annotate/assignment/",
    ):
        assert admin_client.get(url).status_code == 200, url
    assert admin_client.get("/admin/annotate/judgement/add/").status_code == 403
    before = judgement.label
    admin_client.post(f"/admin/annotate/judgement/{judgement.pk}/change/", {"label": "very_different"})
    judgement.refresh_from_db()
    assert judgement.label == before
    assert admin_client.get(f"/admin/annotate/judgement/{judgement.pk}/delete/").status_code == 403


def test_the_admin_needs_staff(client: Client) -> None:
    make_campaign()
    response = client.get("/admin/annotate/campaign/")
    assert response.status_code == 302 and "/admin/login/" in response.url
    assert Campaign.objects.count() == 1
