"""Every figure of the dashboard on a fixed campaign, pinned to its value.

The campaign is :func:`tests.builders.make_scored_campaign` (seeded) with a system on every
pair. The test goes the dashboard's way: the JSON endpoint (point estimates), the intervals
from the cpu task, then the meta-evaluation from its task; it compares every table cell (text
and full-precision value), the chart data, the counts, the agreement coefficients and the
meta-evaluation with ``tests/test_analysis_pinned.json``. A change of level, orientation or
filter at any call site changes some number here. A few values are also recomputed here by
independent libraries (scikit-learn, SciPy, krippendorff), so the pinned file is not only
checked against itself.

After an intended change of the numbers, rewrite the file with
``PARAEVAL_PIN=write pytest tests/test_analysis_pinned.py`` and review its diff.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest
from django.conf import settings
from django.core.cache import cache
from scipy import stats
from sklearn.metrics import roc_auc_score

from annotate.labels import LABEL_ORDER
from annotate.models import Judgement, Pair
from annotate.pseudonyms import volunteer_pseudonym
from scoring.models import Score
from scoring.reports.service import meta_status, shared_cache
from scoring.reports.tasks import compute_meta_evaluation, compute_report_intervals
from tests.builders import make_scored_campaign, make_staff

pytestmark = pytest.mark.django_db
PINNED = Path(__file__).with_suffix(".json")
DATA = "/staff/dashboard/data/"
SYSTEMS = ("sys-a", "sys-b", "sys-c")
METRIC_ID_KEYS = {"metric", "metric_a", "metric_b"}
DROPPED = {"version", "generated_at", "last_changed", "campaign"}
# Pseudonyms differ between runs (tokens are random): pinned as "volunteer N" like the ids.
PSEUDONYMS: dict[str, str] = {}


def _normalise(value: Any, names: dict[int, str], volunteers: dict[int, str]) -> Any:
    """Database ids (which differ between runs) replaced by names; run-dependent fields dropped."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in DROPPED:
                continue
            if key in METRIC_ID_KEYS and isinstance(item, int):
                item = names[item]
            elif key == "beaten_by":
                item = [names[metric] for metric in item]
            key = names.get(int(key), key) if key.isdigit() else key
            out[key] = _normalise(item, names, volunteers)
        if "english_level" in out and "id" in out:  # a volunteer row
            out["id"] = volunteers[out["id"]]
        elif "arrow" in out and "id" in out:  # a metric
            out["id"] = names[out["id"]]
        return out
    if isinstance(value, list):
        return [_normalise(item, names, volunteers) for item in value]
    if isinstance(value, str) and value.startswith("#") and value[1:].isdigit():
        return volunteers.get(int(value[1:]), value)  # a volunteer row label in a table
    if isinstance(value, str) and value in PSEUDONYMS:
        return PSEUDONYMS[value]  # a volunteer's pseudonym (a hash of their random token)
    return value


