"""The staff status page, the admin's retry of failed scores, and ``manage.py score_pairs``."""

from __future__ import annotations

import io
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from scoring.models import MetricConfig, Score, WorkerHeartbeat
from scoring.pipeline import configs
from tests.builders import make_campaign, make_pair, make_score, make_staff, make_training_pairs
from tests.workers_support import closed_port, messages_in, redis_transport_options, use_broker

pytestmark = pytest.mark.django_db


@pytest.fixture
def enabled(settings):
    settings.PARAEVAL_METRICS = ["lev", "wer", "test_picky", "not_a_metric"]
    settings.PARAEVAL_METRIC_PLUGINS = ["tests.worker_metrics"]
    return settings


@pytest.fixture
def staff_client(client):
    user = make_staff("staff", "pw-for-tests")
    client.force_login(user)
    return client


def test_the_status_page_is_for_staff_only(client) -> None:
    for name in ("staff:status", "staff:status-json"):
        response = client.get(reverse(name))
        assert response.status_code == 302
        assert "/admin/login/" in response["Location"]
    volunteer_like = get_user_model().objects.create_user("someone", password="pw-for-tests")
    client.force_login(volunteer_like)
    assert client.get(reverse("staff:status")).status_code == 302


def test_the_status_reports_scores_workers_queues_and_throughput(enabled, staff_client, queue_dir: Path) -> None:
    campaign = make_campaign()
    make_training_pairs(campaign, 2)
    pairs = [make_pair(campaign) for _ in range(4)]
    lev = configs.ensure_metric_config(configs.build("lev"))
    picky = configs.ensure_metric_config(configs.build("test_picky"))
    for pair in pairs[:3]:
        make_score(pair, lev, value=0.1)
    make_score(pairs[0], picky, value=None, error="ValueError: nope")
    old = make_score(pairs[3], lev, value=0.2)
    Score.objects.filter(pk=old.pk).update(computed_at=timezone.now() - timedelta(minutes=3))
    retired = MetricConfig.objects.create(metric="lev", config={"v": 0}, config_hash="x" * 64, label="lev[old]")
    make_score(pairs[0], retired, value=0.3)
    now = timezone.now()
    WorkerHeartbeat.objects.create(hostname="alive@node", queues="llm,cpu", pid=11, last_seen=now)
    WorkerHeartbeat.objects.create(hostname="gone@node", queues="cpu", pid=12, last_seen=now - timedelta(minutes=5))
    # The interactive worker beside it, under a name of its own (one row per worker process).
    WorkerHeartbeat.objects.create(
        hostname="interactive-13@node",
        queues="interactive",
        pid=13,
        last_seen=now,
        doing="annotate.tasks.run_upload",
        doing_since=now,
    )
    from scoring.pipeline import dispatch

    dispatch.queue_missing([pairs[3].pk])  # wer and test_picky for one pair: one message on cpu
    dispatch.queue_missing([pairs[2].pk])  # and another for another pair

    data = staff_client.get(reverse("staff:status-json")).json()

    # Every queue: interactive, cpu, llm and one per judge model (the embedded SmolLM2 by default).
    assert data["queues"] == {"interactive": 0, "cpu": 2, "llm": 0, "llm.smollm2": 0}
    assert [(q["queue"], q["waiting"], q["workers_alive"]) for q in data["queue_status"]] == [
        ("interactive", 0, 1),
        ("cpu", 2, 1),
        ("llm", 0, 1),
        ("llm.smollm2", 0, 0),
    ]
    assert data["queue_status"][3]["serves"] == "smollm2 (embedded, cpu, float32)"
    assert data["queue_status"][0]["serves"] == "uploads, report intervals, meta-evaluation (never scores)"
    assert data["transport"] == "filesystem"
    assert data["pairs"] == 4
    assert data["workers_alive"] == 2
    assert [(w["hostname"], w["alive"]) for w in data["workers"]] == [
        ("alive@node", True),
        ("gone@node", False),
        ("interactive-13@node", True),
    ]
    assert [w["doing"] for w in data["workers"]] == ["", "", "annotate.tasks.run_upload"]
    by_label = {row["label"]: row for row in data["configurations"]}
    assert (by_label["lev"]["done"], by_label["lev"]["pending"], by_label["lev"]["failed"]) == (4, 0, 0)
    assert (by_label["wer"]["done"], by_label["wer"]["pending"]) == (0, 4)
    assert (by_label["test_picky"]["failed"], by_label["test_picky"]["pending"]) == (1, 3)
    assert by_label["lev[old]"]["enabled"] is False
    assert data["totals"] == {"done": 4, "failed": 1, "pending": 7}
    assert [item["name"] for item in data["unavailable"]] == ["not_a_metric"]
    # Last minute: 3 lev + 1 failed test_picky + 1 lev[old] = 5 scores, all on cpu; the one
    # computed 3 minutes ago counts in the 5- and 15-minute windows.
    assert data["throughput"]["cpu"] == {"1": 5.0, "5": 1.2, "15": 0.4}
    assert data["throughput"]["llm"] == {"1": 0.0, "5": 0.0, "15": 0.0}
    assert sum(data["series"]["counts"]["cpu"]) == 6

    page = staff_client.get(reverse("staff:status"))
    assert page.status_code == 200
    html = page.content.decode()
    assert "<td>annotate.tasks.run_upload</td>" in html  # what the interactive worker runs now
    for text in ("alive@node", "silent", "lev[old] (not enabled)", "not_a_metric is enabled but cannot be built"):
        assert text in html
    assert reverse("staff:status-json") in html


