"""Probe pairs in a judge's training mix: each fold's adapter learns from exactly the pairs and
probes outside its fold, never a probe of a source sentence it scores; the share asked for is
the share trained on; a bad share is refused naming the option or the variable.

Only the ``model``-marked test at the end trains (the tiny random Mistral, seconds); the others
use the spaCy parser and plain Python.
"""

from __future__ import annotations

import hashlib
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from scoring.metrics import tuned
from scoring.metrics.judge_training import assign_source_folds, distinct_probes, training_plan
from scoring.metrics.judge_training_options import LabelledPair, TrainingProbe, TuningError, TuningOptions
from scoring.metrics.judges import parse_models
from scoring.models import TunedJudge
from scoring.probes.training import NotEnoughProbes, training_probes, wanted_probes
from scoring.tuning import service as judge_tuning
from scoring.tuning.run import mixed_probes
from scoring.tuning.service import TuningRequestError
from tests.builders import make_campaign, make_pair
from tests.judge_models import record_learnt
from tests.test_settings import _load_settings

# Two pairs share the source sentence "The cat sat on the mat." (spaced differently): one fold.
PAIRS = [
    LabelledPair("The cat sat on the mat.", "A cat was sitting on the mat.", True, 1),
    LabelledPair("The  cat sat on the mat.", "The dog sat on the rug.", False, 2),
    LabelledPair("Paris beat Rome in 2004.", "In 2004 Paris defeated Rome.", True, 3),
    LabelledPair("Ann sold five cars.", "Five cars were sold by Ann.", True, 4),
    LabelledPair("Bob did not call Sue.", "Sue got no call from Bob.", True, 5),
    LabelledPair("Oil rose 3 percent.", "Gold fell sharply.", False, 6),
]


def _probe(pair: LabelledPair, hypothesis: str, label: bool) -> TrainingProbe:
    return TrainingProbe(pair.key, LabelledPair(pair.source, hypothesis, label))


PROBES = [
    _probe(PAIRS[0], "The mat sat on the cat.", False),
    _probe(PAIRS[0], "the cat sat on the mat.", True),
    _probe(PAIRS[2], "Rome beat Paris in 2004.", False),
    _probe(PAIRS[2], "Paris beat Rome in 2006.", False),
    _probe(PAIRS[3], "Ann did not sell five cars.", False),
    _probe(PAIRS[4], "Bob did not call Sue", True),
    # Built from a pair that is not in the mix (too long, say): no scored pair has its sentence.
    TrainingProbe("elsewhere", LabelledPair("Kim met Lee.", "Lee met Kim.", False)),
    TrainingProbe("elsewhere", LabelledPair("Kim met Lee.", "kim met lee.", True)),
]


def _sentence(text: str) -> str:
    return " ".join(text.split())


def _hash_fold(sentence: str, folds: int) -> int:
    return int.from_bytes(hashlib.sha256(sentence.encode()).digest()[:4], "big") % folds


@pytest.mark.parametrize("folds", [2, 3])
@pytest.mark.parametrize("seed", [1, 20250101])
def test_each_fold_adapter_learns_exactly_the_pairs_and_probes_of_the_other_source_sentences(
    folds: int, seed: int
) -> None:
    plan = training_plan(PAIRS, PROBES, folds, seed)
    # The pairs sharing a source sentence share a fold; every fold is used.
    assert plan.folds[PAIRS[0].key] == plan.folds[PAIRS[1].key]
    assert set(plan.folds.values()) == set(range(folds))
    # Each probe in the fold of its source pair; the two probes of the absent source in one hashed fold.
    by_key = {pair.key: pair for pair in PAIRS}
    for probe in PROBES[:6]:
        assert plan.probe_folds[probe.pair.key] == plan.folds[by_key[probe.group].key]
    kim = _hash_fold("Kim met Lee.", folds)
    assert plan.probe_folds[PROBES[6].pair.key] == plan.probe_folds[PROBES[7].pair.key] == kim
    # The exact training set of each adapter, written out independently of the plan's code.
    adapters = dict(plan.adapters)
    assert list(adapters) == ["full", *(f"fold-{fold}" for fold in range(folds))]
    assert adapters["full"] == [*PAIRS, *(probe.pair for probe in PROBES)]
    for fold in range(folds):
        expected = [pair for pair in PAIRS if plan.folds[pair.key] != fold]
        expected += [probe.pair for probe in PROBES if plan.probe_folds[probe.pair.key] != fold]
        assert adapters[f"fold-{fold}"] == expected
        # No source sentence of a pair this adapter scores is among those it learnt from.
        scored = {_sentence(pair.source) for pair in PAIRS if plan.folds[pair.key] == fold}
        learnt = {_sentence(pair.source) for pair in adapters[f"fold-{fold}"]}
        assert scored and not scored & learnt, (fold, scored & learnt)


