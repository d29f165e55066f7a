"""The volunteer flow over HTTP (Django's test client): what a volunteer can and cannot do."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotate.guidelines import EXAMPLES, INTRODUCTION
from annotate.labels import LABEL_DISPLAY, LABEL_ORDER
from annotate.models import Assignment, Campaign, Judgement, Pair, Volunteer
from annotate.views import cookie_name
from tests.builders import make_campaign, make_pair, make_training_pairs
from tests.pair_page import item_of, pair_id_on_page

pytestmark = pytest.mark.django_db


def campaign_with(pool: int = 6, training: int = 3, **fields: object) -> Campaign:
    campaign = make_campaign(**{"quota": 4, **fields})
    make_training_pairs(campaign, training)
    for _ in range(pool):
        make_pair(campaign)
    return campaign


def start(client: Client, campaign: Campaign, level: str = "advanced") -> Volunteer:
    response = client.post(reverse("annotate:welcome", args=[campaign.slug]), {"consent": "on", "english_level": level})
    assert response.status_code == 302
    volunteer = Volunteer.objects.get(campaign=campaign, token=response.url.split("/")[2])
    assert response.url == f"/v/{volunteer.token}/"
    # The guidelines step comes first, once.
    assert client.get(response.url).url == f"/v/{volunteer.token}/guidelines/"
    assert client.post(f"/v/{volunteer.token}/guidelines/").url == f"/v/{volunteer.token}/"
    return volunteer


def current_pair_id(client: Client, volunteer: Volunteer) -> int:
    response = client.get(f"/v/{volunteer.token}/")
    assert response.status_code == 200, response
    return pair_id_on_page(response.content.decode(), volunteer)


def sentences_of(page: str) -> str:
    """The two sentences as shown (top first), highlights included."""
    return "|".join(re.findall(r'<p class="sentence-text" lang="en">(.*?)</p>', page))


def post_answer(client: Client, volunteer: Volunteer, pair_id: int, label: str = "same_meaning"):
    return client.post(f"/v/{volunteer.token}/answer/", {"pair": item_of(volunteer, pair_id), "label": label})


def finish_training(client: Client, volunteer: Volunteer, count: int) -> None:
    for _ in range(count):
        response = post_answer(client, volunteer, current_pair_id(client, volunteer))
        assert "/training/" in response.url
    if count == 0:
        return
    # After the last training pair, the page that says the training is over, once.
    assert client.get(f"/v/{volunteer.token}/").url == f"/v/{volunteer.token}/training-done/"
    assert client.post(f"/v/{volunteer.token}/training-done/").url == f"/v/{volunteer.token}/"


def test_welcome_page_explains_the_task_its_length_and_asks_consent_and_level(client: Client) -> None:
    campaign = campaign_with(pool=60, training=5, quota=50, name="Paraphrase study")
    page = client.get(f"/c/{campaign.slug}/").content.decode()
    assert "Paraphrase study" in page
    assert "5 training pairs" in page and "50 pairs" in page and "55 in all" in page
    assert "minutes" in page
    assert 'type="checkbox" name="consent"' in page
    for level in ("poor", "good", "advanced", "native"):
        assert f'value="{level}"' in page
    assert "csrfmiddlewaretoken" in page


def test_an_empty_campaign_says_so_instead_of_starting(client: Client) -> None:
    campaign = make_campaign()
    page = client.get(f"/c/{campaign.slug}/").content.decode()
    assert "There is nothing to judge in this campaign yet." in page
    assert 'name="consent"' not in page


def test_consent_and_level_are_required_and_nothing_is_stored_without_them(client: Client) -> None:
    campaign = campaign_with()
    url = f"/c/{campaign.slug}/"
    missing_consent = client.post(url, {"english_level": "good"})
    assert missing_consent.status_code == 400
    assert "Please tick the consent box" in missing_consent.content.decode()
    bad_level = client.post(url, {"consent": "on", "english_level": "fluent-ish"})
    assert bad_level.status_code == 400
    assert "Please choose one of the four levels" in bad_level.content.decode()
    assert not Volunteer.objects.exists()


def test_starting_stores_the_level_sets_a_cookie_and_the_campaign_link_resumes(client: Client) -> None:
    campaign = campaign_with()
    volunteer = start(client, campaign, level="native")
    assert volunteer.english_level == "native"
    assert volunteer.consented_at is not None
    cookie = client.cookies[cookie_name(campaign)]
    assert cookie.value == volunteer.token and cookie["httponly"]
    assert len(volunteer.token) >= 40  # 256 random bits, URL-safe
    again = client.get(f"/c/{campaign.slug}/")
    assert again.status_code == 302 and again.url == f"/v/{volunteer.token}/"
    assert Volunteer.objects.count() == 1


def test_the_pair_page_shows_progress_both_sentences_and_the_five_buttons_in_order(client: Client) -> None:
    campaign = campaign_with(pool=10, training=3, quota=4)
    volunteer = start(client, campaign)
    page = client.get(f"/v/{volunteer.token}/").content.decode()
    assert "Pair 1 of 7" in page
    assert "Training 1 of 3" in page
    buttons = re.findall(r'<button type="submit" name="label" value="(\w+)"', page)
    assert buttons == [label.value for label in LABEL_ORDER]
    displays = re.findall(r'<span class="answer-text">([^<]+)</span>', page)
    assert displays == ["Very different", "Slightly similar", "Mostly similar", "Same meaning", "Don&#x27;t know"]
    assert page.count("answer--dont-know") == 1
    assert re.findall(r'data-key="(\d)"', page) == ["1", "2", "3", "4", "5"]
    assert page.count('class="sentence-text"') >= 2
    assert 'id="guidelines-dialog"' in page and "data-guidelines-open" in page


def test_a_campaign_answer_has_no_training_feedback(client: Client) -> None:
    """The feedback page shows training answers only: a campaign pair's answer is not found."""
    campaign = campaign_with(training=1)
    volunteer = start(client, campaign)
    finish_training(client, volunteer, 1)
    pair_id = current_pair_id(client, volunteer)
    post_answer(client, volunteer, pair_id)
    assert Judgement.objects.filter(volunteer=volunteer, pair_id=pair_id, is_training=False).exists()
    assert client.get(f"/v/{volunteer.token}/training/{pair_id}/").status_code == 404


