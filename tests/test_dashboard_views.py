"""The dashboard page and its JSON endpoint: permissions, filters, ETag polling, query counts."""

from __future__ import annotations

import base64
import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.urls import reverse

from annotate.labels import Label
from scoring.reports.service import campaign_report, shared_cache
from scoring.reports.tasks import compute_report_intervals
from tests.builders import (
    make_campaign,
    make_judgement,
    make_metric_config,
    make_score,
    make_scored_campaign,
    make_staff,
    make_volunteer,
)
from tests.workers_support import messages_in

pytestmark = pytest.mark.django_db
PAGE = "/staff/dashboard/"
DATA = "/staff/dashboard/data/"


@pytest.fixture(autouse=True)
def _empty_cache(queue_dir):
    # queue_dir: the intervals the JSON view queues go to a broker folder of this test.
    cache.clear()
    shared_cache().clear()
    yield
    cache.clear()
    shared_cache().clear()


@pytest.fixture
def staff_client(client):
    user = make_staff("staff", "pw-for-tests")
    client.force_login(user)
    return client


@pytest.fixture
def built():
    return make_scored_campaign(slug="dash", name="Dashboard campaign")


def test_routes_are_named():
    assert reverse("staff:dashboard") == PAGE
    assert reverse("staff:dashboard-data") == DATA


def test_anonymous_is_sent_to_the_admin_login(client, built):
    response = client.get(PAGE)
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
    response = client.get(DATA, {"campaign": "dash"})
    assert response.status_code == 403 and response.json()["login"] == "/admin/login/"


def test_non_staff_is_refused(client, built):
    user = get_user_model().objects.create_user("volunteer", password="pw-for-tests")
    client.force_login(user)
    assert client.get(PAGE).status_code == 302
    assert client.get(DATA, {"campaign": "dash"}).status_code == 403


def test_page_for_staff(staff_client, built):
    response = staff_client.get(PAGE, {"campaign": "dash"})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-url="/staff/dashboard/data/"' in html
    assert '<option value="dash" selected>Dashboard campaign (dash)</option>' in html
    for origin in ("llm", "mrpc", "paws"):
        assert f'<option value="{origin}"' in html
    assert "/staff/export/dash/?level=pairs&amp;format=csv" in html
    assert "/staff/export/dash/?level=judgements&amp;format=csv" in html
    # The chart library is served from our static files, never from a CDN.
    scripts = re.findall(r'<script src="([^"]+)"', html)
    assert scripts == [
        "/static/vendor/chartjs/chart.umd.min.js",
        "/static/vendor/chartjs-chart-boxplot/index.umd.min.js",
        "/static/js/common.js",
        "/static/js/dashboard.js",
        "/static/js/meta_evaluation.js",
    ]


def test_page_picks_a_campaign_and_handles_unknown_ones(staff_client, built):
    assert staff_client.get(PAGE).context["campaign"] == built.campaign
    response = staff_client.get(PAGE, {"campaign": "missing"})
    assert response.status_code == 404 and "No campaign “missing”" in response.content.decode()


def test_page_without_campaigns(staff_client):
    response = staff_client.get(PAGE)
    assert response.status_code == 200 and "No campaign yet" in response.content.decode()


def test_static_files_exist(staff_client, built):
    for path in (
        "/static/vendor/chartjs/chart.umd.min.js",
        "/static/vendor/chartjs-chart-boxplot/index.umd.min.js",
        "/static/js/common.js",
        "/static/js/dashboard.js",
        "/static/css/dashboard.css",
    ):
        response = staff_client.get(path)
        assert response.status_code == 200, path
        b"".join(response.streaming_content) if response.streaming else response.content


def test_json_report_with_etag(staff_client, built):
    response = staff_client.get(DATA, {"campaign": "dash"})
    assert response.status_code == 200
    body = response.json()
    # The point estimates at once; the intervals are queued ("-p": pending, the wait's phase and attempt).
    assert response["ETag"] == f'"{body["version"]}-pqueued1"'
    assert "no-store" in response["Cache-Control"]
    assert body["counts"]["judgements"] == 72 and body["campaign"]["slug"] == "dash"
    unchanged = staff_client.get(DATA, {"campaign": "dash"}, headers={"If-None-Match": response["ETag"]})
    assert unchanged.status_code == 304 and unchanged.content == b""
    assert unchanged["ETag"] == response["ETag"]


def test_intervals_fill_in_when_the_cpu_queue_has_them(staff_client, built, queue_dir):
    first = staff_client.get(DATA, {"campaign": "dash"})
    body = first.json()
    parapluie = str(built.configs["parapluie"].pk)
    assert body["bootstrap"]["state"] == "computing"
    assert re.fullmatch(
        r"The 95% bootstrap intervals: waiting for an interactive worker, queued at \d\d:\d\d:\d\d UTC; "
        r"queued again at \d\d:\d\d:\d\d UTC if no worker has started it\.",
        body["bootstrap"]["message"],
    )
    assert body["results"][parapluie]["all"]["auc"]["ci"] is None
    assert body["results"][parapluie]["all"]["best_accuracy"]["ci"] is None
    assert body["results"][parapluie]["all"]["auc"]["value"] is not None  # the point estimate is there
    # One message was queued on the cpu queue, once whatever the polls.
    staff_client.get(DATA, {"campaign": "dash"}, headers={"If-None-Match": first["ETag"]})
    staff_client.get(DATA, {"campaign": "dash"})
    queued = messages_in(queue_dir)
    intervals = "scoring.reports.tasks.compute_report_intervals"
    assert [(queue, task) for queue, task, _ in queued] == [("interactive", intervals)]
    # What the worker runs with that message's arguments.
    kwargs = json.loads(base64.b64decode(json.loads(next(queue_dir.iterdir()).read_text())["body"]))[1]
    assert compute_report_intervals(**kwargs) == body["version"]
    ready = staff_client.get(DATA, {"campaign": "dash"}, headers={"If-None-Match": first["ETag"]})
    assert ready.status_code == 200 and ready["ETag"] == f'"{body["version"]}-i"'
    filled = ready.json()
    assert filled["bootstrap"]["state"] == "ready"
    # The same numbers as the report API computes synchronously.
    expected = campaign_report(built.campaign.pk, use_cache=False).as_json()
    for key in ("best_accuracy", "auc", "eer"):
        assert filled["results"][parapluie]["all"][key]["ci"] == expected["results"][parapluie]["all"][key]["ci"]
    assert filled["results"] == expected["results"] and filled["tables"] == expected["tables"]


