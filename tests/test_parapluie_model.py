"""ParaPLUIE on the embedded model (SmolLM2-135M-Instruct, float32), the demo's pairs and real MRPC pairs.

The fast path (one forward pass per pair, batched, shared prefix cached) must give the paper's
two-pass formula to 1e-4: on the demo campaign's pairs (shipped with the project, so on any clone)
and, where the shared corpora are, on MRPC pairs (skipped with the reason elsewhere). Score signs
are not asserted: the 135M model judges paraphrases poorly (it leans to "No"); these tests prove
the arithmetic, not the metric's quality.
The model loads once per process (scoring.metrics.lm caches it).
"""

from __future__ import annotations

import json
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from annotate.importers.demo import DEMO_FILE
from scoring.metrics import parapluie_engine
from scoring.metrics.base import Pair
from scoring.metrics.lm import build_random_lm, load_lm
from scoring.metrics.parapluie import ParaPluie
from scoring.metrics.parapluie_engine import (
    PREFIX_ATTENTION,
    PromptTooLong,
    SharedPrefix,
    TemplateScorer,
    answer_spelling_mass,
    encode,
    generate,
    install_prefix_attention,
    log_ratios,
    reference_scores,
)
from scoring.metrics.templates import get_template
from tests.corpora import MISSING_REASON
from tests.corpora import MRPC as MRPC_DIR

pytestmark = pytest.mark.model

MRPC = MRPC_DIR / "msr_paraphrase_test.txt"
TOLERANCE = 1e-4  # the bound set for the fast path, float32
# Batching and padding change only the order of float32 sums.
SAME = 5e-5