def _compare(actual: Any, expected: Any, where: str = "") -> None:
    """Equal, floats within 1e-9 (relative): summation order may differ between BLAS builds."""
    if isinstance(expected, float) and isinstance(actual, (int, float)):
        assert math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-12), f"{where}: {actual!r} != {expected!r}"
    elif isinstance(expected, dict):
        assert isinstance(actual, dict) and sorted(actual) == sorted(expected), f"{where}: keys differ"
        for key in expected:
            _compare(actual[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{where}: lengths differ"
        for index, (left, right) in enumerate(zip(actual, expected, strict=True)):
            _compare(left, right, f"{where}[{index}]")
    else:
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"


@pytest.fixture
def dashboard(client, queue_dir):  # type: ignore[no-untyped-def]
    cache.clear()
    shared_cache().clear()
    built = make_scored_campaign(slug="pinned", name="Pinned")
    for index, pair in enumerate(built.pairs):
        Pair.objects.filter(pk=pair.pk).update(system=SYSTEMS[index % len(SYSTEMS)])
    user = make_staff("staff", "pw-for-tests")
    client.force_login(user)
    first = client.get(DATA, {"campaign": "pinned"}).json()
    assert first["bootstrap"]["state"] == "computing"
    filters = first["filters"]
    compute_report_intervals(built.campaign.pk, filters, first["bootstrap"]["resamples"], first["bootstrap"]["seed"])
    report = client.get(DATA, {"campaign": "pinned"}).json()
    assert report["bootstrap"]["state"] == "ready"
    # The dashboard's seed: the PARAEVAL_SEED setting (the report's seed too).
    assert first["bootstrap"]["seed"] == settings.PARAEVAL_SEED
    compute_meta_evaluation(built.campaign.pk, filters, 1000, settings.PARAEVAL_SEED)
    status = meta_status(built.campaign.pk, resamples=1000, enqueue=False)
    assert status.state == "ready"
    yield built, report, status.result.as_json()
    cache.clear()
    shared_cache().clear()


def test_every_dashboard_figure_is_pinned(dashboard):  # type: ignore[no-untyped-def]
    built, report, meta = dashboard
    names = {config.pk: config.label for config in built.configs.values()}
    volunteers = {volunteer.pk: f"volunteer {index + 1}" for index, volunteer in enumerate(built.volunteers)}
    PSEUDONYMS.clear()
    PSEUDONYMS.update(
        {
            volunteer_pseudonym(volunteer.token): f"volunteer {index + 1}"
            for index, volunteer in enumerate(built.volunteers)
        }
    )
    # Pairs differ in id and name between runs: a chart names them by their place in the campaign.
    place = {pair.pk: f"pair {index + 1}" for index, pair in enumerate(built.pairs)}
    for chart in report["charts"].values():
        chart["scatter_pairs"] = [place[pk] for pk in chart["scatter_pairs"]]
        for item in chart["worst"]:
            item["pair"] = place[item.pop("pair")]
            item.pop("name")
    actual = {
        "counts": report["counts"],
        "subsets": report["subsets"],
        "metrics": report["metrics"],
        "results": report["results"],
        "tables": report["tables"],
        "charts": report["charts"],
        "agreement": report["agreement"],
        "volunteers": report["volunteers"],
        "bootstrap": report["bootstrap"],
        "meta": meta,
    }
    actual = json.loads(json.dumps(_normalise(actual, names, volunteers)))
    if os.environ.get("PARAEVAL_PIN") == "write":
        PINNED.write_text(json.dumps(actual, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
        pytest.skip(f"wrote {PINNED.name}: review its diff")
    expected = json.loads(PINNED.read_text(encoding="utf-8"))
    for section in expected:
        _compare(actual[section], expected[section], section)
    assert sorted(actual) == sorted(expected)


def test_pinned_values_agree_with_independent_libraries(dashboard):  # type: ignore[no-untyped-def]
    built, report, _ = dashboard
    rows = Judgement.objects.filter(pair__campaign=built.campaign, is_training=False).values_list(
        "pair_id", "volunteer_id", "label"
    )
    ordinal = {label.value: position + 1 for position, label in enumerate(LABEL_ORDER[:4])}
    pairs = sorted({pair for pair, _, _ in rows})
    judges = sorted({volunteer for _, volunteer, _ in rows})
    matrix = np.full((len(judges), len(pairs)), np.nan)
    for pair, volunteer, label in rows:
        if label in ordinal:
            matrix[judges.index(volunteer), pairs.index(pair)] = ordinal[label]
    alpha = report["agreement"]["krippendorff_alpha"]["value"]
    assert alpha == pytest.approx(krippendorff.alpha(matrix, level_of_measurement="ordinal"), abs=1e-12)
    assert alpha != pytest.approx(krippendorff.alpha(matrix, level_of_measurement="nominal"), abs=1e-6)
    # Majority labels and the human mean scale from the same judgements.
    means = np.nanmean(matrix, axis=0)
    verdict = {}
    for column, pair in enumerate(pairs):
        values = matrix[:, column][np.isfinite(matrix[:, column])]
        yes, no = int(np.sum(values >= 3)), int(np.sum(values <= 2))
        if yes != no:
            verdict[pair] = yes > no
    assert report["counts"]["paraphrases"] == sum(verdict.values())
    assert report["counts"]["non_paraphrases"] == len(verdict) - sum(verdict.values())
    for key, config in built.configs.items():
        scores = dict(Score.objects.filter(metric_config=config, status="done").values_list("pair_id", "value"))
        labelled = [pair for pair in pairs if pair in verdict and pair in scores]
        sign = 1 if config.higher_is_closer else -1
        auc = roc_auc_score([verdict[p] for p in labelled], [sign * scores[p] for p in labelled])
        assert report["results"][str(config.pk)]["all"]["auc"]["value"] == pytest.approx(auc, abs=1e-12), key
        graded = [pair for pair in pairs if pair in scores]
        rho = stats.spearmanr([sign * scores[p] for p in graded], [means[pairs.index(p)] for p in graded]).statistic
        spearman = report["results"][str(config.pk)]["all"]["ordinal"]["spearman"]["r"]
        assert spearman == pytest.approx(rho, abs=1e-12), key