def test_the_folds_of_a_small_mix_are_these() -> None:
    """The whole assignment on the six pairs, two folds, seed 1, traced by hand.

    random.Random(1) orders the five sentences Ann, Bob, Oil, Cat, Paris; each goes to the fold
    with the fewest pairs of its first pair's label, then the fewest pairs: Ann (paraphrase) to 0,
    Bob (paraphrase) to 1, Oil (not) to 0, Cat (paraphrase; its two pairs) to 1 (1 paraphrase
    each, 2 pairs against 1), Paris (paraphrase) to 0 (1 against 2). "Kim met Lee." hashes to 1.
    """
    plan = training_plan(PAIRS, PROBES, 2, 1)
    assert {pair.id: plan.folds[pair.key] for pair in PAIRS} == {1: 1, 2: 1, 3: 0, 4: 0, 5: 1, 6: 0}
    adapters = dict(plan.adapters)
    # fold-0 learns fold 1: the Cat and Bob pairs, their three probes and Kim's two.
    assert adapters["fold-0"] == [PAIRS[0], PAIRS[1], PAIRS[4], *(PROBES[i].pair for i in (0, 1, 5, 6, 7))]
    # fold-1 learns fold 0: the Paris, Ann and Oil pairs and the three probes of Paris and Ann.
    assert adapters["fold-1"] == [PAIRS[2], PAIRS[3], PAIRS[5], *(PROBES[i].pair for i in (2, 3, 4))]


def test_without_probes_the_folds_stay_those_of_the_pairs_alone() -> None:
    from scoring.metrics.judge_training import assign_folds

    plan = training_plan(PAIRS, [], 2, 1)
    assert plan.folds == assign_folds(PAIRS, 2, 1) and plan.probe_folds == {}
    assert training_plan(PAIRS, PROBES, 0, 1).adapters == [("full", [*PAIRS, *(probe.pair for probe in PROBES)])]


def test_source_folds_stay_balanced_by_label_when_every_sentence_is_its_own() -> None:
    items = [LabelledPair(f"sentence {i}", f"h{i}", i < 23, i) for i in range(34)]
    folds = assign_source_folds(items, 5, seed=1)
    sizes = [list(folds.values()).count(fold) for fold in range(5)]
    positives = [sum(1 for item in items if item.label and folds[item.key] == fold) for fold in range(5)]
    assert max(sizes) - min(sizes) <= 1 and max(positives) - min(positives) <= 1


def test_a_probe_that_repeats_a_pair_or_another_probe_is_dropped_and_counted() -> None:
    repeat = TrainingProbe(PAIRS[3].key, LabelledPair(PAIRS[3].source, PAIRS[3].hypothesis, False))
    kept, dropped = distinct_probes([PROBES[0], repeat, PROBES[0]], {pair.key for pair in PAIRS})
    assert kept == [PROBES[0]] and dropped == 2