@pytest.fixture(scope="module")
def demo_pairs() -> list[Pair]:
    """20 pairs of the demo campaign the project ships, spread over the file: runs on any clone."""
    with DEMO_FILE.open(encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    pairs = [(record["source"], record["hypothesis"]) for record in records if "training_position" not in record]
    return pairs[::3][:20]


@pytest.fixture(scope="module")
def mrpc_pairs() -> list[Pair]:
    """20 real MRPC test pairs, spread over the file (short and long sentences)."""
    if not MRPC.is_file():
        pytest.skip(MISSING_REASON)
    with MRPC.open(encoding="utf-8-sig") as handle:
        next(handle)
        rows = [line.rstrip("\n").split("\t") for line in handle]
    return [(row[3], row[4]) for row in rows[::86][:20]]


@pytest.fixture(scope="module")
def metrics() -> dict[str, ParaPluie]:
    return {name: ParaPluie(name, batch_size=8, max_new_tokens=24) for name in ("direct", "indirect", "fs_direct")}


def max_difference(first: list[float], second: list[float]) -> float:
    return max(abs(a - b) for a, b in zip(first, second, strict=True))


def test_answer_tokens_are_capitalised_single_tokens_the_model_prefers(
    metrics: dict[str, ParaPluie], demo_pairs: list[Pair]
) -> None:
    scorer = metrics["fs_direct"].scorer()
    tokenizer = scorer.lm.tokenizer
    assert tokenizer.convert_ids_to_tokens([scorer.answers.yes_id, scorer.answers.no_id]) == ["Yes", "No"]
    # What the model itself says right after its generation prompt: Yes/No, not yes/no or " Yes".
    for name in ("direct", "fs_direct"):
        texts = [metrics[name].scorer().question_text(*pair) for pair in demo_pairs[:4]]
        mass = answer_spelling_mass(scorer.lm, texts)
        assert max(mass, key=mass.__getitem__) == "'Yes'/'No'", mass
        assert mass["'Yes'/'No'"] > 10 * mass["'yes'/'no'"]


@pytest.mark.parametrize("name", ["direct", "fs_direct"])
def test_fast_path_equals_the_two_pass_reference(
    metrics: dict[str, ParaPluie], demo_pairs: list[Pair], name: str
) -> None:
    metric = metrics[name]
    fast = metric.score_batch(demo_pairs)
    details = metric.reference_details(demo_pairs)
    assert len(demo_pairs) >= 20
    assert max_difference(fast, [detail.value for detail in details]) < TOLERANCE
    # The authors' float32 mean loss rounds a sum of ~T nats: its own error grows with T.
    assert max_difference(fast, [detail.value_float32_mean for detail in details]) < 1e-3
    # T + 1 is the prompt's length: the tokens the mean cross-entropy runs over.
    prompts = metric.scorer().question_ids(demo_pairs)
    assert [detail.tokens for detail in details] == [len(ids) for ids in prompts]


def test_fast_path_equals_the_two_pass_reference_on_mrpc(metrics: dict[str, ParaPluie], mrpc_pairs: list[Pair]) -> None:
    metric = metrics["fs_direct"]
    fast = metric.score_batch(mrpc_pairs)
    assert max_difference(fast, metric.reference_scores(mrpc_pairs)) < TOLERANCE


def test_indirect_fast_path_equals_the_reference_on_the_same_explanations(
    metrics: dict[str, ParaPluie], demo_pairs: list[Pair]
) -> None:
    metric = metrics["indirect"]
    pairs = demo_pairs[:4]
    explanations = metric.explanations(pairs)
    tokenizer = metric.scorer().lm.tokenizer
    for explanation in explanations:
        assert explanation.strip()
        assert len(tokenizer(explanation, add_special_tokens=False)["input_ids"]) <= 24 + 2
    fast = metric.score_with_explanations(pairs, explanations)
    assert max_difference(fast, metric.reference_scores(pairs, explanations)) < TOLERANCE
    # Generation is greedy: the whole INDIRECT metric is deterministic.
    assert max_difference(metric.score_batch(pairs), fast) < SAME


def test_batched_generation_gives_the_same_indirect_scores_as_batch_1(demo_pairs: list[Pair]) -> None:
    """The live path generates E for many pairs at once (padded, the shared prefix's cache reused):
    the same explanations and scores as one pair at a time without any cache."""
    pairs = demo_pairs[:6]
    batched = ParaPluie("indirect", batch_size=6, max_new_tokens=24)
    single = ParaPluie("indirect", batch_size=1, max_new_tokens=24)
    scorer = single.scorer()
    assert len(scorer.question_prefix.ids) > 30  # the template's preamble is shared, and cached
    prompts = scorer.question_ids(pairs, max_new_tokens=24)
    one_by_one = generate(scorer.lm, prompts, max_new_tokens=24, batch_size=1, prefix=None)

    explanations = batched.explanations(pairs)

    assert explanations == one_by_one
    together = batched.score_batch(pairs)
    alone = [single.score_with_explanations([pair], [text])[0] for pair, text in zip(pairs, one_by_one, strict=True)]
    assert max_difference(together, alone) < TOLERANCE


@pytest.mark.parametrize("name", ["direct", "fs_direct"])
def test_scores_do_not_depend_on_batch_size_order_or_padding(
    metrics: dict[str, ParaPluie], demo_pairs: list[Pair], name: str
) -> None:
    scorer = metrics[name].scorer()
    prompts = scorer.question_ids(demo_pairs)
    alone = [
        log_ratios(scorer.lm, [ids], scorer.answers, batch_size=1, prefix=scorer.question_prefix)[0] for ids in prompts
    ]
    for batch_size in (3, 20):
        batched = log_ratios(scorer.lm, prompts, scorer.answers, batch_size=batch_size, prefix=scorer.question_prefix)
        assert max_difference(batched, alone) < SAME
    reversed_scores = log_ratios(scorer.lm, prompts[::-1], scorer.answers, batch_size=8, prefix=scorer.question_prefix)
    assert max_difference(reversed_scores[::-1], alone) < SAME
    lengths = {len(ids) for ids in prompts}
    assert len(lengths) > 5  # the batches really were padded


@pytest.mark.parametrize(("name", "shared_at_least"), [("direct", 60), ("fs_direct", 500)])
def test_the_cached_prefix_gives_the_same_scores_as_full_passes(
    metrics: dict[str, ParaPluie], demo_pairs: list[Pair], name: str, shared_at_least: int
) -> None:
    scorer = metrics[name].scorer()
    prefix = scorer.question_prefix
    assert len(prefix.ids) >= shared_at_least
    prompts = scorer.question_ids(demo_pairs)
    assert all(ids[: len(prefix.ids)] == prefix.ids for ids in prompts)
    cached = log_ratios(scorer.lm, prompts, scorer.answers, batch_size=8, prefix=prefix)
    full = log_ratios(scorer.lm, prompts, scorer.answers, batch_size=8, prefix=None)
    assert max_difference(cached, full) < SAME


def test_prompts_that_do_not_start_with_the_prefix_run_in_full(metrics: dict[str, ParaPluie]) -> None:
    metric = metrics["fs_direct"]
    scorer = metric.scorer()
    # The probes stop the shared prefix before the opening quote, which BPE merges with a
    # sentence's first character ('Ġ""' for a sentence that starts with a quote):
    pairs = [('"Hello," she said.', "She said hello."), ("'Tis the season.", "It is the season."), ("Ok.", "Fine.")]
    prompts = scorer.question_ids(pairs)
    shared = len(scorer.question_prefix.ids)
    assert all(ids[:shared] == scorer.question_prefix.ids for ids in prompts)
    assert len({ids[shared] for ids in prompts}) == 3
    # A prefix one token longer fits the third prompt only: the other two run without the cache.
    longer = SharedPrefix(prompts[2][: shared + 1])
    mixed = log_ratios(scorer.lm, prompts, scorer.answers, batch_size=8, prefix=longer)
    assert max_difference(mixed, metric.reference_scores(pairs)) < TOLERANCE


def test_unicode_and_braces(metrics: dict[str, ParaPluie]) -> None:
    metric = metrics["direct"]
    pairs = [("Le chat est vivant — naïve café 🐱.", "Le chat était vivant."), ("Use {x} and {{y}}.", "Use {x}.")]
    assert max_difference(metric.score_batch(pairs), metric.reference_scores(pairs)) < TOLERANCE


def test_a_prompt_longer_than_the_context_fails_alone(metrics: dict[str, ParaPluie], demo_pairs: list[Pair]) -> None:
    metric = metrics["direct"]
    long_sentence = "The cat sat on the mat. " * 2000
    outcomes = metric.score_many([demo_pairs[0], (long_sentence, "A cat."), ("", "empty source"), demo_pairs[1]])
    assert outcomes[1].value is None
    assert outcomes[1].error is not None
    assert outcomes[1].error.startswith("pair 1: the prompt is ")
    assert "more than SmolLM2-135M-Instruct's context of 8192 tokens" in outcomes[1].error
    assert "nothing is truncated" in outcomes[1].error
    assert outcomes[2].error == "pair 2: source is empty"
    alone = metric.score_batch([demo_pairs[0], demo_pairs[1]])
    assert max_difference([outcomes[0].value, outcomes[3].value], alone) < SAME  # type: ignore[list-item]
    with pytest.raises(PromptTooLong, match="pair 1: the prompt is"):
        metric.score_batch([demo_pairs[0], (long_sentence, "A cat.")])


def test_indirect_refuses_a_prompt_that_leaves_no_room_for_e(metrics: dict[str, ParaPluie]) -> None:
    metric = metrics["indirect"]
    scorer = metric.scorer()
    # A prompt that fits alone but not with 24 generated tokens and the follow-up turn.
    budget = scorer.lm.context_length - 10
    sentence = "cat " * budget
    length = len(encode(scorer.lm, scorer.question_text(sentence, "x")))
    while length > budget:
        sentence = sentence[: -4 * max(1, (length - budget) // 2)]
        length = len(encode(scorer.lm, scorer.question_text(sentence, "x")))
    outcome = metric.score_many([(sentence, "x")])[0]
    assert outcome.error is not None
    assert "plus up to" in outcome.error and "for E, the follow-up and the answer" in outcome.error


def test_lower_case_answers_are_another_configuration(tmp_path: Path, demo_pairs: list[Pair]) -> None:
    data = json.loads(get_template("direct").path.read_text(encoding="utf-8"))
    data["answers"] = {"yes": "yes", "no": "no"}
    (tmp_path / "direct_lower.json").write_text(json.dumps(data), encoding="utf-8")
    lower = ParaPluie("direct_lower", template_dirs=[tmp_path])
    upper = ParaPluie("direct")
    assert lower.config_hash != upper.config_hash
    pairs = demo_pairs[:3]
    scores = lower.score_batch(pairs)
    assert max_difference(scores, lower.reference_scores(pairs)) < TOLERANCE
    assert max_difference(scores, upper.score_batch(pairs)) > 1e-3


def test_multi_token_answers_equal_the_two_pass_reference(tmp_path: Path, demo_pairs: list[Pair]) -> None:
    """An answer of several tokens: the sum of its tokens' log-probabilities, by teacher forcing."""
    data = json.loads(get_template("direct").path.read_text(encoding="utf-8"))
    data["answers"] = {"yes": "Absolutely", "no": "No"}
    (tmp_path / "direct_long.json").write_text(json.dumps(data), encoding="utf-8")
    metric = ParaPluie("direct_long", template_dirs=[tmp_path], batch_size=4)
    answers = metric.scorer().answers
    tokenizer = metric.scorer().lm.tokenizer
    assert tokenizer.convert_ids_to_tokens(list(answers.yes_ids)) == ["Absol", "utely"]
    assert len(answers.no_ids) == 1 and not answers.single
    pairs = demo_pairs[:10]
    scores = metric.score_batch(pairs)
    assert max_difference(scores, metric.reference_scores(pairs)) < TOLERANCE
    # The extra pass does not reuse the wrong rows' caches: one pair at a time gives the same.
    assert max_difference(scores, [metric.score_batch([pair])[0] for pair in pairs[:4]] + scores[4:]) < SAME
    # And it is not the single-token score of the answers' first tokens.
    assert max_difference(scores, ParaPluie("direct").score_batch(pairs)) > 1.0


def test_a_french_template_scores_a_french_pair_with_oui_in_two_tokens() -> None:
    metric = ParaPluie("direct_fr", batch_size=4)
    answers = metric.scorer().answers
    assert (answers.yes, answers.no) == ("Oui", "Non")
    assert answers.yes_ids == (63, 9010)  # "O", "ui" in SmolLM2's tokenizer
    assert len(answers.no_ids) == 1
    pairs = [
        ("Le chat dort sur le canapé.", "Le chat est endormi sur le canapé."),
        ("Il pleut depuis ce matin.", "Le soleil brille depuis ce matin."),
        ("Marie a vendu sa voiture.", "La voiture de Marie a été vendue par elle."),
    ]
    scores = metric.score_batch(pairs)
    assert max_difference(scores, metric.reference_scores(pairs)) < TOLERANCE
    fs = ParaPluie("fs_direct_fr", batch_size=4)
    assert max_difference(fs.score_batch(pairs), fs.reference_scores(pairs)) < TOLERANCE


def test_the_model_loads_once_per_process(metrics: dict[str, ParaPluie]) -> None:
    first = metrics["direct"].language_model()
    assert load_lm("embedded", "cpu", "float32") is first
    assert ParaPluie("fs_direct").language_model() is first
    assert first.context_length == 8192
    # The scorer (answer tokens, prefix cache) is kept with the model, one per template.
    assert isinstance(metrics["fs_direct"].scorer(), TemplateScorer)
    assert ParaPluie("fs_direct").scorer() is metrics["fs_direct"].scorer()


def test_another_architecture_from_a_config_gives_the_same_equivalence(
    metrics: dict[str, ParaPluie], demo_pairs: list[Pair], tmp_path: Path
) -> None:
    """A small, randomly initialised Mistral-architecture model (the benchmark's GPU path)."""
    config = json.loads(
        (Path(__file__).resolve().parent.parent / "benchmarks/configs/mistral-7b-instruct-v0.2.json").read_text()
    )
    config.update(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4)
    config.update(num_key_value_heads=2, max_position_embeddings=4096)
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    tokenizer = metrics["fs_direct"].scorer().lm.tokenizer
    lm = build_random_lm(tmp_path / "config.json", tokenizer)
    assert type(lm.model).__name__ == "MistralForCausalLM"
    scorer = TemplateScorer(lm, get_template("fs_direct"))
    pairs = demo_pairs[:6]
    fast = scorer.score(pairs, batch_size=4, max_new_tokens=8)
    texts = [scorer.question_text(*pair) for pair in pairs]
    reference = [result.value for result in reference_scores(lm, texts, scorer.answers)]
    assert max_difference(fast, reference) < TOLERANCE
    # Its grouped-query attention (4 query heads on 2 key/value heads) attends to the prefix in place,
    # with torch's fused CPU kernel and with the portable arithmetic a GPU runs.
    assert install_prefix_attention(lm) and lm.model.config._attn_implementation == PREFIX_ATTENTION
    original = parapluie_engine.FUSED_CPU_KERNEL
    parapluie_engine.FUSED_CPU_KERNEL = False
    try:
        portable = scorer.score(pairs, batch_size=4, max_new_tokens=8)
    finally:
        parapluie_engine.FUSED_CPU_KERNEL = original
    assert max_difference(portable, reference) < TOLERANCE
    # bfloat16 weights (the GPU setting, also tried on CPU): the same random model rounded to bfloat16.
    half = build_random_lm(tmp_path / "config.json", tokenizer, dtype="bfloat16")
    assert half.dtype == "bfloat16"
    rounded = TemplateScorer(half, get_template("fs_direct")).score(pairs, batch_size=4, max_new_tokens=8)
    # The random model's scores are near 0.01-0.02: bfloat16 moves them by a few thousandths.
    assert 0 < max_difference(rounded, fast) < 5e-3


def test_the_prefix_is_attended_to_in_place_never_copied_per_batch(
    metrics: dict[str, ParaPluie], demo_pairs: list[Pair], monkeypatch: pytest.MonkeyPatch
) -> None:
    """FS-DIRECT's 526 shared tokens: each layer reads their batch-1 cache (parapluie_engine.prefix_attention);
    no DynamicCache, which concatenates the prefix into every row of a batch, is built. The fused CPU kernel
    and the portable arithmetic (what a GPU runs) both give the two-pass reference within 1e-4."""
    metric = metrics["fs_direct"]
    scorer = metric.scorer()
    pairs = demo_pairs[:8]
    prompts = scorer.question_ids(pairs)
    built: list[int] = []
    # The module the engine imports DynamicCache from at call time (transformers replaces its own
    # entry in sys.modules while it loads lazily).
    library = sys.modules["transformers"]

    class CountingCache(library.DynamicCache):
        def __init__(self, *args: object, **kwargs: object) -> None:
            built.append(1)
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(library, "DynamicCache", CountingCache)

    def scores() -> list[float]:
        return log_ratios(scorer.lm, prompts, scorer.answers, batch_size=3, prefix=scorer.question_prefix)

    in_place = scores()
    assert built == []
    assert scorer.lm.model.config._attn_implementation == PREFIX_ATTENTION
    monkeypatch.setattr(parapluie_engine, "FUSED_CPU_KERNEL", False)
    portable = scores()
    assert built == []
    reference = metric.reference_scores(pairs)
    assert max_difference(in_place, reference) < TOLERANCE
    assert max_difference(portable, reference) < TOLERANCE
    # The previous method (the prefix's cache expanded over each batch) still agrees, and builds a cache per batch.
    monkeypatch.setitem(scorer.lm.derived, "parapluie:prefix_attention", False)
    expanded = scores()
    assert len(built) == 3  # 8 prompts in batches of 3
    assert max_difference(expanded, in_place) < SAME


def test_list_templates_shows_the_prompt_through_the_chat_template() -> None:
    out = StringIO()
    call_command("list_templates", "--show", "fs_direct", stdout=out)
    text = out.getvalue()
    assert "--- prompt rendered by SmolLM2-135M-Instruct's chat template:" in text
    assert (
        '<|im_start|>user\nA: "The cat is alive."; B: "The cat was alive."<|im_end|>\n<|im_start|>assistant\n' in text
    )
    assert "<|im_start|>assistant\nNo<|im_end|>" in text  # the few-shot answers are assistant turns
    assert "shared prefix cached once: 526 tokens" in text
    assert "answer tokens: 'Yes' = id 10539, 'No' = id 5230" in text
    out = StringIO()
    call_command("list_templates", "--show", "indirect", stdout=out)
    assert "E is generated:" in out.getvalue()
    assert "<|im_start|>assistant\n<E: the explanation the model generates><|im_end|>" in out.getvalue()


@pytest.mark.parametrize("name", ["direct", "fs_direct"])
def test_a_tuned_judges_fast_path_equals_the_two_pass_reference_merged_and_applied(
    tmp_path: Path, demo_pairs: list[Pair], name: str
) -> None:
    """A tuned judge runs its full adapter merged into one base copy and its folds' adapters
    applied (not merged) on another, switched per pair by cross-fitting fold: the fast path
    (shared prefix cached per adapter) must still give the two-pass formula within 1e-4, for the
    full adapter and each fold's."""
    from scoring.metrics import tuned
    from tests.judge_models import save_random_adapters

    pairs = demo_pairs[:9] if name == "direct" else demo_pairs[:5]
    folds = {tuned.pair_key(*pair): index % 2 for index, pair in enumerate(pairs[:-1])}  # the last one: full
    folder = save_random_adapters(
        tmp_path / "judge", base_spec="embedded", base_name="smollm2", template=name, folds=folds
    )
    metric = ParaPluie(name, model=str(folder), batch_size=4)
    assert metric.adapters_for(pairs) == [f"fold-{index % 2}" for index in range(len(pairs) - 1)] + ["full"]
    fast = metric.score_batch(pairs)
    reference = metric.reference_scores(pairs)
    assert max_difference(fast, reference) < TOLERANCE
    # The adapters do change the scores (random LoRA weights): the base model gives other numbers,
    # and each pair's score is its own fold adapter's, not the other fold's.
    base = ParaPluie(name, batch_size=4).score_batch(pairs)
    assert sum(abs(a - b) for a, b in zip(fast, base, strict=True)) / len(pairs) > 1e-2
    by_adapter = {adapter: metric.score_with_adapter(pairs, adapter) for adapter in ("full", "fold-0", "fold-1")}
    gaps = []
    for index, score in enumerate(fast[:-1]):
        own, other = f"fold-{index % 2}", f"fold-{1 - index % 2}"
        assert score == pytest.approx(by_adapter[own][index], abs=SAME)
        gaps.append(abs(score - by_adapter[other][index]))
    assert sum(gaps) / len(gaps) > 1e-2
    assert fast[-1] == pytest.approx(by_adapter["full"][-1], abs=SAME)
