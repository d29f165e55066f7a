"""``manage.py list_metrics``: what is registered, its configuration hash and whether it runs here."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from scoring.metrics.registry import build_metric

BASELINES = ["lev", "wer", "bleu", "sacrebleu", "self_bleu", "ibleu", "meteor"]
MODELS = ["bertscore", "parascore", "parascore_free", "bert_ibleu", "sbert"]


def _run(*args: str) -> str:
    out = StringIO()
    call_command("list_metrics", *args, stdout=out)
    return out.getvalue()


def test_lists_every_baseline_with_its_identity() -> None:
    output = _run()
    lines = {line.split()[0]: line for line in output.splitlines() if line.strip()}
    for name in BASELINES + MODELS:
        metric = build_metric(name)
        line = lines[name]
        assert metric.label in line
        assert metric.config_hash[:12] in line
        assert f"  {metric.queue}  " in line
        assert ("↓" if name in {"lev", "wer"} else "↑") in line
        assert line.rstrip().endswith("yes")
    assert "--check loads each model" in output


def test_json_output_has_full_hashes_and_no_probe_without_check() -> None:
    statuses = [json.loads(line) for line in _run("bleu", "bertscore", "--json").splitlines()]
    assert [status["name"] for status in statuses] == ["bleu", "bertscore"]
    assert statuses[1]["config_hash"] == build_metric("bertscore").config_hash
    assert statuses[1]["queue"] == "llm"
    assert statuses[1]["direction"] == "higher"
    assert all(status["available"] and status["probe_value"] is None for status in statuses)


def test_check_scores_the_probe_pair() -> None:
    statuses = [json.loads(line) for line in _run("lev", "bleu", "--check", "--json").splitlines()]
    # "The cat is alive." / "The cat was alive.": LEV 2/18; no common 4-gram, BLEU 0.
    assert statuses[0]["probe_value"] == pytest.approx(2 / 18)
    assert statuses[1]["probe_value"] == 0.0
    assert statuses[0]["probe_seconds"] >= 0.0


@pytest.mark.model
def test_check_loads_a_model() -> None:
    output = _run("sbert", "--check")
    assert "sbert[all-MiniLM-L6-v2]" in output
    assert "yes (0.93" in output


def test_unavailable_metric_shows_the_reason(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    settings.NLTK_DATA = str(tmp_path)
    output = _run("meteor", "lev", "--check")
    meteor_line = next(line for line in output.splitlines() if line.startswith("meteor "))
    assert meteor_line.rstrip().endswith("no")
    assert f"meteor: unavailable: WordNet is not installed in NLTK_DATA={tmp_path}" in output


def test_aliases_are_accepted_and_unknown_names_refused() -> None:
    statuses = [json.loads(line) for line in _run("parapluie_fs", "--json").splitlines()]
    assert [status["name"] for status in statuses] == ["parapluie_fs_direct"]
    with pytest.raises(CommandError, match="unknown metric 'blue'; known metrics: lev, wer, bleu"):
        _run("blue")


@pytest.mark.model  # saves a tiny transformer model
def test_parapluie_is_listed_once_per_judge_model(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from scoring.metrics.judges import parse_models
    from tests.judge_models import save_tiny_mistral

    tiny = save_tiny_mistral(tmp_path / "tiny-mistral")
    settings.PARAPLUIE_MODELS = parse_models(f"smollm2[model=embedded]; tiny[model={tiny},batch_size=4]")
    statuses = [json.loads(line) for line in _run("parapluie_direct", "lev", "--json").splitlines()]
    assert [(status["name"], status["label"], status["queue"]) for status in statuses] == [
        ("parapluie_direct", "parapluie_direct[SmolLM2-135M-Instruct]", "llm.smollm2"),
        ("parapluie_direct", "parapluie_direct[tiny-mistral]", "llm.tiny"),
        ("lev", "lev", "cpu"),
    ]
    assert statuses[0]["config_hash"] != statuses[1]["config_hash"]
    assert all(status["available"] for status in statuses)
    table = _run("parapluie_direct")
    assert "parapluie_direct[SmolLM2-135M-Instruct]" in table and "parapluie_direct[tiny-mistral]" in table