def _demo_pairs(count: int) -> list[LabelledPair]:
    from annotate.importers.demo import DEMO_FILE

    records = [json.loads(line) for line in DEMO_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    usable = [record for record in records if "gold_label" in record][:count]
    return [LabelledPair(r["source"], r["hypothesis"], bool(r["gold_label"]), i) for i, r in enumerate(usable)]


@pytest.mark.parametrize(("share", "probes"), [(0.1, 4), (0.2, 10), (1 / 3, 20), (0.5, 40)])
def test_the_share_asked_for_is_the_share_trained_on(share: float, probes: int) -> None:
    pairs = _demo_pairs(40)
    chosen = training_probes(pairs, share, seed=20250101)
    assert wanted_probes(share, 40) == probes
    assert len(chosen) == probes and len({probe.pair.key for probe in chosen}) == probes
    assert len(chosen) / (len(chosen) + len(pairs)) == pytest.approx(share, abs=0.5 / (probes + 40))
    # Half controls (paraphrases), half swaps and changes, each from one of the pairs' source sentences.
    assert sum(probe.pair.label for probe in chosen) == probes // 2
    sources = {pair.key: pair.source for pair in pairs}
    assert all(probe.pair.source == sources[probe.group] for probe in chosen)
    assert training_probes(pairs, share, seed=20250101) == chosen
    # Training on the mix: the plan holds exactly those probes, none of them duplicates of a pair.
    plan = training_plan(pairs, chosen, 5, 20250101)
    assert len(dict(plan.adapters)["full"]) == 40 + probes


def test_no_share_means_no_probe_and_too_large_a_share_says_how_many_could_be_built() -> None:
    pairs = _demo_pairs(12)
    assert training_probes(pairs, 0.0, seed=1) == []
    with pytest.raises(NotEnoughProbes, match=r"a probe share of 0.95 with 12 labelled pairs needs 228 probe pairs, "):
        training_probes(pairs, 0.95, seed=1)
    with pytest.raises(TuningRequestError, match=r"needs 228 probe pairs, but only \d+ could be built from them"):
        mixed_probes(pairs, TuningOptions(probe_share=0.95, seed=1))
    # The worker builds from the same sample of max_pairs pairs that tune() keeps.
    assert len(mixed_probes(_demo_pairs(40), TuningOptions(probe_share=0.2, max_pairs=20, seed=1))) == 5


@pytest.mark.parametrize("share", [1.0, -0.1, 1.5])
def test_a_bad_share_is_refused_naming_the_option(share: float) -> None:
    with pytest.raises(TuningError) as caught:
        TuningOptions(probe_share=share).check()
    assert str(caught.value) == f"probe_share must be in [0, 1) (the probes' share of the training pairs), got {share}"


def test_the_share_is_part_of_a_tuned_judges_identity_only_when_there_are_probes() -> None:
    assert "probe_share" not in TuningOptions(seed=3).identity()
    options = TuningOptions(seed=3, folds=5, probe_share=0.25)
    assert options.identity()["probe_share"] == 0.25
    assert TuningOptions.from_identity(options.identity()) == options


@pytest.mark.django_db
def test_the_command_takes_the_share_and_refuses_a_bad_one(settings, tmp_path: Path) -> None:
    settings.PARAPLUIE_TUNED_DIR = tmp_path / "judges"
    settings.PARAPLUIE_MODELS = parse_models("smollm2[model=embedded]")
    campaign = make_campaign()
    for index in range(8):
        make_pair(campaign, source=f"source {index}", hypothesis=f"hypothesis {index}", gold_label=index < 4)
    with pytest.raises(CommandError) as caught:
        call_command("tune_judge", "--campaign", campaign.slug, "--reference", "gold", "--probe-share", "1.5")
    assert str(caught.value) == "probe_share must be in [0, 1) (the probes' share of the training pairs), got 1.5"
    assert TunedJudge.objects.count() == 0
    with pytest.raises(CommandError, match="argument --probe-share: invalid float value: 'half'"):
        call_command("tune_judge", "--campaign", campaign.slug, "--probe-share", "half")
    # The setting is the default; the option overrides it.
    settings.PARAEVAL_TUNING_PROBE_SHARE = 0.2
    assert judge_tuning.default_options().probe_share == 0.2
    call_command(
        "tune_judge", "--campaign", campaign.slug, "--reference", "gold", "--folds", "2", "--queue", stdout=StringIO()
    )
    call_command(
        "tune_judge",
        *("--campaign", campaign.slug, "--reference", "gold", "--folds", "2", "--queue", "--probe-share", "0.3"),
        stdout=StringIO(),
    )
    assert [row.options["probe_share"] for row in TunedJudge.objects.order_by("id")] == [0.2, 0.3]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("1", "PARAEVAL_TUNING_PROBE_SHARE=1.0 must be in [0, 1)"),
        ("lots", "PARAEVAL_TUNING_PROBE_SHARE='lots' is not a number"),
    ],
)
def test_a_bad_share_setting_stops_the_start_naming_the_variable(tmp_path: Path, value: str, message: str) -> None:
    env = {"SECRET_KEY": "x", "PARAEVAL_DATA_DIR": str(tmp_path), "PARAEVAL_TUNING_PROBE_SHARE": value}
    result = _load_settings(env)
    assert result.returncode != 0 and message in result.stderr


