"""Bring your scores: a CSV or JSONL file of precomputed scores becomes an external configuration."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command

from scoring.analysis.meta import MetaOptions
from scoring.analysis.report import ScoreCounts
from scoring.external.score_import import EXTERNAL_QUEUE, ScoreFileMetric, ScoreImportError, import_scores
from scoring.models import MetricConfig, QueuedScore, Score
from scoring.pipeline import dispatch, runner
from scoring.reports.dataset import Filters
from scoring.reports.service import campaign_report, compute_meta, shared_cache
from tests.api_support import *  # noqa: F403
from tests.builders import make_campaign, make_pair, make_scored_campaign, make_staff

pytestmark = pytest.mark.django_db

MINE = ScoreFileMetric("my_metric", "1.0", higher_is_closer=False, natural_threshold=0.5, options={"model": "x"})


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()
    shared_cache().clear()
    yield
    shared_cache().clear()


def _csv(rows: list[tuple[object, object]], column: str = "pair_id") -> bytes:
    return ("\n".join([f"{column},score", *(f"{key},{value}" for key, value in rows)]) + "\n").encode()


def test_csv_by_pair_id_and_jsonl_by_external_id_store_exact_rows():
    campaign = make_campaign(slug="mine")
    pairs = [make_pair(campaign, external_id=f"e{i}") for i in range(3)]
    result = import_scores(
        campaign, _csv([(p.pk, v) for p, v in zip(pairs, [0.1, 2, -3.5], strict=True)]), "s.csv", MINE
    )
    assert result.created and result.scores == 3
    config = result.config
    assert (config.metric, config.label, config.queue, config.spec) == (
        "my_metric",
        "my_metric 1.0 (imported)",
        EXTERNAL_QUEUE,
        "",
    )
    assert (config.higher_is_closer, config.natural_threshold) == (False, 0.5)
    assert config.config["version"] == "1.0" and config.config["options"] == {"model": "x"}
    assert config.config["external"] is True and len(config.config["scores_sha256"]) == 64
    stored = list(
        Score.objects.filter(metric_config=config).order_by("pair_id").values_list("pair_id", "value", "status")
    )
    assert stored == [(pairs[0].pk, 0.1, "done"), (pairs[1].pk, 2.0, "done"), (pairs[2].pk, -3.5, "done")]

    jsonl = "\n".join(json.dumps({"external_id": f"e{i}", "score": i / 4}) for i in range(3)).encode()
    other = import_scores(campaign, jsonl, "s.jsonl", ScoreFileMetric("my_metric", "2.0"))
    assert other.created and other.config.pk != config.pk and other.config.label == "my_metric 2.0 (imported)"
    assert sorted(Score.objects.filter(metric_config=other.config).values_list("value", flat=True)) == [0, 0.25, 0.5]


def test_the_same_file_twice_changes_nothing_and_other_scores_are_another_configuration():
    campaign = make_campaign()
    pairs = [make_pair(campaign) for _ in range(2)]
    data = _csv([(pairs[0].pk, 0.5), (pairs[1].pk, 0.7)])
    first = import_scores(campaign, data, "a.csv", MINE)
    again = import_scores(campaign, data, "b.csv", MINE)
    assert (again.created, again.scores, again.config.pk) == (False, 0, first.config.pk)
    assert MetricConfig.objects.count() == 1 and Score.objects.count() == 2
    changed = import_scores(campaign, _csv([(pairs[0].pk, 0.5), (pairs[1].pk, 0.8)]), "c.csv", MINE)
    assert changed.created and changed.config.pk != first.config.pk
    # Same name and version, other scores: told apart by the scores' hash in the label.
    assert changed.config.label == f"my_metric 1.0 (imported, {changed.config.config_hash[:8]})"


def test_the_signature_is_name_version_options_and_a_hash_of_the_scores():
    import hashlib

    from scoring.metrics.base import config_hash

    campaign = make_campaign()
    pairs = [make_pair(campaign, external_id=f"s{i}") for i in range(3)]
    values = [0.25, -1.5, 3.0]
    config = import_scores(campaign, _csv(list(zip([p.pk for p in pairs], values, strict=True))), "a.csv", MINE).config
    # The hash of the scores, computed here from the documented format: "<pair id>\t<score>" lines in id order.
    lines = "\n".join(
        f"{pair.pk}\t{value!r}" for pair, value in sorted(zip(pairs, values, strict=True), key=lambda x: x[0].pk)
    )
    digest = hashlib.sha256(lines.encode()).hexdigest()
    assert config.config == {
        "external": True,
        "version": "1.0",
        "options": {"model": "x"},
        "scores_sha256": digest,
        "scores": 3,
        "higher_is_closer": False,
        "natural_threshold": 0.5,
    }
    assert config.config_hash == config_hash("my_metric", config.config)
    # The same scores in another order, or as JSON Lines by external id: the same configuration.
    shuffled = _csv([(pairs[2].pk, 3.0), (pairs[0].pk, 0.25), (pairs[1].pk, -1.5)])
    assert import_scores(campaign, shuffled, "b.csv", MINE).config.pk == config.pk
    jsonl = "\n".join(json.dumps({"external_id": f"s{i}", "score": v}) for i, v in enumerate(values)).encode()
    assert import_scores(campaign, jsonl, "c.jsonl", MINE).config.pk == config.pk
    # Each part of the signature, changed alone, makes another configuration.
    others = [
        ScoreFileMetric("my_metric2", "1.0", False, 0.5, {"model": "x"}),
        ScoreFileMetric("my_metric", "1.1", False, 0.5, {"model": "x"}),
        ScoreFileMetric("my_metric", "1.0", False, 0.5, {"model": "y"}),
        ScoreFileMetric("my_metric", "1.0", True, 0.5, {"model": "x"}),
        ScoreFileMetric("my_metric", "1.0", False, None, {"model": "x"}),
    ]
    made = {import_scores(campaign, shuffled, "d.csv", metric).config.pk for metric in others}
    assert len(made) == len(others) and config.pk not in made
    assert Score.objects.count() == 3 * (1 + len(others))


def test_every_problem_named_with_its_line_and_nothing_stored():
    campaign = make_campaign(slug="here")
    elsewhere = make_pair(make_campaign(slug="there"))
    pair = make_pair(campaign, external_id="known")
    data = (
        "pair_id,external_id,score\n"
        f"{pair.pk},,0.5\n"  # line 2: fine
        ",known,0.6\n"  # line 3: the same pair again, by its external id
        "999999,,0.1\n"  # line 4
        f"{elsewhere.pk},,0.2\n"  # line 5
        ",missing,0.3\n"  # line 6
        f"{pair.pk},,nan\n"  # line 7
        f"{pair.pk},,inf\n"  # line 8
        f"{pair.pk},,high\n"  # line 9
        ",,0.4\n"  # line 10
        "x1,,0.4\n"  # line 11
    ).encode()
    with pytest.raises(ScoreImportError) as refused:
        import_scores(campaign, data, "bad.csv", MINE)
    assert [str(problem) for problem in refused.value.problems] == [
        f"line 3: duplicate: external_id 'known' already has a score on line 2 (pair_id {pair.pk})",
        "line 4: unknown pair: no pair has id 999999",
        f"line 5: pair {elsewhere.pk} belongs to campaign 'there', not 'here'",
        "line 6: unknown pair: campaign 'here' has no external id 'missing'",
        "line 7: score 'nan' is not finite",
        "line 8: score 'inf' is not finite",
        "line 9: score 'high' is not a number",
        "line 10: no pair_id or external_id",
        "line 11: pair_id 'x1' is not a pair id (a positive integer)",
    ]
    assert not MetricConfig.objects.exists() and not Score.objects.exists()


def test_file_level_refusals():
    campaign = make_campaign()
    pair = make_pair(campaign)
    cases = [
        (b"id,value\n1,2\n", "s.csv", MINE, "line 1: the header must have a score column and pair_id or external_id"),
        (b"", "s.csv", MINE, "the file has no scores"),
        (b'{"pair_id": 1, "score": 1}\n[1]\nnot json\n', "s.jsonl", MINE, "line 2: expected a JSON object"),
        (_csv([(pair.pk, 1)]), "s.csv", ScoreFileMetric("bleu", "1"), "metric name 'bleu' is a built-in metric's"),
        (_csv([(pair.pk, 1)]), "s.csv", ScoreFileMetric("ok", " "), "metric version is required"),
        (b"\xff\xfe", "s.csv", MINE, "the file is not UTF-8 text"),
        (b'{"pair_id": 1e30, "score": 1}\n', "s.jsonl", MINE, "line 1: pair_id 1e+30 is not a pair id"),
        (b'{"pair_id": 1, "score": 1' + b"0" * 400 + b"}\n", "s.jsonl", MINE, "line 1: score 1000"),
        (b"pair_id,score\n\x00,1\n", "s.csv", MINE, "line 2: pair_id '\\x00' is not a pair id"),
    ]
    for data, name, metric, message in cases:
        with pytest.raises(ScoreImportError) as refused:
            import_scores(campaign, data, name, metric)
        assert message in str(refused.value)
    assert not MetricConfig.objects.exists()


def test_command(tmp_path: Path):
    campaign = make_campaign(slug="cmd")
    pairs = [make_pair(campaign) for _ in range(2)]
    path = tmp_path / "scores.csv"
    path.write_bytes(_csv([(pairs[0].pk, 1.5), (pairs[1].pk, 2.5)]))
    out = io.StringIO()
    arguments = ["--campaign", "cmd", "--name", "mine", "--metric-version", "3", "--direction", "↓", "--threshold", "2"]
    call_command("import_scores", str(path), *arguments, stdout=out)
    config = MetricConfig.objects.get()
    assert out.getvalue() == f"2 scores stored as mine 3 (imported) (configuration {config.config_hash[:12]})\n"
    assert (config.higher_is_closer, config.natural_threshold) == (False, 2.0)
    out = io.StringIO()
    call_command("import_scores", str(path), *arguments, stdout=out)
    assert out.getvalue().startswith("already imported as mine 3 (imported)")
    path.write_bytes(_csv([(pairs[0].pk, 1.5), (pairs[0].pk, 2.5)]))
    with pytest.raises(CommandError) as refused:
        call_command("import_scores", str(path), *arguments)
    assert str(refused.value) == (
        "scores.csv refused, nothing stored (1 problems):\n"
        f"  line 3: duplicate: pair_id {pairs[0].pk} already has a score on line 2"
    )
    with pytest.raises(CommandError, match=r"options must be a JSON object, e\.g\. .*: not JSON"):
        call_command("import_scores", str(path), *arguments, "--options", "{model}")
    assert MetricConfig.objects.count() == 1


def test_api(staff_api, user_api):
    campaign = make_campaign(slug="api")
    pair = make_pair(campaign)
    form = {"campaign": "api", "name": "mine", "version": "1", "direction": "lower"}

    def post(client, data: bytes, **extra):
        upload = io.BytesIO(data)
        upload.name = "scores.csv"
        return client.post("/api/scores/import/", {**form, **extra, "file": upload}, format="multipart")

    assert post(user_api, _csv([(pair.pk, 1)])).status_code == 403
    created = post(staff_api, _csv([(pair.pk, 1)]))
    assert created.status_code == 201, created.json()
    body = created.json()
    config = MetricConfig.objects.get()
    assert body == {
        "metric_config": config.pk,
        "config_hash": config.config_hash,
        "metric": "mine",
        "label": "mine 1 (imported)",
        "created": True,
        "scores": 1,
    }
    assert config.config["options"] == {} and not config.higher_is_closer
    again = post(staff_api, _csv([(pair.pk, 1)]))
    assert again.status_code == 200 and again.json()["created"] is False
    refused = post(staff_api, _csv([(pair.pk, "nan")]), version="2")
    assert refused.status_code == 400
    assert refused.json() == {
        "problems": [{"line": 2, "message": "score 'nan' is not finite"}],
        "problem_count": 1,
        "detail": "nothing stored",
    }
    assert post(staff_api, _csv([(pair.pk, 1)]), campaign="nope").status_code == 404
    assert post(staff_api, _csv([(pair.pk, 1)]), direction="sideways").status_code == 400
    for threshold in ("nan", "inf"):
        refused = post(staff_api, _csv([(pair.pk, 1)]), version="2", threshold=threshold)
        assert refused.status_code == 400 and "threshold" in str(refused.json()), refused.json()
    bad_options = post(staff_api, _csv([(pair.pk, 1)]), version="2", options="[1]")
    assert bad_options.status_code == 400
    assert bad_options.json() == {"options": ['options must be a JSON object, e.g. {"model": "x"}, got list']}
    # The settings given once for the file are part of its signature, as from the command and the page.
    with_options = post(staff_api, _csv([(pair.pk, 1)]), options='{"model": "x"}')
    assert with_options.status_code == 201 and with_options.json()["label"] == "mine 1 (imported, {})".format(
        with_options.json()["config_hash"][:8]
    )
    assert MetricConfig.objects.get(pk=with_options.json()["metric_config"]).config["options"] == {"model": "x"}
    MetricConfig.objects.filter(pk=with_options.json()["metric_config"]).delete()
    listed = staff_api.get("/api/metric-configs/").json()["results"]
    assert [(row["label"], row["queue"]) for row in listed] == [("mine 1 (imported)", "external")]
    scores = staff_api.get(f"/api/scores/?metric_config={config.config_hash}").json()["results"]
    assert [(row["pair"], row["value"]) for row in scores] == [(pair.pk, 1.0)]


def test_imported_scores_on_the_report_and_in_the_paired_tests():
    built = make_scored_campaign()
    # A perfect metric (the gold truth of the builder) and its twin flipped: lower is closer.
    truth = {pair.pk: float(built.truth[pair.pk]) for pair in built.pairs}
    data = _csv([(pk, 1 - value) for pk, value in truth.items()])
    config = import_scores(built.campaign, data, "p.csv", ScoreFileMetric("oracle", "1", higher_is_closer=False)).config
    # A second version of the same metric: another configuration, compared with the first.
    noisy = _csv([(pk, value + index % 3) for index, (pk, value) in enumerate(truth.items())])
    second = import_scores(built.campaign, noisy, "p2.csv", ScoreFileMetric("oracle", "2")).config
    report = campaign_report(built.campaign.pk, resamples=0, use_cache=False).report
    mine = next(metric for metric in report.metrics if metric.id == config.pk)
    assert (mine.label, mine.arrow, mine.scores) == ("oracle 1 (imported)", "↓", ScoreCounts(24, 0, 0))
    assert report.result(config.pk, "all").n == report.result(built.configs["lev"].pk, "all").n
    meta = compute_meta(
        built.campaign.pk,
        Filters.build("volunteers", None, None, None, None, False),
        MetaOptions(resamples=20, seed=1),
        use_cache=False,
    ).evaluation
    assert config.pk in [metric.id for metric in meta.metrics]
    paired = [row for row in meta.paired if config.pk in (row.metric_a, row.metric_b)]
    assert len(paired) >= 5  # against each of the four computed metrics and its other version
    assert any({row.metric_a, row.metric_b} == {config.pk, second.pk} for row in meta.paired)
    assert [m.label for m in report.metrics if m.id in (config.pk, second.pk)] == [
        "oracle 1 (imported)",
        "oracle 2 (imported)",
    ]


def test_no_worker_and_no_sweep_ever_computes_an_imported_configuration(settings):
    settings.PARAEVAL_METRICS = ["lev"]
    campaign = make_campaign()
    pairs = [make_pair(campaign) for _ in range(3)]
    config = import_scores(campaign, _csv([(pairs[0].pk, 1.0)]), "s.csv", MINE).config
    tasks = dispatch.missing_tasks([pair.pk for pair in pairs])
    assert {task.queue for task in tasks} == {"cpu"}
    assert all(config.pk not in task.config_ids for task in tasks)
    # A message naming it anyway (by hand, an old queue) stores nothing and clears its markers.
    QueuedScore.objects.create(pair_id=pairs[1].pk, config_id=config.pk)
    assert runner.score_config_batch(config.pk, [pairs[1].pk, pairs[2].pk]) is None
    assert Score.objects.filter(metric_config=config).count() == 1
    assert not QueuedScore.objects.filter(config_id=config.pk).exists()


def test_imported_scores_on_the_dashboard_data_and_in_the_export(client, django_user_model):
    from tests.export_support import export_text, read_csv

    built = make_scored_campaign()
    data = _csv([(pair.pk, index / 10) for index, pair in enumerate(built.pairs)])
    config = import_scores(built.campaign, data, "d.csv", ScoreFileMetric("mine", "2.1")).config
    client.force_login(make_staff("s", "pw"))
    body = client.get(f"/staff/dashboard/data/?campaign={built.campaign.slug}").json()
    assert "mine 2.1 (imported)" in [metric["label"] for metric in body["metrics"]]
    assert body["results"][str(config.pk)]["all"]["n"] > 0
    header, rows = read_csv(export_text(built.campaign, "pairs", "csv"))
    assert "mine 2.1 (imported)" in header
    by_id = {row["pair_id"]: row for row in rows}
    assert [by_id[str(pair.pk)]["mine 2.1 (imported)"] for pair in built.pairs[:3]] == ["0.0", "0.1", "0.2"]
