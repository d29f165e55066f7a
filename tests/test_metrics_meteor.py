"""METEOR with WordNet from NLTK_DATA, and its refusal to run without WordNet."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scoring.metrics.base import MetricUnavailable
from scoring.metrics.meteor import Meteor, load_wordnet

ROOT = Path(__file__).resolve().parent.parent
EPS = 1e-9


@pytest.fixture(scope="session")
def meteor() -> Meteor:
    metric = Meteor()
    metric.check_available()
    return metric


def test_nltk_documented_example(meteor: Meteor) -> None:
    # nltk.translate.meteor_score's docstring: round(meteor_score([reference1], hypothesis1), 4) == 0.6944.
    hypothesis = "It is a guide to action which ensures that the military always obeys the commands of the party"
    reference = "It is a guide to action that ensures that the military will forever heed Party commands"
    assert round(meteor.score_batch([(reference, hypothesis)])[0], 4) == 0.6944


def _meteor(matches: int, hyp_len: int, ref_len: int, chunks: int) -> float:
    """METEOR from its parts, NLTK's parameters alpha 0.9, beta 3, gamma 0.5."""
    precision, recall = matches / hyp_len, matches / ref_len
    fmean = precision * recall / (0.9 * precision + 0.1 * recall)
    return fmean * (1 - 0.5 * (chunks / matches) ** 3)


@pytest.mark.parametrize(
    ("source", "hypothesis", "expected"),
    [
        # "the cat" and "alive ." match, "is"/"was" do not (no shared stem, no synonym): 4 of 5, 2 chunks.
        ("The cat is alive.", "The cat was alive.", _meteor(4, 5, 5, 2)),
        # A copy of 5 tokens: 1 chunk, penalty 0.5 * (1/5)^3.
        ("The cat sat down.", "The cat sat down.", _meteor(5, 5, 5, 1)),
        # sick / ill are WordNet synonyms: all 4 match in one chunk (without WordNet: 3 in 2 chunks).
        ("The man is ill", "The man is sick", _meteor(4, 4, 4, 1)),
        # NLTK looks synonyms up after stemming ("automobil"), so car / automobile do not match.
        ("The car is fast", "The automobile is fast", _meteor(3, 4, 4, 2)),
        # Porter stems: "running" / "runs" -> "run".
        ("She runs home", "She running home", _meteor(3, 3, 3, 1)),
        # Nothing in common.
        ("Blue sky", "Green grass", 0.0),
        ("Le café est très bon", "Le café est délicieux", _meteor(3, 4, 5, 1)),
    ],
)
def test_meteor_golden_values(meteor: Meteor, source: str, hypothesis: str, expected: float) -> None:
    assert meteor.score_batch([(source, hypothesis)])[0] == pytest.approx(expected, abs=EPS)


def test_meteor_on_very_long_sentences(meteor: Meteor) -> None:
    words = [f"w{i}" for i in range(600)]
    value = meteor.score_batch([(" ".join(words), " ".join([*words[:300], "x", *words[301:]]))])[0]
    # 599 of 600 match in 2 chunks.
    assert value == pytest.approx(_meteor(599, 600, 600, 2), abs=EPS)


def test_unavailable_without_wordnet(tmp_path: Path) -> None:
    metric = Meteor(nltk_data=str(tmp_path))
    with pytest.raises(MetricUnavailable, match=r"WordNet is not installed in NLTK_DATA=.*scripts/setup\.sh"):
        metric.check_available()
    # Scoring refuses too: no silent zeros.
    with pytest.raises(MetricUnavailable):
        metric.score_batch([("The cat is alive.", "The cat was alive.")])
    with pytest.raises(MetricUnavailable):
        metric.score_many([("The cat is alive.", "The cat was alive.")])


def test_unavailable_with_incomplete_wordnet(tmp_path: Path) -> None:
    wordnet = tmp_path / "corpora" / "wordnet"
    wordnet.mkdir(parents=True)
    source = Path(Meteor().nltk_data) / "corpora" / "wordnet"
    for item in source.iterdir():
        if item.name != "lexnames":  # what Debian's package lacks
            (wordnet / item.name).symlink_to(item)
    with pytest.raises(MetricUnavailable, match=r"incomplete .*missing lexnames"):
        Meteor(nltk_data=str(tmp_path)).check_available()
    with pytest.raises(MetricUnavailable):
        load_wordnet(str(tmp_path))


def test_unavailable_in_a_process_whose_nltk_data_is_empty(tmp_path: Path) -> None:
    environment = {**os.environ, "NLTK_DATA": str(tmp_path), "PARAEVAL_DATA_DIR": str(tmp_path)}
    environment.pop("DATABASE_URL", None)
    result = subprocess.run(
        [sys.executable, "manage.py", "list_metrics", "meteor", "--check", "--json", "--settings", "tests.settings"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    status = json.loads(result.stdout)
    assert status["name"] == "meteor"
    assert status["available"] is False
    assert "WordNet is not installed" in status["reason"]
    assert status["probe_value"] is None


def test_config_names_what_changes_the_numbers(meteor: Meteor) -> None:
    config = meteor.config()
    assert config["library"].startswith("nltk==")
    assert config["wordnet"] == "3.0"
    assert Meteor(alpha=0.85).config_hash != meteor.config_hash