def test_version_changes_when_a_judgement_or_score_arrives(staff_client, built):
    etag = staff_client.get(DATA, {"campaign": "dash"})["ETag"]
    make_judgement(built.pairs[2], make_volunteer(built.campaign), Label.SAME_MEANING)
    changed = staff_client.get(DATA, {"campaign": "dash"}, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed["ETag"] != etag
    assert changed.json()["counts"]["judgements"] == 73
    etag = changed["ETag"]
    make_score(built.pairs[0], make_metric_config("meteor", label="METEOR"), 0.7)
    changed = staff_client.get(DATA, {"campaign": "dash"}, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.json()["counts"]["metrics"] == 5


def test_filters(staff_client, built):
    level = built.volunteers[0].english_level
    body = staff_client.get(
        DATA, {"campaign": "dash", "origin": "paws", "english_level": level, "reference": "gold"}
    ).json()
    assert body["filters"] == {
        "reference": "gold",
        "origin": "paws",
        "english_level": level,
        "date_from": None,
        "date_to": None,
        "exclude_flagged": False,
    }
    assert body["counts"]["pairs"] == 8 and body["counts"]["labelled"] == 8
    assert {row["english_level"] for row in body["volunteers"]} == {level}
    body = staff_client.get(DATA, {"campaign": "dash", "date_from": "2999-01-01"}).json()
    assert body["counts"]["judgements"] == 0


def test_bad_filters_are_400_and_name_the_field(staff_client, built):
    response = staff_client.get(DATA, {"campaign": "dash", "date_from": "2025-13-45"})
    assert response.status_code == 400 and "date_from" in response.json()["fields"]
    response = staff_client.get(DATA, {"campaign": "dash", "date_from": "2025-02-01", "date_to": "2025-01-01"})
    assert response.status_code == 400 and "date_to" in response.json()["fields"]
    response = staff_client.get(DATA, {"campaign": "dash", "english_level": "fluent"})
    assert response.status_code == 400 and "english_level" in response.json()["fields"]
    response = staff_client.get(DATA, {"campaign": "nope"})
    assert response.status_code == 404 and "nope" in response.json()["error"]


def test_query_count_does_not_grow_with_the_campaign(staff_client, django_assert_max_num_queries):
    small = make_scored_campaign(pairs_per_origin=2, judges=2, slug="small")
    large = make_scored_campaign(pairs_per_origin=15, judges=3, slug="large")
    # Session + user (2), campaign (1), the campaign with its change counters (1), six loads (6),
    # the failed scores per reason (1), the stopping rule (1), the probe set in the fingerprint and
    # in the load (2; none here, so no probe pairs or scores are read).
    for built in (small, large):
        with django_assert_max_num_queries(20):
            response = staff_client.get(DATA, {"campaign": built.campaign.slug})
        assert response.status_code == 200
    # An unchanged poll: session, user, campaign, the campaign with its change counters, its probe set.
    with django_assert_max_num_queries(5):
        response = staff_client.get(DATA, {"campaign": "large"}, headers={"If-None-Match": response["ETag"]})
    assert response.status_code == 304


def test_the_poll_carries_the_failed_scores_per_reason(staff_client, built):
    body = staff_client.get(DATA, {"campaign": "dash"}).json()
    bertscore = built.configs["bertscore"]
    assert body["failures"] == [
        {"config_id": bertscore.pk, "label": bertscore.label, "reason": "RuntimeError: out of memory", "pairs": 1}
    ]


def test_gzip_when_asked(staff_client, built):
    response = staff_client.get(DATA, {"campaign": "dash"}, headers={"Accept-Encoding": "gzip"})
    assert response["Content-Encoding"] == "gzip"


def test_empty_campaign_json(staff_client):
    make_campaign(slug="empty")
    body = staff_client.get(DATA, {"campaign": "empty"}).json()
    assert body["counts"]["pairs"] == 0 and body["metrics"] == [] and body["last_changed"] is None


def test_collectstatic_keeps_the_vendored_maps(settings, tmp_path):
    # The manifest storage follows the sourceMappingURL comments of the vendored builds: the
    # maps must ship with them or collectstatic fails in production.
    from django.core.management import call_command

    settings.STATIC_ROOT = tmp_path
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }
    call_command("collectstatic", interactive=False, verbosity=0)
    manifest = (tmp_path / "staticfiles.json").read_text()
    for name in ("vendor/chartjs/chart.umd.min.js", "vendor/chartjs-chart-boxplot/index.umd.min.js", "js/dashboard.js"):
        assert f'"{name}"' in manifest
