"""Metric identity: names, directions, queues, labels and configuration hashes.

A configuration hash is stored with every score, so it must change with anything that changes
the numbers and must be the same in every process. Building a metric (what the web process does
to compute the hash) must not import torch or any model library.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scoring.metrics.base import Direction, Metric
from scoring.metrics.bertscore import BertScore
from scoring.metrics.bleu import IBleu, SacreSentenceBleu, TorchtextBleu
from scoring.metrics.encoders import EMBEDDED_DISTRIBUTION, embedded_model_dir, resolve_model
from scoring.metrics.lexical import WordEditRate
from scoring.metrics.meteor import Meteor
from scoring.metrics.parascore import BertIBleu, ParaScoreFree
from scoring.metrics.registry import build_metric
from scoring.metrics.sbert import SbertCosine

ROOT = Path(__file__).resolve().parent.parent
BASELINES = [
    "lev",
    "wer",
    "bleu",
    "sacrebleu",
    "self_bleu",
    "ibleu",
    "meteor",
    "bertscore",
    "parascore",
    "parascore_free",
    "bert_ibleu",
    "sbert",
]
LLM_QUEUE = {"bertscore", "parascore", "parascore_free", "bert_ibleu", "sbert"}
HEAVY_MODULES = ["torch", "transformers", "bert_score", "sentence_transformers", "nltk", "sacrebleu", "sacremoses"]


@pytest.mark.parametrize("name", BASELINES)
def test_registry_builds_each_baseline(name: str) -> None:
    metric = build_metric(name)
    assert metric.name == name
    assert metric.queue == ("llm" if name in LLM_QUEUE else "cpu")
    expected_direction = Direction.LOWER_IS_CLOSER if name in {"lev", "wer"} else Direction.HIGHER_IS_CLOSER
    assert metric.direction is expected_direction
    assert metric.natural_threshold is None
    assert metric.description
    assert len(metric.config_hash) == 64
    json.dumps(metric.config())  # a configuration is plain JSON


def test_labels_name_the_model_and_layer() -> None:
    assert build_metric("bertscore").label == "bertscore[all-MiniLM-L6-v2 L6]"
    assert build_metric("parascore_free").label == "parascore_free[all-MiniLM-L6-v2 L6]"
    assert build_metric("sbert").label == "sbert[all-MiniLM-L6-v2]"
    assert build_metric("bleu").label == "bleu"
    assert TorchtextBleu(tokeniser="basic_english").label == "bleu[basic_english]"
    assert build_metric("ibleu").label == "ibleu[alpha=0.2]"


def test_embedded_model_identity_is_the_package_and_its_version() -> None:
    config = BertScore().config()
    assert config["model"] == "all-MiniLM-L6-v2"
    assert config["package"].startswith(f"{EMBEDDED_DISTRIBUTION}==")
    assert config["num_layers"] == 6
    assert config["bert_score"] and config["transformers"]
    # The same directory named by path is the same model, with the same hash.
    directory = embedded_model_dir()
    assert directory is not None
    assert BertScore(model=str(directory)).config_hash == BertScore().config_hash


def test_local_directory_identity_is_its_files_content_and_configured_name(tmp_path: Path) -> None:
    model = tmp_path / "bert-base-uncased"
    model.mkdir()
    config_text = json.dumps({"_name_or_path": "bert-base-uncased", "num_hidden_layers": 12})
    (model / "config.json").write_text(config_text)
    (model / "model.safetensors").write_bytes(b"weights, first revision")
    ref = resolve_model(str(model))
    files = hashlib.sha256(
        f"config.json={hashlib.sha256(config_text.encode()).hexdigest()}\n"
        f"model.safetensors={hashlib.sha256(b'weights, first revision').hexdigest()}\n".encode()
    ).hexdigest()
    assert ref.identity == {"model_name": "bert-base-uncased", "fingerprint": files}
    # The same files under another path (another node's mount) are the same model.
    copy = tmp_path / "elsewhere" / "bert-base-uncased"
    shutil.copytree(model, copy)
    assert resolve_model(str(copy)).identity == ref.identity
    # New weights under the same path: another configuration (the old scores keep their hash).
    before = BertScore(model=str(model), num_layers=9).config_hash
    (model / "model.safetensors").write_bytes(b"weights, second revision")
    resolve_model.cache_clear()
    assert BertScore(model=str(model), num_layers=9).config_hash != before
    metric = BertScore(model=str(model), num_layers=9)
    assert metric.label == "bertscore[bert-base-uncased L9]"
    assert metric.config_hash != BertScore(model=str(model), num_layers=8).config_hash


def _variants() -> list[tuple[Metric, Metric]]:
    return [
        (BertScore(num_layers=6), BertScore(num_layers=5)),
        (BertScore(), BertScore(model="some-org/other-model")),
        (TorchtextBleu(), TorchtextBleu(tokeniser="whitespace")),
        (TorchtextBleu(), TorchtextBleu(max_n=2)),
        (SacreSentenceBleu(), SacreSentenceBleu(smooth_method="floor")),
        (SacreSentenceBleu(), SacreSentenceBleu(lowercase=True)),
        (IBleu(alpha=0.2), IBleu(alpha=0.3)),
        (WordEditRate(), WordEditRate(normalisation="hypothesis_length")),
        (Meteor(), Meteor(gamma=0.4)),
        (ParaScoreFree(), ParaScoreFree(omega=0.1)),
        (ParaScoreFree(), ParaScoreFree(gamma=0.3)),
        (ParaScoreFree(), ParaScoreFree(num_layers=4)),
        (BertIBleu(), BertIBleu(beta=5)),
        (BertIBleu(), BertIBleu(tokeniser="nltk_lower")),
        (SbertCosine(), SbertCosine(model="some-org/other-encoder")),
    ]


@pytest.mark.parametrize(("first", "second"), _variants())
def test_a_changed_value_changes_the_hash(first: Metric, second: Metric) -> None:
    assert first.config_hash != second.config_hash


def test_device_and_batch_size_do_not_change_the_hash() -> None:
    # The same model on a GPU worker gives the same scores (to float32 rounding).
    assert BertScore(device="cpu").config_hash == BertScore(device="cuda", batch_size=8).config_hash
    assert SbertCosine(device="cpu").config_hash == SbertCosine(device="cuda").config_hash


def _subprocess(code: str) -> str:
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120, check=True
    )
    return result.stdout


def test_hashes_are_stable_across_processes() -> None:
    code = (
        "import django, json; django.setup()\n"
        "from scoring.metrics.registry import build_metric\n"
        f"print(json.dumps({{n: build_metric(n).config_hash for n in {BASELINES!r}}}))\n"
    )
    first, second = json.loads(_subprocess(code)), json.loads(_subprocess(code))
    assert first == second == {name: build_metric(name).config_hash for name in BASELINES}


def test_building_metrics_and_listing_them_imports_no_model_library() -> None:
    code = (
        "import django, json, sys; django.setup()\n"
        "from django.core.management import call_command\n"
        "from scoring.metrics.registry import build_metric\n"
        f"for name in {BASELINES!r}:\n"
        "    metric = build_metric(name)\n"
        "    metric.config_hash, metric.label, metric.check_available()\n"
        f"call_command('list_metrics', *{BASELINES!r})\n"
        f"print(json.dumps([m for m in {HEAVY_MODULES!r} if m in sys.modules]))\n"
    )
    loaded = json.loads(_subprocess(code).strip().splitlines()[-1])
    assert loaded == []
