"""The robustness card of every metric and the calibration of ParaPLUIE on the dashboard's JSON,
each figure recomputed here by an implementation of its own (loops over source groups and
resamples, SciPy's Spearman, a loop over bins, minimize_scalar on the log-loss), the line that
says how to build a probe set when there is none, and the page in Chromium (screenshots at
1366x768 and 390x844)."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from scipy.stats import spearmanr
from selenium.webdriver.common.by import By

from annotate.labels import Label
from annotate.models import Pair
from scoring.models import Score
from scoring.probe_models import ProbePair
from scoring.reports.tables import NO_PROBES_NOTE
from tests.builders import make_campaign, make_judgement, make_metric_config, make_pair, make_staff, make_volunteer
from tests.test_analysis_cards import ece_by_loop, temperature_by_scipy
from tests.test_analysis_robustness import bag_of_words_cosine, bigram_overlap
from tests.test_probes_pages import SOURCES
from tests.test_staff_browser import _fresh_caches, log_in, wait, window  # noqa: F401 - autouse

DATA = "/staff/dashboard/data/"
RESAMPLES = 200
SEED = 20250101
KINDS = ("paws_swap", "number", "date", "negation")
# (metric, label, score of a probe pair): two ParaPLUIE templates, each a metric of its own.
METRICS = (
    ("bow", "bag of words", bag_of_words_cosine),
    ("bigrams", "bigrams", bigram_overlap),
    ("parapluie_direct", "parapluie_direct[toy]", lambda s, h: 6 * bag_of_words_cosine(s, h) - 3),
    ("parapluie_fs_direct", "parapluie_fs_direct[toy]", lambda s, h: 6 * bigram_overlap(s, h) - 3),
)
EXTRA_SOURCES = [
    ("The committee approved the budget for the new library on Tuesday.", "On Tuesday the budget was approved."),
    ("Rain fell over Paris and Lyon for three days in May 2003.", "It rained for three days in Paris."),
    ("The players from Spain beat the team from Italy in the final.", "Spain won the final against Italy."),
]


def build() -> dict[str, int]:
    """Campaign "news": its probe set scored by four metrics, then 40 judged pairs scored by
    the two ParaPLUIE templates (P(yes) three times too sharp for one of them)."""
    campaign = make_campaign(slug="news", name="News")
    for source, hypothesis in [*SOURCES, *EXTRA_SOURCES]:
        make_pair(campaign, source=source, hypothesis=hypothesis, gold_label=True)
    call_command("build_probes", "--campaign", "news", "--seed", str(SEED), stdout=StringIO())
    configs = {metric: make_metric_config(metric, label=label) for metric, label, _ in METRICS}
    for pair in Pair.objects.filter(campaign__slug="news-probes"):
        for metric, _, score in METRICS:
            Score.objects.create(pair=pair, metric_config=configs[metric], value=score(pair.source, pair.hypothesis))
    rng = np.random.default_rng(SEED)
    volunteers = [make_volunteer(campaign) for _ in range(4)]
    for i in range(40):
        pair = make_pair(campaign, source=f"Sentence {i} of the judged pairs.", hypothesis=f"Its paraphrase {i}.")
        logit = float(rng.normal(0, 1.5))
        yes = rng.binomial(4, 1 / (1 + np.exp(-logit)))
        for v, volunteer in enumerate(volunteers):
            make_judgement(pair, volunteer, Label.SAME_MEANING if v < yes else Label.VERY_DIFFERENT)
        Score.objects.create(pair=pair, metric_config=configs["parapluie_direct"], value=logit)
        Score.objects.create(pair=pair, metric_config=configs["parapluie_fs_direct"], value=3 * logit)
    return {metric: config.pk for metric, config in configs.items()}


# --- the card, recomputed here ----------------------------------------------------------------


def probe_rows(config_id: int) -> list[tuple[int, str, str, int | None, float]]:
    """(pair id, kind, group, swaps, score) of every probe pair, by pair id."""
    scores = dict(Score.objects.filter(metric_config_id=config_id).values_list("pair_id", "value"))
    return [
        (row.pair_id, row.kind, row.group, row.swaps, scores[row.pair_id])
        for row in ProbePair.objects.filter(probe_set__campaign__slug="news-probes").order_by("pair_id")
    ]


def by_loop(per_group: list[tuple[float, float]]) -> tuple[float, float | None, float | None]:
    """The figure (sum of numerators / sum of weights) and its 95% percentile interval over
    resampled groups, one resample at a time (none from one group); groups in the order of
    their first probe pair."""
    numerator = np.array([n for n, _ in per_group])
    weight = np.array([w for _, w in per_group])
    g = len(per_group)
    if g == 1:
        return numerator.sum() / weight.sum(), None, None
    draws = np.random.default_rng(SEED).multinomial(g, [1 / g] * g, size=RESAMPLES)
    estimates = []
    for counts in draws:
        total_weight = sum(counts[i] * weight[i] for i in range(g))
        if total_weight > 0:
            estimates.append(sum(counts[i] * numerator[i] for i in range(g)) / total_weight)
    return numerator.sum() / weight.sum(), np.percentile(estimates, 2.5), np.percentile(estimates, 97.5)


def groups_of(rows, kinds):  # type: ignore[no-untyped-def]
    result: dict[str, list] = {}
    for row in rows:
        if row[1] in kinds:
            result.setdefault(row[2], []).append(row)
    return result


def expected_card(config_id: int) -> dict[str, tuple[float, float, float]]:
    rows = probe_rows(config_id)
    card = {}
    controls = groups_of(rows, {"control"})
    for kind in KINDS:
        per_group = []
        for group, probes in groups_of(rows, {kind}).items():
            if group not in controls:
                continue
            wins = sum(1.0 if p[4] < c[4] else 0.5 if p[4] == c[4] else 0.0 for p in probes for c in controls[group])
            per_group.append((wins, len(probes) * len(controls[group])))
        card[kind] = by_loop(per_group)
    spearman, r_precision = [], []
    for members in groups_of(rows, {"original", "multi_swap"}).values():
        if len(members) < 2 or all(m[1] == "original" for m in members) or all(m[1] != "original" for m in members):
            continue
        swaps = [m[3] for m in members]
        scores = [m[4] for m in members]
        rho = spearmanr([-s for s in swaps], scores).statistic
        spearman.append((0.0 if np.isnan(rho) else rho, 1.0))
        original = scores[swaps.index(0)]
        tied_top = sum(1 for s in scores if s == max(scores))
        r_precision.append((1 / tied_top if original == max(scores) else 0.0, 1.0))
    card["swap_spearman"] = by_loop(spearman)
    card["swap_r_precision"] = by_loop(r_precision)
    originals = {m[2]: m[4] for m in rows if m[1] == "original"}
    card["asymmetry"] = by_loop([(abs(originals[m[2]] - m[4]), 1.0) for m in rows if m[1] == "reversed"])
    card["length_effect"] = by_loop([(m[4] - originals[m[2]], 1.0) for m in rows if m[1] == "padded"])
    return card


@pytest.fixture
def report(client, settings):  # type: ignore[no-untyped-def]
    settings.PARAEVAL_BOOTSTRAP_RESAMPLES = RESAMPLES
    settings.PARAEVAL_SEED = SEED
    ids = build()
    client.force_login(make_staff())
    response = client.get(DATA, {"campaign": "news"})
    assert response.status_code == 200
    return ids, response.json()


@pytest.mark.django_db
def test_every_card_figure_equals_a_loop_written_here(report) -> None:  # type: ignore[no-untyped-def]
    _, data = report
    section = data["cards"]["robustness"]
    assert section["state"] == "ready" and section["probe_campaign"] == "news-probes"
    # One card per metric configuration: each ParaPLUIE template has its own.
    labels = [card["label"] for card in section["cards"]]
    assert sorted(labels) == sorted(label for _, label, _ in METRICS)
    table = next(t for t in data["tables"] if t["key"] == "robustness")
    assert [row["label"] for row in table["rows"]] == labels
    intervals = 0
    for card, row in zip(section["cards"], table["rows"], strict=True):
        expected = expected_card(card["metric"])
        shown = {**card["below_control"], **{k: card[k] for k in expected if k not in KINDS}}
        for column, key in enumerate([*KINDS, "swap_spearman", "swap_r_precision", "asymmetry", "length_effect"]):
            value, low, high = expected[key]
            figure = shown[key]
            assert figure["value"] == pytest.approx(value, abs=1e-12), (card["label"], key)
            if low is None or high is None:
                assert (figure["low"], figure["high"]) == (None, None)
                assert row["cells"][column]["text"] == f"{value:.3f}"
                continue
            assert (figure["low"], figure["high"]) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
            assert row["cells"][column]["text"] == f"{value:.3f} [{low:.3f}\u2013{high:.3f}]"
            intervals += 1
    assert intervals >= 4 * 5  # most figures rest on several source pairs
    bow = next(card for card in section["cards"] if card["label"] == "bag of words")
    # The bag of words ties every PAWS-style swap with its controls: one half, blind.
    assert bow["below_control"]["paws_swap"]["value"] == 0.5


@pytest.mark.django_db
def test_calibration_of_each_template_equals_an_independent_fit(report, client) -> None:  # type: ignore[no-untyped-def]
    ids, data = report
    section = data["cards"]["calibration"]
    assert section["target"] == "volunteers" and section["folds"] == 5 and section["seed"] == SEED
    assert [card["metric"] for card in section["cards"]] == [ids["parapluie_direct"], ids["parapluie_fs_direct"]]
    pairs = Pair.objects.filter(campaign__slug="news", scores__metric_config_id=ids["parapluie_direct"])
    shares = {pair.pk: np.mean([j.label == "same_meaning" for j in pair.judgements.all()]) for pair in pairs}
    for card in section["cards"]:
        scores = dict(Score.objects.filter(metric_config_id=card["metric"]).values_list("pair_id", "value"))
        judged = [pk for pk in sorted(scores) if pk in shares]
        s = np.array([scores[pk] for pk in judged])
        y = np.array([shares[pk] for pk in judged])
        assert card["pairs"] == 40
        assert card["ece"] == pytest.approx(ece_by_loop(1 / (1 + np.exp(-s)), y), abs=1e-12)
        assert card["temperature"] == pytest.approx(temperature_by_scipy(s, y), abs=1e-5)
    direct, sharp = section["cards"]
    assert sharp["temperature"] == pytest.approx(3 * direct["temperature"], rel=1e-6)
    assert sharp["ece"] > sharp["ece_after"]
    gold = client.get(DATA, {"campaign": "news", "reference": "gold"}).json()["cards"]["calibration"]
    assert gold["target"] == "gold" and gold["cards"] == []  # no ParaPLUIE score on a gold-labelled pair
    table = next(t for t in data["tables"] if t["key"] == "temperature")
    assert table["columns"] == ["pairs", "ECE", "Brier", "T (all pairs)", "T per fold", "ECE after T", "Brier after T"]
    assert table["rows"][1]["cells"][3]["text"] == f"{sharp['temperature']:.2f}"
    assert table["rows"][1]["cells"][4]["text"] == ", ".join(f"{t:.2f}" for t in sharp["fold_temperatures"])


@pytest.mark.django_db
def test_a_score_on_the_probe_set_changes_the_dashboard_version(client, settings) -> None:  # type: ignore[no-untyped-def]
    settings.PARAEVAL_BOOTSTRAP_RESAMPLES = 0
    campaign = make_campaign(slug="news")
    make_pair(campaign, source=SOURCES[0][0], hypothesis=SOURCES[0][1], gold_label=True)
    call_command("build_probes", "--campaign", "news", "--seed", str(SEED), stdout=StringIO())
    client.force_login(make_staff())
    before = client.get(DATA, {"campaign": "news"}).json()
    assert before["cards"]["robustness"]["state"] == "unscored"
    assert "has no scores yet" in next(t for t in before["tables"] if t["key"] == "robustness")["note"]
    config = make_metric_config("bow", label="bag of words")
    for pair in Pair.objects.filter(campaign__slug="news-probes"):
        Score.objects.create(pair=pair, metric_config=config, value=bag_of_words_cosine(pair.source, pair.hypothesis))
    after = client.get(DATA, {"campaign": "news"}).json()
    assert after["version"] != before["version"]
    assert [card["label"] for card in after["cards"]["robustness"]["cards"]] == ["bag of words"]


@pytest.mark.django_db
def test_without_a_probe_set_the_card_says_how_to_build_one(client) -> None:  # type: ignore[no-untyped-def]
    make_pair(make_campaign(slug="plain", name="Plain"))
    client.force_login(make_staff())
    data = client.get(DATA, {"campaign": "plain"}).json()
    assert data["cards"]["robustness"] == {**data["cards"]["robustness"], "state": "none", "cards": []}
    assert next(t for t in data["tables"] if t["key"] == "robustness")["note"] == NO_PROBES_NOTE
    page = client.get("/staff/dashboard/", {"campaign": "plain"}).content.decode()
    assert "<code>manage.py build_probes --campaign plain</code>" in page
    assert '<a href="/staff/campaigns/plain/probes/">probe page of Plain</a>' in page
    assert "<dt>below control</dt><dd>Share of probes the metric scores below" in page
    assert "What it cannot: how well the judge ranks pairs (the AUC; a temperature keeps the" in page


@pytest.mark.django_db
def test_loading_a_probe_set_costs_three_queries_more_whatever_its_size(django_assert_num_queries) -> None:  # type: ignore[no-untyped-def]
    from scoring.reports import dataset

    build()
    campaign = Pair.objects.filter(campaign__slug="news").first().campaign  # type: ignore[union-attr]
    # The seven loads of a campaign, then the probe pairs, their scores and the configurations.
    with django_assert_num_queries(10):
        loaded = dataset.load(campaign, dataset.Filters())
    assert loaded.probes is not None and len(loaded.probes.kinds) == 48 and len(loaded.probes.metrics) == 4


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_cards_and_reliability_diagram_in_chromium(browser, live_server, artifacts_dir: Path, settings) -> None:  # type: ignore[no-untyped-def]
    settings.PARAEVAL_BOOTSTRAP_RESAMPLES = RESAMPLES
    settings.PARAEVAL_SEED = SEED
    build()
    log_in(browser, live_server, "/staff/dashboard/?campaign=news")
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "table[data-table=robustness] tbody tr"))
    rows = browser.find_elements(By.CSS_SELECTOR, "table[data-table=robustness] tbody tr")
    # By metric name (bigrams, bow, parapluie_...), as every table of the dashboard.
    assert [row.find_element(By.TAG_NAME, "th").text for row in rows] == [
        "bigrams",
        "bag of words",
        "parapluie_direct[toy]",
        "parapluie_fs_direct[toy]",
    ]
    bow_cells = [td.text for td in rows[1].find_elements(By.TAG_NAME, "td")]
    assert bow_cells[0].startswith("0.500")
    assert browser.find_element(By.ID, "robustness-samples").is_displayed()
    assert not browser.find_element(By.ID, "robustness-none").is_displayed()
    temperature = browser.find_elements(By.CSS_SELECTOR, "table[data-table=temperature] tbody tr")
    assert [row.find_element(By.TAG_NAME, "th").text for row in temperature] == [
        "parapluie_direct[toy]",
        "parapluie_fs_direct[toy]",
    ]
    figures = browser.find_elements(By.CSS_SELECTOR, "#reliability-grid figcaption")
    assert [f.text for f in figures] == [
        "Figure 8a — parapluie_direct[toy] ↑: reliability",
        "Figure 8b — parapluie_fs_direct[toy] ↑: reliability",
    ]
    points = browser.execute_script(
        "const c = window.paraevalDashboard.charts;"
        "return [...c.keys()].filter(k => k.startsWith('reliability-'))"
        ".map(k => c.get(k).data.datasets.map(d => d.data.length));"
    )
    assert len(points) == 2 and all(before > 0 and after > 0 and diagonal == 2 for before, after, diagonal in points)
    for size, suffix in (((1366, 768), "desktop"), ((390, 844), "phone")):
        window(browser, size)
        for section in ("section-robustness", "section-temperature"):
            browser.execute_script(f"document.getElementById('{section}').scrollIntoView()")
            browser.save_screenshot(str(artifacts_dir / f"dashboard_{section}_{suffix}.png"))
        assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")

    # A campaign without a probe set: the card says how to build one.
    make_pair(make_campaign(slug="plain", name="Plain"))
    window(browser, (1366, 768))
    browser.get(f"{live_server.url}/staff/dashboard/?campaign=plain")
    wait(browser, lambda b: b.find_element(By.ID, "robustness-none").is_displayed())
    assert browser.find_element(By.ID, "robustness-none").text.startswith(
        "To build a probe set from this campaign's pairs: manage.py build_probes --campaign plain, or the form of the "
        "probe page of Plain;"
    )
    assert not browser.find_element(By.CSS_SELECTOR, "#table-robustness .note").is_displayed()  # the generic one
    assert not browser.find_element(By.ID, "robustness-samples").is_displayed()
    assert not browser.find_element(By.ID, "figure-8").is_displayed()
    browser.execute_script("document.getElementById('section-robustness').scrollIntoView()")
    browser.save_screenshot(str(artifacts_dir / "dashboard_section-robustness_none.png"))


@pytest.mark.django_db
def test_evaluate_metrics_prints_both_cards(settings) -> None:  # type: ignore[no-untyped-def]
    settings.PARAEVAL_BOOTSTRAP_RESAMPLES = RESAMPLES
    settings.PARAEVAL_SEED = SEED
    build()
    out = StringIO()
    call_command("evaluate_metrics", "--campaign", "news", stdout=out)
    text = out.getvalue()
    assert "### Robustness on the probe set" in text
    assert "_Probe set " in text and "48 probe pairs from 5 source pairs._" in text
    assert "| bag of words | 0.500 [0.500\u20130.500] | 1.000 | 1.000 [1.000\u20131.000] |" in text
    assert "### Calibration of ParaPLUIE and a cross-fitted temperature" in text
    assert "| parapluie_fs_direct[toy] | 40 | 0.169 | 0.060 | 3.38 | 3.15, 3.48, 3.26, 3.55, 3.49 | 0.046 |" in text
