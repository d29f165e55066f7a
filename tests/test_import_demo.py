"""The shipped demo campaign: what it contains, and ``load_demo`` loading it exactly once."""

from __future__ import annotations

import io
import json
import re
from collections import Counter

import pytest
from django.core.management import call_command

from annotate.importers.demo import DEMO_FILE
from annotate.labels import Label
from annotate.models import Campaign, Pair
from tests.builders import make_campaign

ORIGINS = {"demo-paraphrase", "demo-non-paraphrase", "demo-swap", "demo-partial"}


def demo_lines() -> list[dict[str, object]]:
    return [json.loads(line) for line in DEMO_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]


def words(text: str) -> Counter[str]:
    return Counter(re.findall(r"[\w'$%:.-]+", text.lower().replace(".", " ")))


def test_demo_has_five_training_pairs_that_teach_the_whole_scale():
    training = [line for line in demo_lines() if "training_position" in line]
    assert [line["training_position"] for line in training] == [1, 2, 3, 4, 5]
    assert {line["expected_label"] for line in training} == {label.value for label in Label}
    for line in training:
        assert len(str(line["explanation"])) > 30
        # Distinct from the guideline examples (which are all about a cat).
        assert "cat" not in f"{line['source']} {line['hypothesis']}".lower()


def test_demo_campaign_pairs_cover_every_kind_with_a_gold_label():
    pairs = [line for line in demo_lines() if "training_position" not in line]
    assert len(pairs) >= 60
    counts = Counter(line["origin"] for line in pairs)
    assert set(counts) == ORIGINS
    assert min(counts.values()) >= 10
    for line in pairs:
        assert line["gold_label"] is (line["origin"] == "demo-paraphrase")
        assert line["source"] != line["hypothesis"]
    ids = [line["id"] for line in demo_lines()]
    assert len(ids) == len(set(ids))
    texts = [(line["source"], line["hypothesis"]) for line in pairs]
    assert len(texts) == len(set(texts))


def test_demo_swaps_use_the_same_words_in_another_order():
    swaps = [line for line in demo_lines() if line.get("origin") == "demo-swap"]
    assert {
        "source": "Are there any flights from New York to Florida tomorrow?",
        "hypothesis": "Are there any flights from Florida to New York tomorrow?",
    }.items() <= next(line for line in swaps if "Florida" in str(line["source"])).items()
    same_words = [line for line in swaps if words(str(line["source"])) == words(str(line["hypothesis"]))]
    negations = [line for line in swaps if re.search(r"\b(not|never|unsafe)\b", str(line["hypothesis"]))]
    assert len(same_words) >= 12  # agents, objects, numbers, places and times swapped
    assert len(negations) >= 3
    assert len(same_words) + len(negations) >= len(swaps) - 2


def test_demo_has_longer_sentences_numbers_and_punctuation():
    pairs = [line for line in demo_lines() if "training_position" not in line]
    texts = [str(line["source"]) + " " + str(line["hypothesis"]) for line in pairs]
    assert sum(len(str(line["source"])) > 100 for line in pairs) >= 3
    assert sum(bool(re.search(r"\d", text)) for text in texts) >= 15
    assert any("%" in text for text in texts) and any("$" in text for text in texts)
    assert any("\u201c" in text or "(" in text for text in texts)


@pytest.mark.django_db
def test_load_demo_creates_the_campaign_once(settings):
    settings.PARAEVAL_DEMO_CAMPAIGN = "demo-test"
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    lines = demo_lines()
    assert out.getvalue().splitlines()[:4] == [
        "Created demo campaign 'demo-test' (ParaEval demo).",
        f"Imported {len(lines)} pairs into campaign 'demo-test'.",
        "  format: jsonl",
        "  training pairs: 5",
    ]
    campaign = Campaign.objects.get(slug="demo-test")
    assert (campaign.name, campaign.judges_per_pair, campaign.quota) == ("ParaEval demo", 3, 50)
    assert campaign.pairs.count() == len(lines)
    assert campaign.pairs.filter(is_training=True).count() == 5
    assert campaign.pairs.filter(is_training=False, gold_label__isnull=True).count() == 0
    assert set(campaign.pairs.filter(is_training=False).values_list("origin", flat=True)) == ORIGINS

    # Staff changed the campaign since: a restart changes nothing.
    Campaign.objects.filter(pk=campaign.pk).update(quota=20)
    first_ids = list(campaign.pairs.values_list("id", flat=True))
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    assert out.getvalue().strip() == f"Demo campaign 'demo-test' already has {len(lines)} pairs; nothing changed."
    assert list(Campaign.objects.get(slug="demo-test").pairs.values_list("id", flat=True)) == first_ids
    assert Campaign.objects.get(slug="demo-test").quota == 20
    assert Campaign.objects.count() == 1


@pytest.mark.django_db
def test_load_demo_fills_an_existing_empty_campaign_without_changing_it(settings):
    settings.PARAEVAL_DEMO_CAMPAIGN = "mine"
    make_campaign(slug="mine", name="My own", judges_per_pair=1, quota=10)
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    assert "Created demo campaign" not in out.getvalue()
    campaign = Campaign.objects.get(slug="mine")
    assert (campaign.name, campaign.judges_per_pair, campaign.quota) == ("My own", 1, 10)
    assert Pair.objects.filter(campaign=campaign).count() == len(demo_lines())
