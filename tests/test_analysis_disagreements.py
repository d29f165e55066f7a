"""A metric's worst disagreements with the people (the pair pages reached from the
dashboard's tables and Figure 2's points), checked against a computation written out here:
closeness ranks counted pair by pair, a distance read the other way round, worst first."""

from __future__ import annotations

import random

import numpy as np
import pytest
from django.core.cache import cache
from django.test import Client

from scoring.analysis.disagreements import closeness_ranks, worst_disagreements
from scoring.models import Score
from scoring.reports.service import shared_cache
from tests.builders import make_scored_campaign, make_staff


def counted_rank(scores: list[float | None], index: int, higher_is_closer: bool) -> float:
    """The closeness rank by counting: (pairs below + half the other equal ones) / (scored - 1)."""
    mine = scores[index]
    assert mine is not None
    others = [value for position, value in enumerate(scores) if value is not None and position != index]
    below = sum(value < mine for value in others) + sum(value == mine for value in others) / 2
    ascending = below / max(1, len(others))
    return ascending if higher_is_closer else 1 - ascending


def counted_worst(
    scores: list[float | None], verdicts: list[int], higher_is_closer: bool, limit: int
) -> list[tuple[int, float]]:
    rows = []
    for index, (score, verdict) in enumerate(zip(scores, verdicts, strict=True)):
        if score is None or verdict < 0:
            continue
        rank = counted_rank(scores, index, higher_is_closer)
        rows.append((index, 1 - rank if verdict == 1 else rank))
    rows.sort(key=lambda row: (-row[1], row[0]))
    return rows[:limit]


@pytest.mark.parametrize("higher_is_closer", [True, False])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_against_a_count_pair_by_pair(higher_is_closer: bool, seed: int) -> None:
    rng = random.Random(seed)
    n = 60
    # Scores on a coarse grid (many ties), some missing; verdicts with ties and no-verdicts (-1).
    scores = [None if rng.random() < 0.1 else rng.randrange(0, 12) / 11 for _ in range(n)]
    verdicts = [rng.choice([1, 1, 0, -1]) for _ in range(n)]
    values = np.array([np.nan if value is None else value for value in scores])
    found = worst_disagreements(values, np.array(verdicts, dtype=np.int8), higher_is_closer, 10)
    expected = counted_worst(scores, verdicts, higher_is_closer, 10)
    assert [item.index for item in found] == [index for index, _ in expected]
    for item, (_, disagreement) in zip(found, expected, strict=True):
        assert item.disagreement == pytest.approx(disagreement, abs=1e-12)
        assert item.rank == pytest.approx(counted_rank(scores, item.index, higher_is_closer), abs=1e-12)
        assert item.paraphrase == (verdicts[item.index] == 1)


def test_a_distance_is_read_the_other_way_round() -> None:
    # Distances: the paraphrase at 0.05 is the closest pair and agrees; the one at 0.9 does not.
    distances = np.array([0.05, 0.9, 0.5])
    verdicts = np.array([1, 1, 0], dtype=np.int8)
    assert closeness_ranks(distances, higher_is_closer=False).tolist() == [1.0, 0.0, 0.5]
    worst = worst_disagreements(distances, verdicts, higher_is_closer=False, limit=3)
    assert [(item.index, item.disagreement) for item in worst] == [(1, 1.0), (2, 0.5), (0, 0.0)]
    assert worst_disagreements(distances, np.full(3, -1, dtype=np.int8), False, 3) == []


@pytest.mark.django_db
def test_the_dashboard_data_names_the_pair_of_every_point_and_the_worst_pairs(client: Client) -> None:
    cache.clear()
    shared_cache().clear()
    built = make_scored_campaign(slug="linked", name="Linked")
    staff = make_staff()
    client.force_login(staff)
    report = client.get("/staff/dashboard/data/", {"campaign": "linked"}).json()
    by_id = {pair.pk: pair for pair in built.pairs}
    for config in built.configs.values():
        chart = report["charts"][str(config.pk)]
        assert len(chart["scatter_pairs"]) == len(chart["scatter"]) > 0
        stored = dict(Score.objects.filter(metric_config=config).values_list("pair_id", "value"))
        for (_, score, _), pair_id in zip(chart["scatter"], chart["scatter_pairs"], strict=True):
            assert score == pytest.approx(stored[pair_id], abs=1e-5)
        assert 0 < len(chart["worst"]) <= 5
        for item in chart["worst"]:
            assert by_id[item["pair"]].external_id == item["name"]
        # The same pairs, in the same order, as the pair list's worst disagreements.
        page = client.get(f"/staff/campaigns/linked/pairs/?metric={config.pk}").content.decode()
        listed = [page.index(f'<tr data-pair="{item["pair"]}">', page.index('id="worst"')) for item in chart["worst"]]
        assert listed == sorted(listed)
    page = client.get("/staff/dashboard/?campaign=linked").content.decode()
    assert 'data-pair-url="/staff/campaigns/linked/pairs/0/"' in page and 'id="worst-tables"' in page
    cache.clear()
    shared_cache().clear()
