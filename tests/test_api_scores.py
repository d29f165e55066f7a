"""/api/metric-configs/ and /api/scores/: scores listed by metric configuration."""

from __future__ import annotations

import pytest

from tests.api_support import *  # noqa: F403
from tests.builders import make_campaign, make_metric_config, make_pair, make_score

pytestmark = pytest.mark.django_db

FS_DIRECT = "parapluie_fs_direct[SmolLM2-135M-Instruct]"


@pytest.fixture
def scored():
    campaign = make_campaign(slug="scored")
    other = make_campaign(slug="other")
    parapluie = make_metric_config("parapluie_fs_direct", label=FS_DIRECT, config={"template": "fs_direct"})
    lev = make_metric_config("lev", label="lev")
    pairs = [make_pair(campaign) for _ in range(3)]
    scores = {
        "p0": make_score(pairs[0], parapluie, -1.5),
        "p1": make_score(pairs[1], parapluie, None, error="model not found"),
        "l0": make_score(pairs[0], lev, 0.25),
        "x": make_score(make_pair(other), lev, 0.75),
    }
    return {"campaign": campaign, "parapluie": parapluie, "lev": lev, "pairs": pairs, "scores": scores}


def test_metric_configs(staff_api, scored):
    body = staff_api.get("/api/metric-configs/").json()
    assert [c["label"] for c in body["results"]] == ["lev", FS_DIRECT]
    row = body["results"][1]
    parapluie = scored["parapluie"]
    assert row == {
        "id": parapluie.pk,
        "metric": "parapluie_fs_direct",
        "label": FS_DIRECT,
        "config": {"template": "fs_direct"},
        "config_hash": parapluie.config_hash,
        "higher_is_closer": True,
        "natural_threshold": 0.0,
        "queue": "llm",
        "created_at": row["created_at"],
    }
    assert staff_api.get(f"/api/metric-configs/{parapluie.pk}/").json() == row
    labels = [c["label"] for c in staff_api.get("/api/metric-configs/?metric=lev").json()["results"]]
    assert labels == ["lev"]
    make_metric_config("wer", label="wer")  # scored nothing yet
    labels = [c["label"] for c in staff_api.get("/api/metric-configs/?campaign=scored").json()["results"]]
    assert labels == ["lev", FS_DIRECT]
    assert staff_api.get("/api/metric-configs/?campaign=nope").json() == {"campaign": ["No campaign with slug 'nope'."]}


def test_scores_by_metric_configuration(staff_api, scored):
    scores = scored["scores"]

    def ids(query):
        response = staff_api.get(f"/api/scores/?{query}")
        assert response.status_code == 200, response.json()
        return {row["id"] for row in response.json()["results"]}

    assert ids(f"metric_config={scored['parapluie'].config_hash}") == {scores["p0"].pk, scores["p1"].pk}
    assert ids(f"metric_config={FS_DIRECT}") == {scores["p0"].pk, scores["p1"].pk}
    assert ids(f"metric_config={FS_DIRECT}&status=done") == {scores["p0"].pk}
    assert ids("status=failed") == {scores["p1"].pk}
    assert ids("metric=lev") == {scores["l0"].pk, scores["x"].pk}
    assert ids("metric=lev&campaign=scored") == {scores["l0"].pk}
    assert ids(f"pair={scored['pairs'][0].pk}") == {scores["p0"].pk, scores["l0"].pk}
    assert ids("metric_config=unknown") == set()


def test_score_rows(staff_api, scored):
    failed = scored["scores"]["p1"]
    (row,) = staff_api.get("/api/scores/?status=failed").json()["results"]
    assert row == {
        "id": failed.pk,
        "campaign": "scored",
        "pair": scored["pairs"][1].pk,
        "metric_config": scored["parapluie"].config_hash,
        "metric": "parapluie_fs_direct",
        "metric_label": FS_DIRECT,
        "value": None,
        "status": "failed",
        "error": "model not found",
        "attempts": 1,
        "computed_at": row["computed_at"],
    }
    assert staff_api.get(f"/api/scores/{failed.pk}/").json() == row


@pytest.mark.parametrize(("query", "field"), [("status=maybe", "status"), ("campaign=nope", "campaign")])
def test_bad_filters_are_named(staff_api, query, field):
    response = staff_api.get(f"/api/scores/?{query}")
    assert response.status_code == (404 if field == "campaign" else 400) and list(response.json()) == [field]


def test_list_query_count_is_bounded(staff_api, scored, django_assert_max_num_queries):
    configs = [make_metric_config("bleu", label=f"bleu-{n}") for n in range(5)]
    for _ in range(20):
        pair = make_pair(scored["campaign"])
        for config in configs:
            make_score(pair, config, 0.5)
    with django_assert_max_num_queries(4):  # auth token, the campaign filter, count, page
        response = staff_api.get("/api/scores/?campaign=scored&page_size=200")
    assert response.json()["count"] == 103


@pytest.mark.parametrize("url", ["/api/scores/", "/api/metric-configs/"])
def test_scores_are_read_only(staff_api, scored, url):
    assert staff_api.post(url, {}, format="json").status_code == 405