def test_the_status_page_survives_an_unreachable_broker(enabled, staff_client) -> None:
    with use_broker(f"redis://127.0.0.1:{closed_port()}/0", redis_transport_options(60)):
        data = staff_client.get(reverse("staff:status-json")).json()
        page = staff_client.get(reverse("staff:status"))
    assert data["queues"] is None
    assert "Connection refused" in data["broker_error"]
    assert page.status_code == 200 and "Broker unreachable" in page.content.decode()


def test_admin_lists_failed_scores_with_their_error_and_retries_them(
    enabled, queue_dir: Path, django_capture_on_commit_callbacks
) -> None:
    user = get_user_model().objects.create_superuser("admin", "admin@example.org", "pw-for-tests")
    from django.test import Client

    client = Client()
    client.force_login(user)
    pairs = [make_pair() for _ in range(2)]
    picky = configs.ensure_metric_config(configs.build("test_picky"))
    failed = make_score(pairs[0], picky, value=None, error="ValueError: cannot score 'x'")
    done = make_score(pairs[1], picky, value=3.0)

    listing = client.get(reverse("admin:scoring_score_changelist") + "?status__exact=failed")
    assert listing.status_code == 200
    assert "ValueError: cannot score" in listing.content.decode()

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = client.post(
            reverse("admin:scoring_score_changelist"),
            {"action": "retry_failed", "_selected_action": [failed.pk, done.pk]},
            follow=True,
        )
        assert list(queue_dir.iterdir()) == []  # nothing sent before the deletion commits
    assert len(callbacks) == 1
    assert response.status_code == 200
    assert "1 failed score(s) reset and queued again" in response.content.decode()
    assert not Score.objects.filter(pk=failed.pk).exists()
    assert Score.objects.filter(pk=done.pk).exists()
    # The reset pair was queued again once the deletion committed.
    assert messages_in(queue_dir) == [("cpu", "scoring.pipeline.tasks.score_pairs", [[picky.pk], [pairs[0].pk]])]


def test_admin_pages_of_configurations_and_workers(enabled) -> None:
    user = get_user_model().objects.create_superuser("admin2", "a2@example.org", "pw-for-tests")
    from django.test import Client

    client = Client()
    client.force_login(user)
    config = configs.ensure_metric_config(configs.build("lev"))
    make_score(make_pair(), config)
    WorkerHeartbeat.objects.create(hostname="w@node", queues="cpu", last_seen=timezone.now())
    assert client.get(reverse("admin:scoring_metricconfig_changelist")).status_code == 200
    assert client.get(reverse("admin:scoring_workerheartbeat_changelist")).status_code == 200
    assert client.get(reverse("admin:scoring_metricconfig_change", args=[config.pk])).status_code == 200


# --- manage.py score_pairs ----------------------------------------------------------------------


def test_score_pairs_scores_a_campaign_with_progress_and_resumes(enabled) -> None:
    campaign = make_campaign(slug="mrpc-sample")
    make_training_pairs(campaign, 2)
    pairs = [make_pair(campaign) for _ in range(5)]
    make_pair(campaign, source="FAIL this one", hypothesis="Something else.")
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "score_pairs",
        "--campaign",
        "mrpc-sample",
        "--metrics",
        "lev,test_picky",
        "--batch-size",
        "2",
        stdout=out,
        stderr=err,
    )

    assert "lev: 6 pairs lacked a score: 6 scored, 0 failed" in out.getvalue()
    assert "test_picky: 6 pairs lacked a score: 5 scored, 1 failed" in out.getvalue()
    assert "6/6" in err.getvalue()  # the progress bar went to stderr
    assert "test_picky failure: ValueError: cannot score 'FAIL this one'" in err.getvalue()
    assert Score.objects.filter(pair__in=pairs).count() == 10

    out = io.StringIO()
    call_command("score_pairs", "--campaign", "mrpc-sample", "--metrics", "lev", stdout=out, stderr=io.StringIO())
    assert out.getvalue().strip() == "lev: every pair already has a score"


def test_score_pairs_refuses_bad_arguments_clearly(enabled) -> None:
    make_campaign(slug="demo-x")
    with pytest.raises(CommandError, match=r"no campaign 'nope'.*demo-x"):
        call_command("score_pairs", "--campaign", "nope", "--metrics", "lev")
    with pytest.raises(CommandError, match="unknown metric 'levenshtein'; known metrics: lev, wer"):
        call_command("score_pairs", "--campaign", "demo-x", "--metrics", "levenshtein")
    with pytest.raises(CommandError, match="--batch-size must be at least 1"):
        call_command("score_pairs", "--campaign", "demo-x", "--metrics", "lev", "--batch-size", "0")


def test_score_pairs_resolves_aliases_through_the_registry() -> None:
    assert configs.canonical_name("parapluie_fs") == "parapluie_fs_direct"