def test_the_progress_total_is_capped_by_a_small_pool(client: Client) -> None:
    campaign = campaign_with(pool=2, training=1, quota=50)
    volunteer = start(client, campaign)
    assert "Pair 1 of 3" in client.get(f"/v/{volunteer.token}/").content.decode()


def test_training_answers_show_the_expected_answer_and_explanation(client: Client) -> None:
    campaign = campaign_with(training=2)
    first = Pair.objects.get(campaign=campaign, training_position=1)
    Pair.objects.filter(pk=first.pk).update(
        expected_label="mostly_similar", explanation="Water is not milk & <b>x</b>."
    )
    volunteer = start(client, campaign)
    assert current_pair_id(client, volunteer) == first.pk
    response = post_answer(client, volunteer, first.pk, "very_different")
    assert response.url == f"/v/{volunteer.token}/training/{first.pk}/"
    page = client.get(response.url).content.decode()
    assert "The expected answer was different." in page
    assert "Very different" in page and "Mostly similar" in page
    assert "Water is not milk &amp; &lt;b&gt;x&lt;/b&gt;." in page
    assert f'action="/v/{volunteer.token}/"' in page  # Continue
    judgement = Judgement.objects.get(volunteer=volunteer, pair=first)
    assert judgement.is_training and judgement.label == "very_different"
    # The right answer is acknowledged as such.
    second = current_pair_id(client, volunteer)
    expected = Pair.objects.get(pk=second).expected_label
    page = client.get(post_answer(client, volunteer, second, expected).url).content.decode()
    assert "Well done" in page


