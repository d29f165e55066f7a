"""Several judge models, metric specs, one queue per model, languages: everything but the models' numbers.

Nothing here loads a model: configurations are hashed from the files (a judge model folder
needs only its config.json to be described), dispatch and the status page read the database.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from scoring.metrics import fingerprint
from scoring.metrics.judges import JudgeModel, parse_models
from scoring.metrics.registry import InvalidSpec, build_specs, parse_spec
from scoring.metrics.specs import Spec, SpecError, parse, split_list
from scoring.models import MetricConfig, Score
from scoring.pipeline import configs, dispatch, runner, status
from tests.builders import make_campaign, make_pair

pytestmark = pytest.mark.django_db

# "the cat sat on the mat today ." against "The Cat sat on the mat today .", case kept: clipped
# 1- to 4-gram precisions 6/8, 5/7, 4/6, 3/5, same length (no brevity penalty). Lower-cased: 1.
CASED_BLEU = (6 / 8 * 5 / 7 * 4 / 6 * 3 / 5) ** 0.25


@pytest.fixture
def tiny_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny-mistral"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "mistral", "hidden_size": 64}), encoding="utf-8")
    (folder / "model.safetensors").write_bytes(b"first weights")
    return folder


@pytest.fixture
def two_judges(settings, tiny_folder: Path):
    settings.PARAPLUIE_MODELS = parse_models(f"smollm2[model=embedded]; tiny[model={tiny_folder},batch_size=4]")
    return settings


# --- The spec syntax --------------------------------------------------------------------------


def test_specs_parse_with_their_options_and_lists_split_outside_brackets() -> None:
    assert parse("bleu[tokenize=moses, lowercase=false]") == Spec(
        "bleu", (("tokenize", "moses"), ("lowercase", "false"))
    )
    assert (
        str(parse("bertscore[model=/m/bert-base-uncased,layers=9]")) == "bertscore[model=/m/bert-base-uncased,layers=9]"
    )
    assert split_list("lev, bleu[tokenize=moses,lowercase=false]; parapluie_fs") == [
        "lev",
        "bleu[tokenize=moses,lowercase=false]",
        "parapluie_fs",
    ]
    assert str(parse_spec("parapluie_fs[model=tiny]")) == "parapluie_fs_direct[model=tiny]"  # alias resolved


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bleu[lowercase]", "'bleu[lowercase]': option 'lowercase' is not key=value"),
        ("bleu[x=1", "'bleu[x=1': the options must be one [key=value,...] group at the end"),
        ("bleu[a=1,a=2]", "'bleu[a=1,a=2]': option 'a' is given twice"),
        ("[x=1]", "'[x=1]': expected a name such as bleu or parapluie_fs_direct"),
    ],
)
def test_malformed_specs_are_refused_naming_the_problem(text: str, message: str) -> None:
    with pytest.raises(SpecError) as error:
        parse(text)
    assert str(error.value).startswith(message)


def test_an_option_a_metric_does_not_take_is_refused_with_what_it_takes() -> None:
    with pytest.raises(InvalidSpec) as error:
        build_specs("bleu[layers=3]")
    assert (
        str(error.value) == "bleu[layers=3]: bleu has no option layers; it takes tokenize, lowercase, tokeniser, max_n"
    )
    with pytest.raises(InvalidSpec, match="lowercase must be true or false, got 'maybe'"):
        build_specs("bleu[lowercase=maybe]")
    with pytest.raises(InvalidSpec, match="tokenize must be one of moses, whitespace, nltk, basic_english, got 'x'"):
        build_specs("bleu[tokenize=x]")


def test_bleu_case_and_tokenisation_are_configurations_with_their_own_labels() -> None:
    (mrpc,) = build_specs("bleu")
    (paws,) = build_specs("bleu[tokenize=moses,lowercase=false]")
    (spaces,) = build_specs("bleu[tokenize=whitespace,lowercase=false]")
    assert (mrpc.label, paws.label, spaces.label) == ("bleu", "bleu[moses]", "bleu[whitespace]")
    assert len({mrpc.config_hash, paws.config_hash, spaces.config_hash}) == 3
    assert mrpc.config_hash == build_specs("bleu[lowercase=true]")[0].config_hash  # the default, spelt out
    pair = ("The Cat sat on the mat today.", "the cat sat on the mat today.")
    assert mrpc.score_batch([pair]) == [1.0]
    assert paws.score_batch([pair])[0] == pytest.approx(CASED_BLEU)
    rows = configs.ensure_metric_configs([mrpc, paws])
    assert [(row.label, row.spec) for row in rows] == [
        ("bleu", "bleu"),
        ("bleu[moses]", "bleu[tokenize=moses,lowercase=false]"),
    ]


def test_bertscore_backbone_and_layer_come_from_the_spec() -> None:
    (five,) = build_specs("bertscore[layers=5]")
    (six,) = build_specs("bertscore")
    assert (five.label, six.label) == ("bertscore[all-MiniLM-L6-v2 L5]", "bertscore[all-MiniLM-L6-v2 L6]")
    assert five.config_hash != six.config_hash
    (parascore,) = build_specs("parascore_free[layers=4]")
    assert parascore.label == "parascore_free[all-MiniLM-L6-v2 L4]"


# --- Several judge models ---------------------------------------------------------------------


def test_judge_models_parse_from_the_compact_syntax_and_json(tiny_folder: Path) -> None:
    compact = parse_models(f"smollm2[model=embedded]; Tiny.Model[model={tiny_folder},device=cuda,dtype=bfloat16]")
    assert compact == [
        JudgeModel("smollm2", "embedded", "cpu", "float32", 8),
        JudgeModel("tiny-model", str(tiny_folder), "cuda", "bfloat16", 16),
    ]
    assert [judge.queue for judge in compact] == ["llm.smollm2", "llm.tiny-model"]
    as_json = parse_models(
        json.dumps([{"name": "mistral", "model": "/models/m7b", "device": "cuda", "batch_size": 64}])
    )
    assert as_json == [JudgeModel("mistral", "/models/m7b", "cuda", "float32", 64)]
    for text, message in [
        ("a[device=cpu]", "a[device=cpu]: model= is missing (embedded, or a local folder)"),
        (
            "a[model=embedded,dtype=int8]",
            "a[model=embedded,dtype=int8]: dtype must be one of float32, float16, bfloat16",
        ),
        (
            "a[model=embedded,gpu=1]",
            "a[model=embedded,gpu=1]: unknown option(s) gpu; use model, device, dtype, batch_size",
        ),
        ("a[model=embedded]; a[model=/x]", "model name(s) given twice: a"),
    ]:
        with pytest.raises(SpecError) as error:
            parse_models(text)
        assert str(error.value).startswith(message)


def test_templates_times_models_give_distinct_configurations_on_their_own_queues(two_judges, tiny_folder) -> None:
    two_judges.PARAEVAL_METRICS = ["lev", "parapluie_fs_direct", "parapluie_direct[model=tiny]"]
    metrics, unavailable = configs.build_enabled()
    assert unavailable == []
    assert [(m.label, m.queue, m.spec) for m in metrics] == [
        ("lev", "cpu", "lev"),
        ("parapluie_fs_direct[SmolLM2-135M-Instruct]", "llm.smollm2", "parapluie_fs_direct[model=smollm2]"),
        ("parapluie_fs_direct[tiny-mistral]", "llm.tiny", "parapluie_fs_direct[model=tiny]"),
        ("parapluie_direct[tiny-mistral]", "llm.tiny", "parapluie_direct[model=tiny]"),
    ]
    assert metrics[2].batch_size == 4 and metrics[1].batch_size == 8
    rows = configs.enabled_configs()
    assert len({row.config_hash for row in rows}) == 4
    assert [row.queue for row in rows] == ["cpu", "llm.smollm2", "llm.tiny", "llm.tiny"]
    assert configs.all_queues() == ["cpu", "llm", "llm.smollm2", "llm.tiny"]
    out = io.StringIO()
    call_command("worker_queues", stdout=out)
    assert out.getvalue() == "cpu,llm,llm.smollm2,llm.tiny\n"
    out = io.StringIO()
    call_command("worker_queues", "--model", "tiny", stdout=out)
    assert out.getvalue() == "llm.tiny\n"
    with pytest.raises(CommandError, match="unknown judge model\\(s\\) mistral; PARAPLUIE_MODELS names: smollm2, tiny"):
        call_command("worker_queues", "--model", "mistral")
    with pytest.raises(InvalidSpec, match="unknown judge model 'mistral'; configured models"):
        build_specs("parapluie_direct[model=mistral]")


def test_new_weights_give_a_new_configuration_and_the_old_scores_stay(two_judges, tiny_folder) -> None:
    two_judges.PARAEVAL_METRICS = ["parapluie_direct[model=tiny]"]
    old = configs.enabled_configs()[0]
    pair = make_pair()
    Score.objects.create(pair=pair, metric_config=old, value=0.5)
    (tiny_folder / "model.safetensors").write_bytes(b"second weights, fine-tuned")
    configs._build_enabled.cache_clear()
    configs.forget_enabled()
    new = configs.enabled_configs()[0]
    assert new.pk != old.pk and new.config_hash != old.config_hash
    assert new.config["model"]["fingerprint"] == fingerprint.fingerprint(tiny_folder)
    assert new.label == old.label == "parapluie_direct[tiny-mistral]"
    # The old configuration keeps its row and its score; the new one has none yet.
    assert list(Score.objects.filter(metric_config=old).values_list("value", flat=True)) == [0.5]
    assert dispatch.missing_tasks([pair.pk]) == [dispatch.ScoringTask("llm.tiny", (new.pk,), (pair.pk,))]


# --- Languages --------------------------------------------------------------------------------


def test_templates_score_only_the_campaigns_of_their_language(settings) -> None:
    settings.PARAEVAL_METRICS = ["lev", "parapluie_direct", "parapluie_direct_fr"]
    english = make_pair(make_campaign(language="en"))
    french = make_pair(make_campaign(language="fr"))
    lev, direct, direct_fr = configs.enabled_configs()
    assert (direct.language, direct_fr.language, lev.language) == ("en", "fr", "")
    tasks = dispatch.missing_tasks([english.pk, french.pk])
    assert sorted((t.queue, t.config_ids, t.pair_ids) for t in tasks) == [
        ("cpu", (lev.pk,), (english.pk, french.pk)),
        ("llm.smollm2", (direct.pk,), (english.pk,)),
        ("llm.smollm2", (direct_fr.pk,), (french.pk,)),
    ]
    fresh, _ = dispatch.sweep_tasks(configs.enabled(), [], dispatch.timezone.now())
    assert sorted((t.queue, t.config_ids, t.pair_ids) for t in fresh) == sorted(
        (t.queue, t.config_ids, t.pair_ids) for t in tasks
    )
    # The worker agrees: a French template given an English pair leaves it alone.
    summary = runner.score_config_batch(direct_fr.pk, [english.pk])
    assert summary is not None and (summary.total, summary.scored, summary.failed) == (0, 0, 0)
    report = {row.label: row.pending for row in status.collect().configurations}
    assert report == {
        "lev": 2,
        "parapluie_direct[SmolLM2-135M-Instruct]": 1,
        "parapluie_direct_fr[SmolLM2-135M-Instruct]": 1,
    }


# --- score_pairs and the worker rebuild a configuration from its spec ---------------------------


def test_score_pairs_takes_specs_and_a_worker_rebuilds_a_configuration_from_its_spec(settings) -> None:
    settings.PARAEVAL_METRICS = ["lev"]
    campaign = make_campaign()
    pair = make_pair(campaign, source="The Cat sat on the mat today.", hypothesis="the cat sat on the mat today.")
    call_command(
        "score_pairs",
        "--campaign",
        campaign.slug,
        "--metrics",
        "bleu,bleu[tokenize=moses,lowercase=false]",
        "--no-progress",
        stdout=io.StringIO(),
    )
    values = dict(Score.objects.filter(pair=pair).values_list("metric_config__label", "value"))
    assert values == {"bleu": 1.0, "bleu[moses]": pytest.approx(CASED_BLEU)}
    with pytest.raises(CommandError, match="bleu\\[layers=3\\]: bleu has no option layers"):
        call_command("score_pairs", "--campaign", campaign.slug, "--metrics", "bleu[layers=3]", "--no-progress")
    # Not enabled, queued by a retry: the worker builds it from its stored spec.
    row = MetricConfig.objects.get(label="bleu[moses]")
    Score.objects.filter(metric_config=row).delete()
    summary = runner.score_config_batch(row.pk, [pair.pk])
    assert summary is not None and summary.scored == 1
    assert Score.objects.get(metric_config=row, pair=pair).value == pytest.approx(CASED_BLEU)
