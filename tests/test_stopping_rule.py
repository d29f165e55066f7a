"""The stopping rule in a campaign: the question fixed before the first judgement, the
dashboard's line (exact words), the record written once by the task queued after each
judgement, and the campaign closing itself when its rule says so."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.urls import reverse
from django.utils import timezone

from annotate.models import Campaign, Judgement, Pair
from annotate.signals import judgement_recorded
from paraeval import broker
from scoring.analysis import sequential
from scoring.models import Score, StoppingRule
from scoring.reports import stopping, stopping_queue, tasks
from tests.builders import make_campaign, make_metric_config, make_staff, make_volunteer

pytestmark = pytest.mark.django_db


def judged_campaign(n: int = 120, *, separated: bool = True, judges: int = 1, poor_signal: float = 0.0, **fields):
    """n pairs, half paraphrases, judged by ``judges`` volunteers each (all agree with the truth)
    one minute apart in a shuffled order; metric "good" follows the truth, "poor" is noise with
    ``poor_signal`` times the truth added (or a copy of "good" up to a constant when not ``separated``)."""
    rng = np.random.default_rng(sequential.MIN_PER_CLASS)
    campaign = make_campaign(judges_per_pair=judges, **fields)
    good = make_metric_config("good", label="Good")
    poor = make_metric_config("poor", label="Poor")
    truth = np.arange(n) % 2 == 0
    pairs = Pair.objects.bulk_create(
        Pair(campaign=campaign, external_id=f"p{i}", source=f"s{i}", hypothesis=f"h{i}", origin="t") for i in range(n)
    )
    good_values = truth + rng.normal(0, 0.3, n)
    poor_values = poor_signal * truth + rng.normal(0, 1, n) if separated else good_values + 1
    Score.objects.bulk_create(
        [
            Score(pair=p, metric_config=good, value=float(v), status=Score.Status.DONE)
            for p, v in zip(pairs, good_values, strict=True)
        ]
        + [
            Score(pair=p, metric_config=poor, value=float(v), status=Score.Status.DONE)
            for p, v in zip(pairs, poor_values, strict=True)
        ]
    )
    volunteers = [make_volunteer(campaign) for _ in range(judges)]
    start = timezone.now() - timedelta(days=1)
    rows = []
    for step, i in enumerate(rng.permutation(n)):
        for j, volunteer in enumerate(volunteers):
            moment = start + timedelta(minutes=step * judges + j)
            label = "same_meaning" if truth[i] else "very_different"
            rows.append(
                Judgement(
                    volunteer=volunteer,
                    pair=pairs[i],
                    label=label,
                    source_on_top=True,
                    shown_at=moment,
                    answered_at=moment,
                )
            )
    return campaign, good, poor, rows


def test_the_rule_settles_records_once_and_closes_the_campaign():
    campaign, good, poor, rows = judged_campaign()
    rule = stopping.set_rule(campaign, poor, good, 0.05, 100, close_when_settled=True)
    Judgement.objects.bulk_create(rows)
    assert tasks.check_settled(campaign.pk) is True
    rule.refresh_from_db()
    campaign.refresh_from_db()
    assert not campaign.is_open
    verdict = stopping.campaign_verdict(campaign, rule)
    assert verdict.settled is not None and verdict.better == good.pk
    assert rule.settled_judgements == verdict.settled.judgements
    assert rule.settled_pairs == verdict.settled.pairs
    assert rule.settled_difference == pytest.approx(verdict.settled.difference)
    assert rule.settled_difference < 0 and rule.settled_high < 0  # A = Poor, B = Good
    assert rule.closed_at == rule.settled_at is not None
    signed = stopping._signed
    line = (
        f"Settled: Good agrees better than Poor (\u0394AUC {signed(-rule.settled_difference)}, always-valid 95 % "
        f"interval [{signed(-rule.settled_high)}, {signed(-rule.settled_low)}]) "
        f"after {rule.settled_judgements} judgements."
    )
    assert rule.reason == f"Closed by the stopping rule: {line}"
    # The first 40 pairs cannot settle it (20 of each class first), and it settles well before the end.
    assert 40 <= rule.settled_pairs < 120
    # Twice: nothing more happens, the record stays.
    recorded = rule.settled_at
    assert tasks.check_settled(campaign.pk) is False
    rule.refresh_from_db()
    assert rule.settled_at == recorded
    # The staff page shows the record.
    client = _staff_client(campaign)
    page = client.get(reverse("staff:campaign-settings", args=[campaign.slug])).content.decode()
    assert f"after {rule.settled_judgements} judgements ({rule.settled_pairs} labelled pairs)" in page
    assert "Closed by the stopping rule: Settled: Good agrees better than Poor" in page


def test_a_group_sequential_rule_settles_only_at_a_planned_look():
    campaign, good, poor, rows = judged_campaign()
    rule = stopping.set_rule(
        campaign, poor, good, 0.05, 100, close_when_settled=True, method="group_sequential", looks=5
    )
    assert (rule.method, rule.looks) == ("group_sequential", 5)
    plan = stopping.question_of(rule).group_sequential()
    assert plan.max_pairs == 103 and plan.looks == (21, 41, 62, 82, 103)
    # Before the second look (41 pairs) nothing can settle, however separated the metrics are.
    Judgement.objects.bulk_create(rows[:40])
    assert tasks.check_settled(campaign.pk) is False
    line = stopping.words(rule, stopping.campaign_verdict(campaign, rule))
    assert line.text.startswith(
        "Not settled yet (group-sequential plan): the plan decides only at its looks; next: look 2 of 5 at 41 "
        "labelled pairs, where |\u0394| / se must reach 3.37. Now \u0394AUC (Poor \u2212 Good) \u2212"
    )
    assert "decides only at its 5 looks, fixed before the first judgement at 21, 41, 62, 82, 103" in line.why
    Judgement.objects.bulk_create(rows[40:])
    assert tasks.check_settled(campaign.pk) is True
    rule.refresh_from_db()
    assert rule.settled_pairs in plan.looks
    k = plan.looks.index(rule.settled_pairs)
    # The repeated-confidence interval: the estimate +- the look's boundary x DeLong's standard error.
    from scoring.analysis import paired

    verdict = stopping.campaign_verdict(campaign, rule)
    assert verdict.settled is not None and verdict.settled.pairs == rule.settled_pairs
    half = (rule.settled_high - rule.settled_low) / 2
    assert (rule.settled_high + rule.settled_low) / 2 == pytest.approx(rule.settled_difference)
    assert abs(rule.settled_difference) >= half  # the interval left 0 at that look
    first = [j for j in sorted(rows, key=lambda j: j.answered_at)][: rule.settled_pairs]
    positive = np.array([j.label == "same_meaning" for j in first])
    scores = {s.pair_id: s.value for s in Score.objects.filter(pair__campaign=campaign)}
    by_metric = {
        metric.pk: np.array([Score.objects.get(pair_id=j.pair_id, metric_config=metric).value for j in first])
        for metric in (poor, good)
    }
    assert scores  # the scores are there
    difference, se, _ = paired.delong_test(
        paired.delong_components(by_metric[poor.pk], positive), paired.delong_components(by_metric[good.pk], positive)
    )
    assert rule.settled_difference == pytest.approx(difference)
    assert half == pytest.approx(plan.boundaries[k] * se)
    campaign.refresh_from_db()
    assert not campaign.is_open
    assert rule.reason.startswith(
        f"Closed by the stopping rule: Settled at look {k + 1} of 5 of the group-sequential plan: Good agrees "
        "better than Poor (\u0394AUC +"
    )
    client = _staff_client(campaign)
    page = client.get(reverse("staff:campaign-settings", args=[campaign.slug])).content.decode()
    assert "Group-sequential O&#x27;Brien-Fleming plan (decides at planned looks): 5 looks" in page
    data = client.get(reverse("staff:dashboard-data") + f"?campaign={campaign.slug}").json()["stopping"]
    assert data["question"]["method"] == "group_sequential" and data["question"]["looks"] == list(plan.looks)


def test_a_group_sequential_plan_that_finds_nothing_says_so_at_its_last_look():
    campaign, good, poor, rows = judged_campaign(separated=False)
    rule = stopping.set_rule(
        campaign, good, poor, 0.05, 100, close_when_settled=True, method="group_sequential", looks=3
    )
    Judgement.objects.bulk_create(rows)
    assert tasks.check_settled(campaign.pk) is False
    line = stopping.words(rule, stopping.campaign_verdict(campaign, rule))
    assert line.text.startswith(
        "Not settled yet (group-sequential plan): the plan's last look (102 labelled pairs) found no difference "
        "at alpha = 0.05: the campaign may stop."
    )


def test_two_equally_good_metrics_never_settle_and_the_campaign_stays_open():
    campaign, good, poor, rows = judged_campaign(separated=False)
    stopping.set_rule(campaign, good, poor, 0.05, 100, close_when_settled=True)
    Judgement.objects.bulk_create(rows)
    assert tasks.check_settled(campaign.pk) is False
    campaign.refresh_from_db()
    assert campaign.is_open
    rule = StoppingRule.objects.get(campaign=campaign)
    assert rule.settled_at is None
    line = stopping.words(rule, stopping.campaign_verdict(campaign, rule))
    assert not line.settled
    assert line.text == (
        "Not settled yet: \u0394AUC (Good \u2212 Poor) +0.000, always-valid 95 % interval [+0.000, +0.000] "
        "after 120 judgements (120 labelled pairs)."
    )


def test_a_rule_without_close_when_settled_records_but_leaves_the_campaign_open():
    campaign, good, poor, rows = judged_campaign(judges=3, n=90)
    stopping.set_rule(campaign, good, poor, 0.05, 100, close_when_settled=False)
    Judgement.objects.bulk_create(rows)
    assert tasks.check_settled(campaign.pk) is True
    campaign.refresh_from_db()
    rule = StoppingRule.objects.get(campaign=campaign)
    assert campaign.is_open and rule.closed_at is None and rule.reason == ""
    assert rule.settled_judgements == 3 * rule.settled_pairs  # three judges per pair, one after another


def test_the_question_is_fixed_before_the_first_judgement():
    campaign, good, poor, rows = judged_campaign()
    other = make_metric_config("other", label="Other")
    stopping.set_rule(campaign, good, poor, 0.05, 100, close_when_settled=False)
    stopping.set_rule(campaign, good, other, 0.05, 100, close_when_settled=False)  # no judgement yet: fine
    Judgement.objects.bulk_create(rows[:3])
    message = (
        "The question, alpha, the planned pairs and the stopping method are fixed before the first judgement: "
        f"{campaign.name} has 3 judgements. Clone the campaign to ask another question."
    )
    for change in [(good, poor, 0.05, 100), (good, other, 0.01, 100), (good, other, 0.05, 500)]:
        with pytest.raises(stopping.StoppingError) as caught:
            stopping.set_rule(campaign, *change, close_when_settled=False)
        assert str(caught.value) == message
    with pytest.raises(stopping.StoppingError) as caught:  # the method is part of the rule
        stopping.set_rule(campaign, good, other, 0.05, 100, close_when_settled=False, method="group_sequential")
    assert str(caught.value) == message
    with pytest.raises(stopping.StoppingError, match="The stopping rule is fixed before the first judgement"):
        stopping.remove_rule(campaign)
    # Only close_when_settled may change.
    rule = stopping.set_rule(campaign, good, other, 0.05, 100, close_when_settled=True)
    assert rule.close_when_settled
    # Through the staff page: the reason, a 400, nothing changed.
    client = _staff_client(campaign)
    url = reverse("staff:campaign-stopping", args=[campaign.slug])
    response = client.post(url, {"metric_a": good.pk, "metric_b": poor.pk, "alpha": "0.05", "planned_pairs": "100"})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert StoppingRule.objects.get(campaign=campaign).metric_b_id == other.pk
    same = client.post(url, {"metric_a": good.pk, "metric_b": other.pk, "alpha": "0.05", "planned_pairs": "100"})
    assert same.status_code == 302 and same["Location"].endswith("?stopping=saved#stopping")
    assert not StoppingRule.objects.get(campaign=campaign).close_when_settled


def test_bad_input_on_the_staff_page_names_the_field():
    campaign, good, poor, _ = judged_campaign(n=4)
    client = _staff_client(campaign)
    url = reverse("staff:campaign-stopping", args=[campaign.slug])
    response = client.post(url, {"metric_a": good.pk, "metric_b": good.pk, "alpha": "0.9", "planned_pairs": "x"})
    assert response.status_code == 400
    page = response.content.decode()
    assert "choose a metric other than metric A" in page
    assert "Ensure this value is less than or equal to 0.2." in page
    assert "Enter a whole number." in page
    assert not StoppingRule.objects.filter(campaign=campaign).exists()
    ok = client.post(url, {"metric_a": good.pk, "metric_b": poor.pk, "alpha": "0.05", "planned_pairs": "100"})
    assert ok.status_code == 302
    assert StoppingRule.objects.get(campaign=campaign).metric_a_id == good.pk


def test_the_dashboard_shows_the_line_live(client, django_capture_on_commit_callbacks):
    campaign, good, poor, rows = judged_campaign()
    stopping.set_rule(campaign, good, poor, 0.05, 100, close_when_settled=False)
    client = _staff_client(campaign)
    page = client.get(reverse("staff:dashboard") + f"?campaign={campaign.slug}").content.decode()
    assert "Not settled yet: no pair has its judges and a label yet (0 judgements so far)." in page
    assert "Why reading this every minute is safe: the interval is always-valid" in page
    Judgement.objects.bulk_create(rows)
    url = reverse("staff:dashboard-data") + f"?campaign={campaign.slug}"
    data = client.get(url).json()["stopping"]
    rule = StoppingRule.objects.select_related("metric_a", "metric_b").get(campaign=campaign)
    verdict = stopping.campaign_verdict(campaign, rule)
    assert verdict.settled is not None
    assert data["settled"] is True
    assert data["text"] == stopping._settled_text("Good", "Poor", verdict.settled, "95")
    assert data["text"].startswith("Settled: Good agrees better than Poor (\u0394AUC +0.")
    assert data["why"] == stopping.WHY_SAFE.format(confidence="95", alpha="5")
    assert data["current"]["judgements"] == 120
    # The record written by the task changes the ETag though no judgement came.
    etag = client.get(url)["ETag"]
    assert client.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 304
    with django_capture_on_commit_callbacks(execute=True):  # the record drops the cached state once committed
        assert tasks.check_settled(campaign.pk)
    again = client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 200
    rule.refresh_from_db()
    # The exact line: when (local time, to the minute); the rule does not close this campaign.
    assert rule.settled_at is not None and rule.closed_at is None
    assert again.json()["stopping"]["record"] == f"Recorded {timezone.localtime(rule.settled_at):%Y-%m-%d %H:%M}."


def test_a_judgement_queues_one_delayed_check_while_a_rule_waits(monkeypatch):
    queued: list[int] = []
    monkeypatch.setattr(stopping_queue, "queue_check", queued.append)
    campaign, good, poor, rows = judged_campaign(n=4)
    pair_id = rows[0].pair_id  # the signal names the pair; the receiver reads its campaign
    judgement_recorded.send(sender=None, judgement_id=1, pair_id=pair_id)
    assert queued == []  # no rule
    rule = stopping.set_rule(campaign, good, poor, 0.05, 100, close_when_settled=True)
    judgement_recorded.send(sender=None, judgement_id=2, pair_id=pair_id)
    assert queued == [campaign.pk]
    # A busy spell: the waiting check will read these judgements too; nothing more is queued.
    for judgement_id in range(3, 10):
        judgement_recorded.send(sender=None, judgement_id=judgement_id, pair_id=pair_id)
    assert queued == [campaign.pk]
    # The check starts (the task): the next judgement queues the next check.
    tasks.check_settled(campaign.pk)
    judgement_recorded.send(sender=None, judgement_id=10, pair_id=pair_id)
    assert queued == [campaign.pk, campaign.pk]
    stopping_queue.check_started(campaign.pk)
    StoppingRule.objects.filter(pk=rule.pk).update(settled_at=timezone.now())
    judgement_recorded.send(sender=None, judgement_id=11, pair_id=pair_id)
    assert queued == [campaign.pk, campaign.pk]  # settled: nothing more to check


def test_the_check_is_sent_to_the_interactive_queue_later(monkeypatch):
    sent: list[broker.TaskMessage] = []

    def send(messages):
        sent.extend(messages)
        return broker.SendResult(len(messages), 0)

    monkeypatch.setattr(stopping_queue.broker, "send", send)
    assert stopping_queue.queue_check(42)
    assert sent == [
        broker.TaskMessage(
            "scoring.reports.tasks.check_settled",
            (42,),
            "interactive",
            countdown=stopping_queue.CHECK_DELAY_SECONDS,
        )
    ]
    assert tasks.check_settled.name == "scoring.reports.tasks.check_settled"


def test_a_countdown_reaches_the_broker_as_the_eta_of_the_message(redis_url, redis_db):
    """Through a real Redis broker: the message of the check carries its eta CHECK_DELAY_SECONDS
    ahead, and the task's argument; a message without a countdown carries none."""
    import base64
    import json
    from datetime import datetime

    from tests.workers_support import redis_transport_options, use_broker

    with use_broker(redis_url, redis_transport_options(60)):
        before = datetime.now().astimezone()
        assert stopping_queue.queue_check(42)
        assert broker.send([broker.TaskMessage("scoring.reports.tasks.check_settled", (7,), "interactive")]).sent == 1
    messages = [json.loads(raw) for raw in redis_db.lrange("interactive", 0, -1)]
    by_argument = {}
    for message in messages:
        body = json.loads(base64.b64decode(message["body"]))
        by_argument[body[0][0]] = message["headers"]
    assert set(by_argument) == {42, 7}
    assert by_argument[42]["task"] == stopping_queue.CHECK_TASK
    eta = datetime.fromisoformat(by_argument[42]["eta"])
    delay = (eta - before).total_seconds()
    assert stopping_queue.CHECK_DELAY_SECONDS - 1 <= delay <= stopping_queue.CHECK_DELAY_SECONDS + 5
    assert by_argument[7]["eta"] is None
    with pytest.raises(ValueError, match="countdown: seconds, 0 or more, got -1"):
        broker.TaskMessage("x", (), "interactive", countdown=-1)


