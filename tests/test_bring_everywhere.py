"""An imported metric appears wherever a computed one does (scores brought from outside): every
table and figure of the dashboard, the PARAPHRASUS table, the paired tests and clusters,
threshold honesty, ties, the system view, groups, distance bins, the human ceiling and the
alternative annotator test, calibration, the tables of ``evaluate_metrics``, the staff pair
pages, both pair exports and the API; and through a real ``cpu`` worker, on the dashboard's
data and in the paired tests computed there.

Each check names the place, so a place that leaves the imported configuration out fails with
its name.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache
from django.core.management import call_command

from annotate.models import Pair
from scoring.external.score_import import ScoreFileMetric, import_scores
from scoring.models import MetricConfig, Score
from scoring.reports.dataset import Filters
from scoring.reports.paraphrasus import set_objectives
from scoring.reports.service import compute_meta, meta_options, shared_cache
from tests.api_support import *  # noqa: F403
from tests.builders import ScoredCampaign, make_scored_campaign, make_staff
from tests.export_support import export_text, read_csv, read_jsonl
from tests.workers_support import WorkerProcess, filesystem_broker, shared_database_url, wait_for, worker_env

LABEL = "mine 1.0 (imported)"
SYSTEMS = ("gen-a", "gen-b", "gen-c")
RESAMPLES = 50


@pytest.fixture(autouse=True)
def _empty_cache() -> Iterator[None]:
    cache.clear()
    shared_cache().clear()
    yield
    shared_cache().clear()


def _world(slug: str, pairs_per_origin: int = 20) -> tuple[ScoredCampaign, MetricConfig]:
    """A judged, scored campaign whose pairs name three systems, and a score file imported into
    it: a log-odds-like metric (natural threshold 0, higher is closer), so that the tables and
    sections kept for metrics with a natural threshold (Table 5, calibration) take it too."""
    built = make_scored_campaign(slug=slug, pairs_per_origin=pairs_per_origin)
    for index, pair in enumerate(built.pairs):
        Pair.objects.filter(pk=pair.pk).update(system=SYSTEMS[index % 3])
    lines = [
        f"{pair.pk},{(2.5 if built.truth[pair.pk] else -2.5) + (index % 7 - 3) * 0.6}"
        for index, pair in enumerate(built.pairs)
    ]
    data = ("pair_id,score\n" + "\n".join(lines) + "\n").encode()
    metric = ScoreFileMetric("mine", "1.0", higher_is_closer=True, natural_threshold=0.0)
    return built, import_scores(built.campaign, data, "mine.csv", metric).config


@pytest.fixture
def staff_client(client):  # type: ignore[no-untyped-def]
    client.force_login(make_staff("staff-everywhere", "pw"))
    return client


def _ids_in(rows: list[dict[str, Any]], key: str = "metric") -> set[int]:
    return {row[key] for row in rows}


@pytest.mark.django_db
def test_an_imported_metric_is_in_every_table_figure_and_section(staff_client, staff_api):
    built, config = _world("everywhere")
    computed = {metric.pk for metric in built.configs.values()}
    every = computed | {config.pk}
    slug = built.campaign.slug
    set_objectives(built.campaign, {"mrpc": "classify", "paws": "classify"})

    # The dashboard's data: Tables 1-5, ranking, top-k, and every figure drawn from the charts.
    body = staff_client.get("/staff/dashboard/data/", {"campaign": slug}).json()
    assert {metric["id"] for metric in body["metrics"]} == every
    mine = next(metric for metric in body["metrics"] if metric["id"] == config.pk)
    assert (mine["label"], mine["arrow"], mine["natural_threshold"]) == (LABEL, "↑", 0.0)
    assert mine["scores"] == {"done": len(built.pairs), "failed": 0, "missing": 0}
    per_metric_tables = {"table1", "table2", "table3", "table4", "table5", "ranking", "topk"}
    tables = {table["key"]: table for table in body["tables"]}
    assert per_metric_tables <= set(tables)
    for key in sorted(per_metric_tables):
        assert f"{LABEL} ↑" in {row["label"] for row in tables[key]["rows"]}, f"dashboard {key}"
    charts = body["charts"][str(config.pk)]
    for figure in ("box", "scatter", "thresholds", "roc", "rank"):  # Figures 1-5
        assert charts[figure], f"figure data {figure}"
    for subset in ("all", "mrpc", "paws", "llm"):
        assert body["results"][str(config.pk)][subset]["n"] > 0, f"results of subset {subset}"

    # The dashboard page: its PARAPHRASUS table is drawn on the server.
    page = staff_client.get("/staff/dashboard/", {"campaign": slug}).content.decode()
    paraphrasus = page.split('id="section-paraphrasus"', 1)[1].split("</section>", 1)[0]
    assert LABEL in paraphrasus, "dashboard page: PARAPHRASUS table"

    # The meta-evaluation: every section that lists metrics lists the imported one.
    filters = Filters.build("volunteers")
    meta = compute_meta(built.campaign.pk, filters, meta_options(filters, RESAMPLES, None)).as_json()
    assert _ids_in(meta["metrics"], "id") == every
    for statistic in {row["statistic"] for row in meta["paired"]}:
        against = {
            row["metric_a"] if row["metric_b"] == config.pk else row["metric_b"]
            for row in meta["paired"]
            if row["statistic"] == statistic and config.pk in (row["metric_a"], row["metric_b"])
        }
        assert against == computed, f"paired tests ({statistic})"
    for ranking in meta["rankings"]:
        assert config.pk in _ids_in(ranking["rows"]), f"clusters ({ranking['statistic']})"
        assert len(ranking["matrix"]) == len(every)
    assert config.pk in _ids_in(meta["thresholds"]), "threshold honesty"
    assert config.pk in _ids_in(meta["ties"]), "ties"
    assert config.pk in _ids_in(meta["systems"]["metrics"]), "system view"
    assert [row["system"] for row in meta["systems"]["systems"]] == list(SYSTEMS)
    assert all(len(row["metric_means"]) == len(every) for row in meta["systems"]["systems"])
    assert config.pk in _ids_in(meta["group_metrics"]), "groups of hypotheses"
    assert config.pk in _ids_in(meta["distance_bins"]["metrics"]), "distance bins"
    assert config.pk in _ids_in(meta["ceiling"]), "human ceiling"
    assert meta["alt_test"]["rows"], meta["alt_test"]["note"]
    assert config.pk in _ids_in(meta["alt_test"]["rows"]), "alternative annotator test"
    assert config.pk in _ids_in(meta["calibration"]), "calibration (natural threshold 0, log-odds)"

    # The API: the report, the meta-evaluation (ready from the cache filled above), the
    # configurations and the scores.
    report = staff_api.get(f"/api/campaigns/{slug}/report/").json()
    assert config.pk in {metric["id"] for metric in report["metrics"]}, "API report"
    ready = staff_api.get(f"/api/campaigns/{slug}/meta-evaluation/", {"resamples": RESAMPLES})
    assert ready.status_code == 200, ready.json()
    assert config.pk in _ids_in(ready.json()["meta"]["metrics"], "id"), "API meta-evaluation"
    listed = staff_api.get("/api/metric-configs/", {"metric": "mine"}).json()["results"]
    assert [(row["label"], row["queue"], row["config_hash"]) for row in listed] == [
        (LABEL, "external", config.config_hash)
    ]
    scores = staff_api.get("/api/scores/", {"metric_config": config.config_hash, "page_size": 500}).json()
    assert scores["count"] == len(built.pairs)

    # evaluate_metrics: the paper's tables and the meta-evaluation's, as a researcher prints them.
    out = io.StringIO()
    call_command("evaluate_metrics", "--campaign", slug, "--meta", "--resamples", "20", stdout=out)
    printed = out.getvalue()
    for title in ("Table 1", "Table 2", "Table 3", "Table 4", "Table 5", "Ranking", "Paired p-values"):
        section = printed.split(title, 1)[1].split("\n#", 1)[0]
        assert LABEL in section, f"evaluate_metrics: {title}"

    # The exports: a column (CSV) and a key (JSONL) named by the configuration's label.
    header, rows = read_csv(export_text(built.campaign, "pairs", "csv"))
    assert LABEL in header
    stored = dict(Score.objects.filter(metric_config=config).values_list("pair_id", "value"))
    assert {int(row["pair_id"]): float(row[LABEL]) for row in rows} == stored, "pair export (CSV)"
    records = read_jsonl(export_text(built.campaign, "pairs", "jsonl"))
    assert all(LABEL in str(record) for record in records), "pair export (JSONL)"

    # The staff pair pages: each pair lists its score, and the pair list finds the metric's
    # worst disagreements with the volunteers.
    pair = built.pairs[0]
    detail = staff_client.get(f"/staff/campaigns/{slug}/pairs/{pair.pk}/").content.decode()
    assert LABEL in detail, "staff pair page"
    listing = staff_client.get(f"/staff/campaigns/{slug}/pairs/", {"metric": config.pk}).content.decode()
    assert f'<option value="{config.pk}" selected>{LABEL}</option>' in listing, "pair list: metric chooser"


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_imported_through_the_api_then_on_the_dashboard_and_in_the_paired_tests_from_a_real_worker(
    tmp_path: Path, settings, client, staff_api
) -> None:
    """POST /api/scores/import/, then a real ``celery worker -Q interactive`` computes the dashboard's
    intervals and the paired tests: both have the imported metric."""
    data = tmp_path / "data"
    (data / "broker").mkdir(parents=True)
    settings.CACHES = {
        **settings.CACHES,
        "analyses": {**settings.CACHES["analyses"], "LOCATION": str(data / "cache" / "analyses")},
    }
    if "KEY_PREFIX" in settings.CACHES["analyses"]:
        pytest.skip("REDIS_URL is set: this test runs the file-based shared cache")
    built = make_scored_campaign(slug="worked-import", pairs_per_origin=5)
    upload = io.BytesIO(
        ("pair_id,score\n" + "".join(f"{pair.pk},{float(built.truth[pair.pk])}\n" for pair in built.pairs)).encode()
    )
    upload.name = "oracle.csv"
    form = {"campaign": "worked-import", "name": "oracle", "version": "1", "direction": "↑", "file": upload}
    created = staff_api.post("/api/scores/import/", form, format="multipart")
    assert created.status_code == 201, created.json()
    config_id = created.json()["metric_config"]
    client.force_login(make_staff("dash-import", "pw"))
    meta_url = "/api/campaigns/worked-import/meta-evaluation/?resamples=200"
    with filesystem_broker(data / "broker"):
        assert client.get("/staff/dashboard/data/", {"campaign": "worked-import"}).json()["bootstrap"]["state"] == (
            "computing"
        )
        assert staff_api.get(meta_url).status_code == 202
        env = worker_env(DATABASE_URL=shared_database_url(), PARAEVAL_DATA_DIR=str(data))
        env.pop("REDIS_URL", None)
        worker = WorkerProcess(env, tmp_path, name="import-analyses", queues="interactive").start()
        try:
            filled = wait_for(
                lambda: (
                    body
                    if (body := client.get("/staff/dashboard/data/", {"campaign": "worked-import"}).json())[
                        "bootstrap"
                    ]["state"]
                    == "ready"
                    else None
                ),
                timeout=120,
                what=f"the intervals from the worker\n{worker.log()[-3000:]}",
            )
            ready = wait_for(
                lambda: response if (response := staff_api.get(meta_url)).status_code == 200 else None,
                timeout=120,
                what=f"the meta-evaluation from the worker\n{worker.log()[-3000:]}",
            )
        finally:
            worker.stop()
    assert "compute_meta_evaluation" in worker.log()
    # The dashboard: Table 1's row and an interval the worker computed.
    table1 = next(table for table in filled["tables"] if table["key"] == "table1")
    assert "oracle 1 (imported) ↑" in [row["label"] for row in table1["rows"]]
    auc = filled["results"][str(config_id)]["all"]["auc"]
    low, high = auc["ci"]
    assert 0.5 < low <= auc["value"] <= high <= 1  # the gold labels, which most volunteers agree with
    # The paired tests: the imported metric against each of the four computed ones.
    meta = ready.json()["meta"]
    assert "oracle 1 (imported)" in [metric["label"] for metric in meta["metrics"]]
    paired = [
        row for row in meta["paired"] if row["statistic"] == "auc" and config_id in (row["metric_a"], row["metric_b"])
    ]
    assert len(paired) == 4
    clusters = next(ranking for ranking in meta["rankings"] if ranking["statistic"] == "auc")
    assert config_id in [row["metric"] for row in clusters["rows"]]