# --- Training for real, on the tiny random Mistral (seconds) ---------------------------------------


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.judge_models import save_tiny_mistral

    return save_tiny_mistral(tmp_path_factory.mktemp("tiny") / "tiny-mistral")


@pytest.mark.model
def test_a_tuning_with_probes_trains_each_fold_on_the_other_sources_and_routes_probes_by_their_fold(
    tiny_base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scoring.metrics import judge_training
    from scoring.metrics.lm import load_fresh
    from scoring.metrics.templates import get_template

    learnt = record_learnt(monkeypatch)
    pairs = _demo_pairs(16)
    options = TuningOptions(folds=2, batch_size=4, eval_every=2, learning_rate=5e-3, seed=3, rank=4, probe_share=0.2)
    probes = training_probes(pairs, options.probe_share, options.seed)
    assert len(probes) == 4
    lm = load_fresh(str(tiny_base))
    template = get_template("direct", [])
    result = judge_training.tune(
        lm, pairs, options, template, tmp_path, base_spec=str(tiny_base), base_name="tiny", probes=probes
    )
    assert (result.pairs, result.probes, result.probes_too_long) == (16, 4, 0)
    assert json.loads((result.folder / "judge.json").read_text())["settings"]["probe_share"] == 0.2
    on_disk = tuned.read_folds(result.folder)
    assert on_disk == {**result.folds, **result.probe_folds} and len(result.probe_folds) == 4
    assert tuned.read_trained(result.folder) == set(on_disk)
    items = [*pairs, *(p.pair for p in probes)]
    prompt = {item.key: tuple(judge_training.prompt_ids(lm, template, item)) for item in items}
    assert learnt["full"] == set(prompt.values())
    for fold in (0, 1):
        assert learnt[f"fold-{fold}"] == {prompt[key] for key, f in on_disk.items() if f != fold}, fold
        scored = {_sentence(pair.source) for pair in pairs if result.folds[pair.key] == fold}
        trained = {_sentence(item.source) for item in [*pairs, *(p.pair for p in probes)] if on_disk[item.key] != fold}
        assert not scored & trained
    assert all(p.pair.source in {pair.source for pair in pairs} for p in probes)


@pytest.mark.model
@pytest.mark.django_db
def test_the_command_tunes_with_probes_in_the_mix_and_keeps_the_rows_folds_to_its_pairs(
    settings, tiny_base: Path, tmp_path: Path
) -> None:
    settings.PARAPLUIE_TUNED_DIR = tmp_path / "judges"
    settings.PARAPLUIE_MODELS = parse_models(f"tiny[model={tiny_base},batch_size=4]")
    settings.PARAEVAL_METRICS = ["lev"]
    campaign = make_campaign()
    pairs = _demo_pairs(16)
    for pair in pairs:
        make_pair(campaign, source=pair.source, hypothesis=pair.hypothesis, gold_label=pair.label)
    out = StringIO()
    call_command(
        "tune_judge",
        *("--campaign", campaign.slug, "--reference", "gold", "--folds", "2", "--batch-size", "4"),
        *("--eval-every", "2", "--rank", "4", "--seed", "3", "--probe-share", "0.2"),
        stdout=out,
    )
    assert "training mix: 4 probe pairs (share 0.2) with the labelled pairs" in out.getvalue()
    row = TunedJudge.objects.get()
    assert row.status == TunedJudge.Status.DONE and row.options["probe_share"] == 0.2
    # The row's folds are the campaign's pairs (by id); the bundle's add the four probes.
    assert len(row.folds) == 16
    on_disk = tuned.read_folds(row.folder)
    assert len(on_disk) == 20
    assert json.loads((Path(row.folder) / "training.json").read_text())["probes"] == 4
