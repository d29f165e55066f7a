"""PARAPHRASUS objectives of a campaign: stored per corpus, set by command and API, and the error
table of ``evaluate_metrics --paraphrasus`` and ``/api/campaigns/<slug>/paraphrasus/`` (figures
worked out by hand in the comments)."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from annotate.models import CorpusObjective
from tests.api_support import *  # noqa: F403
from tests.builders import make_campaign, make_metric_config, make_pair, make_score

pytestmark = pytest.mark.django_db

# lev (lower = closer) and a ParaPLUIE-like metric (natural threshold 0) on each corpus.
CORPORA = {
    # origin: (gold labels, lev, parapluie)
    "m": ([True, True, False, False], [0.1, 0.2, 0.7, 0.9], [1.0, -1.0, -1.0, -2.0]),
    "s": ([None] * 4, [0.3, 0.5, 0.6, 0.8], [-1.0, -1.0, 2.0, -3.0]),
    "t": ([None] * 2, [0.4, 0.5], [1.0, 1.0]),
    "x": ([None] * 2, [0.0, 0.0], [5.0, 5.0]),
}


@pytest.fixture
def campaign():
    campaign = make_campaign(slug="bench", name="Bench")
    lev = make_metric_config("lev")
    pp = make_metric_config("parapluie_fs", label="pp")
    for origin, (gold, lev_scores, pp_scores) in CORPORA.items():
        for label, lev_score, pp_score in zip(gold, lev_scores, pp_scores, strict=True):
            pair = make_pair(campaign, origin=origin, gold_label=label)
            make_score(pair, lev, lev_score)
            make_score(pair, pp, pp_score)
    return campaign


def run(command: str, *args: str) -> str:
    out = io.StringIO()
    call_command(command, *args, stdout=out)
    return out.getvalue()


def test_objectives_are_set_listed_and_refused_by_the_command(campaign):
    assert run("corpus_objective", "--campaign", "bench").splitlines() == [
        "m: no objective",
        "s: no objective",
        "t: no objective",
        "x: no objective",
    ]
    out = run("corpus_objective", "--campaign", "bench", "m=classify", "s=minimise", "t=maximise")
    assert out.splitlines() == ["m: classify", "s: minimise", "t: maximise", "x: no objective"]
    with pytest.raises(CommandError) as error:
        run("corpus_objective", "--campaign", "bench", "m=none", "q=classify", "s=sometimes")
    assert str(error.value) == (
        "campaign 'bench' has no pairs with origin 'q' (origins: 'm', 's', 't', 'x'); "
        "'sometimes' is not an objective for 's'; choose classify, minimise or maximise"
    )
    # All or nothing: m keeps its objective.
    assert dict(CorpusObjective.objects.values_list("origin", "objective")) == {
        "m": "classify",
        "s": "minimise",
        "t": "maximise",
    }
    run("corpus_objective", "--campaign", "bench", "m=none")
    assert not CorpusObjective.objects.filter(origin="m").exists()


def test_evaluate_metrics_paraphrasus_table(campaign):
    with pytest.raises(CommandError, match="no corpus of campaign 'bench' has an objective"):
        run("evaluate_metrics", "--campaign", "bench", "--paraphrasus")
    run("corpus_objective", "--campaign", "bench", "m=classify", "s=minimise", "t=maximise")
    out = run("evaluate_metrics", "--campaign", "bench", "--paraphrasus")
    lines = out.splitlines()
    assert lines[0] == "# Bench (bench): PARAPHRASUS objectives"
    # Equal values print bold in both rows (the tables' rule for "best").
    assert lines[-4:] == [
        "| metric | threshold | m (classify, n=4) | s (minimise, n=4) | t (maximise, n=2) | classify mean "
        "| minimise mean | maximise mean | overall |",
        "|:--|--:|--:|--:|--:|--:|--:|--:|--:|",
        # lev: fitted on m between 0.2 and 0.7 -> paraphrase when lev <= 0.45; m 0/4 wrong, s 1/4 (0.3),
        # t 1/2 (0.5); overall (0 + 25 + 50) / 3 = 25.0.
        "| lev | 0.45 (fitted on m) | **0.0** | **25.0** | 50.0 | **0.0** | **25.0** | 50.0 | 25.0 |",
        # pp at its natural 0: m 1/4 wrong (the second pair), s 1/4 (2.0), t 0/2; overall 50 / 3 = 16.7.
        "| pp | 0 (natural) | 25.0 | **25.0** | **0.0** | 25.0 | **25.0** | **0.0** | **16.7** |",
    ]
    assert "corpora without an objective (not counted): x" in out
    csv_out = run("evaluate_metrics", "--campaign", "bench", "--paraphrasus", "--format", "csv", "--metrics", "lev")
    assert "paraphrasus,lev,error %,overall,25.0,25.0,0" in csv_out.splitlines()
    with pytest.raises(CommandError, match="cannot fit on 'x'"):
        run("evaluate_metrics", "--campaign", "bench", "--paraphrasus", "--fit-on", "x")
    with pytest.raises(CommandError, match="it takes only --metrics, --fit-on and --format"):
        run("evaluate_metrics", "--campaign", "bench", "--paraphrasus", "--origin", "m")


def test_api_objectives_and_error_table(staff_api, api, campaign):
    assert api.get("/api/campaigns/bench/objectives/").status_code in (401, 403)
    answer = staff_api.put(
        "/api/campaigns/bench/objectives/",
        {"objectives": {"m": "classify", "s": "minimise", "t": "maximise"}},
        format="json",
    )
    assert answer.status_code == 200
    assert answer.json() == {
        "campaign": "bench",
        "objectives": {"m": "classify", "s": "minimise", "t": "maximise", "x": None},
    }
    # A corpus the campaign does not have is not found; a bad objective is a bad request.
    bad = staff_api.put("/api/campaigns/bench/objectives/", {"objectives": {"zz": "classify"}}, format="json")
    assert bad.status_code == 404
    assert bad.json() == {
        "objectives": ["campaign 'bench' has no pairs with origin 'zz' (origins: 'm', 's', 't', 'x')"]
    }
    assert (
        staff_api.put("/api/campaigns/bench/objectives/", {"objectives": {"m": "often"}}, format="json").status_code
        == 400
    )
    assert (
        staff_api.put("/api/campaigns/nope/objectives/", {"objectives": {"m": "classify"}}, format="json").status_code
        == 404
    )

    body = staff_api.get("/api/campaigns/bench/paraphrasus/").json()
    assert body["fit_on"] == "m" and body["without_objective"] == ["x"] and body["missing_objectives"] == []
    lev = next(metric for metric in body["metrics"] if metric["label"] == "lev")
    assert lev["threshold"] == pytest.approx(0.45)
    assert lev["rule"] == "paraphrase when lev <= 0.45"
    assert [(row["origin"], row["wrong"], row["pairs"]) for row in lev["corpora"]] == [
        ("m", 0, 4),
        ("s", 1, 4),
        ("t", 1, 2),
    ]
    assert lev["objectives"] == {"classify": 0.0, "minimise": 0.25, "maximise": 0.5}
    assert lev["overall"] == pytest.approx(0.25)
    unknown = staff_api.get("/api/campaigns/bench/paraphrasus/?fit_on=x")
    assert unknown.status_code == 404 and "cannot fit on 'x'" in unknown.json()["fit_on"][0]
    assert staff_api.get("/api/campaigns/bench/paraphrasus/?metrics=nope").status_code == 404
    unchanged = staff_api.put("/api/campaigns/bench/objectives/", {"objectives": {}}, format="json")
    assert unchanged.status_code == 200 and unchanged.json()["objectives"]["m"] == "classify"


def test_dashboard_section(client, staff_user, campaign):
    client.force_login(staff_user)
    page = client.get("/staff/dashboard/?campaign=bench").content.decode()
    assert 'id="paraphrasus-empty"' in page and "manage.py corpus_objective --campaign bench ORIGIN=classify" in page
    run("corpus_objective", "--campaign", "bench", "m=classify", "s=minimise", "t=maximise")
    page = client.get("/staff/dashboard/?campaign=bench").content.decode()
    assert 'data-toc="PARAPHRASUS"' in page
    assert '<th class="row-head" scope="row">lev</th>' in page
    assert '<td class="text" title="paraphrase when lev &lt;= 0.45">0.45 (fitted on m)</td>' in page
    assert '<td class=" best" title="0 wrong of 4">0.0</td>' in page
    assert '<td class=" best">16.7</td>' in page
    assert "corpora without an objective (not counted): x" in page
    refused = client.get("/staff/dashboard/?campaign=bench&fit_on=x").content.decode()
    assert 'id="paraphrasus-error"' in refused and "cannot fit on &#x27;x&#x27;" in refused


def test_objectives_take_json_only(staff_api, campaign):
    """A form or multipart body cannot carry the origin -> objective object: DRF read it as an
    empty object and answered 200 to a body it had ignored (found by schemathesis)."""
    before = staff_api.get("/api/campaigns/bench/objectives/").json()
    ignored = staff_api.put("/api/campaigns/bench/objectives/", {"objectives": '{"m": "classify"}'}, format="multipart")
    assert ignored.status_code == 415
    assert staff_api.get("/api/campaigns/bench/objectives/").json() == before
