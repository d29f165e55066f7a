"""One seed setting: the command line, the dashboard and the API use
PARAEVAL_SEED and print the same Monte-Carlo figures for the same data."""

from __future__ import annotations

import base64
import csv
import io
import json
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.test import override_settings

from scoring.reports.service import shared_cache
from scoring.reports.tasks import compute_meta_evaluation
from tests.api_support import *  # noqa: F403
from tests.builders import make_scored_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    cache.clear()
    shared_cache().clear()


def _cli(slug: str) -> tuple[str, list[dict[str, str]]]:
    out = io.StringIO()
    call_command("evaluate_metrics", "--campaign", slug, "--meta", "--format", "csv", stdout=out)
    text = out.getvalue()
    markdown = io.StringIO()
    call_command("evaluate_metrics", "--campaign", slug, "--resamples", "0", stdout=markdown)
    return markdown.getvalue(), list(csv.DictReader(io.StringIO(text)))


def _api_meta(staff_api, slug: str, queue_dir: Path) -> dict:  # type: ignore[no-untyped-def]
    """The API's way: 202, the cpu task run with the arguments it was sent (read from the
    broker's folder), then 200."""
    url = f"/api/campaigns/{slug}/meta-evaluation/"
    assert staff_api.get(url).status_code == 202
    (message,) = [path for path in queue_dir.iterdir() if compute_meta_evaluation.name in path.read_text()]
    arguments = json.loads(base64.b64decode(json.loads(message.read_text())["body"]))[1]
    message.unlink()
    compute_meta_evaluation(**arguments)
    ready = staff_api.get(url)
    assert ready.status_code == 200
    return ready.json()["meta"]


def _figures_from_csv(rows: list[dict[str, str]], names: dict[int, str]) -> dict[str, float]:
    figures = {}
    for row in rows:
        if row["table"] == "meta_thresholds" and row["column"] == "CV acc." and row["value"]:
            figures[f"cv {row['row']}"] = float(row["value"])
        if row["table"] == "meta_paired" and row["statistic"] == "Spearman \u03c1" and row["column"] == "p perm.":
            figures[f"spearman {row['row']}"] = float(row["value"])
        if row["table"] == "meta_paired" and row["statistic"] == "Spearman \u03c1" and row["column"] == "p boot.":
            figures[f"spearman boot {row['row']}"] = float(row["value"])
    return figures


def _figures_from_api(meta: dict) -> dict[str, float]:
    names = {metric["id"]: f"{metric['label']} {metric['arrow']}" for metric in meta["metrics"]}
    figures = {}
    for row in meta["thresholds"]:
        if row["cv_accuracy"] is not None:
            figures[f"cv {names[row['metric']]}"] = row["cv_accuracy"]
    for test in meta["paired"]:
        if test["statistic"] == "spearman" and test["p_permutation"] is not None:
            pair = f"{names[test['metric_a']]} vs {names[test['metric_b']]}"
            figures[f"spearman {pair}"] = test["p_permutation"]
            figures[f"spearman boot {pair}"] = test["p_bootstrap"]
    return figures


@pytest.mark.parametrize("seed", [20250101, 7])
def test_cli_dashboard_and_api_print_the_same_figures(staff_api, staff_user, client, queue_dir, seed):  # type: ignore[no-untyped-def]
    scored = make_scored_campaign(pairs_per_origin=8)
    slug = scored.campaign.slug
    with override_settings(PARAEVAL_SEED=seed):
        preamble, rows = _cli(slug)
        meta = _api_meta(staff_api, slug, queue_dir)
        client.force_login(staff_user)
        dashboard = client.get("/staff/dashboard/data/", {"campaign": slug}).json()
    assert f"seed {seed}." in preamble
    assert meta["options"]["seed"] == seed and dashboard["bootstrap"]["seed"] == seed
    cli, api = _figures_from_csv(rows, {}), _figures_from_api(meta)
    assert cli and sorted(cli) == sorted(api)
    for key, value in api.items():
        assert cli[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key


def test_the_seed_setting_changes_the_monte_carlo_figures(staff_api, queue_dir):  # type: ignore[no-untyped-def]
    scored = make_scored_campaign(pairs_per_origin=8)
    figures = []
    for seed in (1, 2):
        with override_settings(PARAEVAL_SEED=seed):
            cache.clear()
            shared_cache().clear()
            figures.append(_figures_from_api(_api_meta(staff_api, scored.campaign.slug, queue_dir)))
    assert figures[0] != figures[1]