def test_a_reload_resumes_the_same_pair_with_the_same_order(client: Client) -> None:
    campaign = campaign_with(training=1)
    volunteer = start(client, campaign)
    finish_training(client, volunteer, 1)
    first_view = sentences_of(client.get(f"/v/{volunteer.token}/").content.decode())
    pair_id = current_pair_id(client, volunteer)
    assert sentences_of(client.get(f"/v/{volunteer.token}/").content.decode()) == first_view
    # A new browser with only the link resumes too.
    other_browser = Client()
    assert current_pair_id(other_browser, volunteer) == pair_id
    assert Assignment.objects.filter(volunteer=volunteer, answered_at__isnull=True).count() == 1


def test_a_double_post_stores_one_judgement(client: Client) -> None:
    campaign = campaign_with(training=0)
    volunteer = start(client, campaign)
    pair_id = current_pair_id(client, volunteer)
    first = post_answer(client, volunteer, pair_id, "mostly_similar")
    second = post_answer(client, volunteer, pair_id, "very_different")
    assert first.status_code == second.status_code == 302
    assert Judgement.objects.filter(volunteer=volunteer, pair_id=pair_id).count() == 1
    assert Judgement.objects.get(volunteer=volunteer, pair_id=pair_id).label == "mostly_similar"
    assert "Pair 2 of 4" in client.get(f"/v/{volunteer.token}/").content.decode()


def test_a_volunteer_cannot_touch_another_volunteers_data(client: Client) -> None:
    campaign = campaign_with(training=1)
    me = start(client, campaign)
    them = start(Client(), campaign)
    their_pair = current_pair_id(Client(), them)
    my_pair = current_pair_id(client, me)
    finish_training(Client(), them, 0)
    # Unknown tokens are 404 on every volunteer page.
    for url in ("/v/not-a-real-token/", "/v/not-a-real-token/done/", "/v/not-a-real-token/training/1/"):
        assert client.get(url).status_code == 404
    assert client.post("/v/not-a-real-token/answer/", {"pair": my_pair, "label": "same_meaning"}).status_code == 404
    # Answering a pair through my token that is only assigned to them: 404, nothing stored.
    campaign_pairs = Pair.objects.filter(campaign=campaign, is_training=False)
    someone_elses = campaign_pairs.exclude(assignments__volunteer=me).first()
    Assignment.objects.create(volunteer=them, pair=someone_elses, source_on_top=True, expires_at="2099-01-01T00:00:00Z")
    assert post_answer(client, me, someone_elses.pk).status_code == 404
    assert not Judgement.objects.filter(pair=someone_elses).exists()
    # Their training feedback is not mine to read.
    post_answer(Client(), them, their_pair)
    assert client.get(f"/v/{me.token}/training/{their_pair}/").status_code == 404
    # A cookie of mine does not resume their session, and theirs does not resume mine.
    assert client.get(f"/c/{campaign.slug}/").url == f"/v/{me.token}/"


def test_csrf_is_enforced(client: Client) -> None:
    campaign = campaign_with()
    strict = Client(enforce_csrf_checks=True)
    assert strict.post(f"/c/{campaign.slug}/", {"consent": "on", "english_level": "good"}).status_code == 403
    volunteer = start(client, campaign)
    pair_id = current_pair_id(client, volunteer)
    assert strict.post(f"/v/{volunteer.token}/answer/", {"pair": pair_id, "label": "same_meaning"}).status_code == 403
    assert not Judgement.objects.exists()


def test_an_invalid_answer_is_refused_with_a_message(client: Client) -> None:
    campaign = campaign_with()
    volunteer = start(client, campaign)
    pair_id = current_pair_id(client, volunteer)
    response = post_answer(client, volunteer, pair_id, "pretty_close")
    assert response.status_code == 400
    assert "That is not one of the five answers." in response.content.decode()
    assert client.post(f"/v/{volunteer.token}/answer/", {"label": "same_meaning"}).status_code == 400
    assert not Judgement.objects.exists()
    assert client.get(f"/v/{volunteer.token}/answer/").status_code == 405


