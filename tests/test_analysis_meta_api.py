"""The meta-evaluation through the report API: 202 while the interactive queue computes, then the result."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.core.cache import cache

from scoring.reports.service import shared_cache
from scoring.reports.tasks import compute_meta_evaluation
from tests.api_support import *  # noqa: F403
from tests.builders import make_scored_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    cache.clear()
    shared_cache().clear()


def test_computing_then_ready(staff_api, queue_dir):  # type: ignore[no-untyped-def]
    scored = make_scored_campaign(pairs_per_origin=6)
    url = f"/api/campaigns/{scored.campaign.slug}/meta-evaluation/?resamples=50"
    first = staff_api.get(url)
    assert first.status_code == 202
    assert first.json()["state"] == "computing"
    assert re.fullmatch(
        r"The paired comparisons: waiting for an interactive worker, queued at \d\d:\d\d:\d\d UTC; "
        r"queued again at \d\d:\d\d:\d\d UTC if no worker has started it\.",
        first.json()["message"],
    )
    assert first.json()["wait"] == {"phase": "queued", "attempt": 1}
    # What the interactive worker runs (the message it was sent has these arguments).
    filters = {"reference": "volunteers", "origin": None, "english_level": None, "date_from": None, "date_to": None}
    version = compute_meta_evaluation(scored.campaign.pk, filters, 50, settings.PARAEVAL_SEED)
    ready = staff_api.get(url)
    assert ready.status_code == 200
    body = ready.json()
    assert body["state"] == "ready" and body["version"] == version == body["meta"]["version"]
    labels = [metric["label"] for metric in body["meta"]["metrics"]]
    assert labels == ["BERTScore", "BLEU", "LEV", "ParaPLUIE FS-DIRECT"]
    statistics = {test["statistic"] for test in body["meta"]["paired"]}
    assert statistics == {"auc", "accuracy_natural", "accuracy_cv", "pearson", "spearman", "kendall"}
    assert len(body["meta"]["paired"]) == 6 * 6  # six statistics x (4 choose 2) metric pairs
    # Beside each matrix, its test and the smallest p it can reach.
    rankings = {ranking["statistic"]: ranking for ranking in body["meta"]["rankings"]}
    assert rankings["auc"]["test"] == "DeLong" and rankings["auc"]["smallest_p"] is None
    assert rankings["auc"]["floor_note"] == "DeLong test (analytic): no resampling floor on its p-values."
    spearman = rankings["spearman"]
    assert spearman["test"] == "permutation" and spearman["comparisons"] == 6 and spearman["reachable"] is True
    assert spearman["resamples"] == 1199 and spearman["smallest_p"] == pytest.approx(6 * 2 / 1200)
    assert spearman["floor_note"] == (
        "Permutation test, 1199 resamples: the smallest reachable Holm-adjusted p over 6 comparisons is 0.01."
    )


def test_bad_filter_and_unknown_campaign(staff_api, queue_dir):  # type: ignore[no-untyped-def]
    scored = make_scored_campaign(pairs_per_origin=3)
    bad = staff_api.get(f"/api/campaigns/{scored.campaign.slug}/meta-evaluation/?reference=robots")
    assert bad.status_code == 400 and "reference" in bad.json()
    assert staff_api.get("/api/campaigns/nope/meta-evaluation/").status_code == 404


def test_anonymous_is_refused(api):  # type: ignore[no-untyped-def]
    scored = make_scored_campaign(pairs_per_origin=3)
    assert api.get(f"/api/campaigns/{scored.campaign.slug}/meta-evaluation/").status_code in (401, 403)