def test_a_campaign_without_a_rule_has_no_stopping_section(client):
    campaign, *_ = judged_campaign(n=4)
    client = _staff_client(campaign)
    assert tasks.check_settled(campaign.pk) is False
    page = client.get(reverse("staff:dashboard") + f"?campaign={campaign.slug}").content.decode()
    assert 'id="stopping"' not in page
    assert client.get(reverse("staff:dashboard-data") + f"?campaign={campaign.slug}").json()["stopping"] is None
    assert Campaign.objects.get(pk=campaign.pk).is_open


def _staff_client(campaign):
    from django.test import Client

    user = make_staff(f"staff-{campaign.pk}", superuser=True)
    client = Client()
    client.force_login(user)
    return client


def test_the_correlation_question_settles_and_is_fixed_too(client):
    campaign, good, poor, rows = judged_campaign()
    client = _staff_client(campaign)
    url = reverse("staff:campaign-stopping", args=[campaign.slug])
    form = {"statistic": "pearson", "metric_a": poor.pk, "metric_b": good.pk, "alpha": "0.05", "planned_pairs": "100"}
    assert client.post(url, {**form, "close_when_settled": "on"}).status_code == 302
    rule = StoppingRule.objects.get(campaign=campaign)
    assert rule.statistic == "pearson" and rule.close_when_settled
    Judgement.objects.bulk_create(rows)
    assert tasks.check_settled(campaign.pk)
    rule.refresh_from_db()
    assert rule.reason.startswith("Closed by the stopping rule: Settled: Good agrees better than Poor (\u0394r +")
    refused = client.post(url, {**form, "statistic": "auc"})
    assert refused.status_code == 400
    assert (
        "The question, alpha, the planned pairs and the stopping method are fixed before the first judgement"
        in refused.content.decode()
    )
    page = client.get(reverse("staff:campaign-settings", args=[campaign.slug])).content.decode()
    assert "Pearson r against the volunteers&#x27; mean answer (1-4): <code>Poor</code>" in page


def test_a_judgement_finds_the_waiting_rule_in_one_statement(monkeypatch):
    """On every answer POST: one statement reads the pair's campaign and its unsettled rule."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    queued: list[int] = []
    monkeypatch.setattr(stopping_queue, "queue_check", queued.append)
    campaign, good, poor, rows = judged_campaign(n=4)
    for expected in ([], [campaign.pk]):
        with CaptureQueriesContext(connection) as statements:
            stopping_queue.on_judgement_recorded(sender=None, judgement_id=1, pair_id=rows[0].pair_id)
        assert len(statements) == 1
        assert queued == expected
        if not expected:
            stopping.set_rule(campaign, good, poor, 0.05, 100, close_when_settled=True)