def test_the_end_page_when_the_pool_runs_out_before_the_quota(client: Client) -> None:
    campaign = campaign_with(pool=2, training=1, quota=10)
    volunteer = start(client, campaign)
    finish_training(client, volunteer, 1)
    for _ in range(2):
        response = post_answer(client, volunteer, current_pair_id(client, volunteer))
        assert response.url == f"/v/{volunteer.token}/"
    done = client.get(f"/v/{volunteer.token}/")
    assert done.status_code == 302 and done.url == f"/v/{volunteer.token}/done/"
    page = client.get(done.url).content.decode()
    assert "Thank you!" in page and "earlier than planned" in page
    assert "You judged <strong>2 pairs</strong>" in page
    volunteer.refresh_from_db()
    assert volunteer.finished_at is not None
    # The next volunteer is told at once that the study is full, before any training
    # (test_campaign_full_and_sessions covers it in depth).
    page = Client().get(f"/c/{campaign.slug}/").content.decode()
    assert "This study is full" in page


def test_the_end_page_after_the_quota(client: Client) -> None:
    campaign = campaign_with(pool=5, training=0, quota=2)
    volunteer = start(client, campaign)
    for _ in range(2):
        post_answer(client, volunteer, current_pair_id(client, volunteer))
    page = client.get(client.get(f"/v/{volunteer.token}/").url).content.decode()
    assert "You have answered every pair of your session." in page
    assert client.get(f"/v/{start(Client(), campaign).token}/done/").status_code == 302  # not finished yet


def test_a_closed_campaign_refuses_newcomers_politely_but_lets_volunteers_finish(client: Client) -> None:
    campaign = campaign_with()
    started = start(client, campaign)
    Campaign.objects.filter(pk=campaign.pk).update(is_open=False)
    newcomer = Client()
    page = newcomer.get(f"/c/{campaign.slug}/")
    assert page.status_code == 200 and "This campaign is closed" in page.content.decode()
    refused = newcomer.post(f"/c/{campaign.slug}/", {"consent": "on", "english_level": "good"})
    assert "This campaign is closed" in refused.content.decode()
    assert Volunteer.objects.count() == 1
    assert current_pair_id(client, started)
    assert client.get("/c/no-such-campaign/").status_code == 404


def test_guidelines_page_has_the_papers_text_and_five_examples(client: Client) -> None:
    campaign = campaign_with()
    page = client.get(f"/c/{campaign.slug}/guidelines/").content.decode()
    assert INTRODUCTION in page
    assert [example.label for example in EXAMPLES] == list(LABEL_ORDER)
    positions = []
    for example in EXAMPLES:
        explanation = example.explanation.replace("'", "&#x27;")
        assert explanation in page
        assert LABEL_DISPLAY[example.label].replace("'", "&#x27;") in page
        positions.append(page.index(explanation))
    assert positions == sorted(positions)
    assert '<mark class="diff">drinks water</mark>' in page  # examples are highlighted too


def test_sentences_with_html_are_shown_as_text(client: Client) -> None:
    campaign = make_campaign(quota=2)
    make_pair(campaign, source="<script>alert(1)</script> Tom & Jerry", hypothesis="Tom & Jerry <i>run</i>")
    volunteer = start(client, campaign)
    page = client.get(f"/v/{volunteer.token}/").content.decode()
    assert "<script>alert" not in page and "<i>run" not in page
    assert "Tom &amp; Jerry" in page and "&lt;" in page


def test_the_pair_page_and_the_answer_use_few_queries(client: Client, django_assert_max_num_queries) -> None:
    campaign = campaign_with(pool=200, training=0, quota=10)
    volunteer = start(client, campaign)
    # Whatever the pool size (a savepoint pair stands for BEGIN/COMMIT inside the test).
    # (The test's own look-ups of the pair behind the page's item number stay outside.)
    with django_assert_max_num_queries(12):
        page = client.get(f"/v/{volunteer.token}/").content.decode()
    pair_id = pair_id_on_page(page, volunteer)
    item = item_of(volunteer, pair_id)
    with django_assert_max_num_queries(8):  # 7 + the item number's pair
        client.post(f"/v/{volunteer.token}/answer/", {"pair": item, "label": "same_meaning"})
    next_pair = current_pair_id(client, volunteer)
    with django_assert_max_num_queries(7):  # a reload resumes the open assignment
        page = client.get(f"/v/{volunteer.token}/").content.decode()
    assert pair_id_on_page(page, volunteer) == next_pair != pair_id
