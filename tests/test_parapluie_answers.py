"""Answer tokens: ParaPLUIE runs only where "yes" and "no" are single tokens after the prompt.

Small tokenizers built here (character-level BPE with a chat template) stand for models whose
vocabularies split the answers or merge them into the prompt's last token.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from scoring.metrics.base import MetricUnavailable
from scoring.metrics.lm import CausalLM, TokenizerOnly
from scoring.metrics.parapluie_engine import (
    common_prefix,
    find_answer_tokens,
    find_shared_prefix,
    fitting_batch_size,
    render,
    row_bytes,
)
from scoring.metrics.templates import get_template

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
CHARACTERS = sorted(set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:'\"!?{}%\n-_()<>|"))


def tiny_tokenizer(merges: list[tuple[str, str]]) -> Any:
    """A character-level BPE tokenizer with the given merges and a ChatML-like chat template."""
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    vocab: dict[str, int] = {"<|end|>": 0, "<|user|>": 1, "<|assistant|>": 2}
    for character in CHARACTERS:
        vocab.setdefault(character, len(vocab))
    for left, right in merges:
        vocab.setdefault(left + right, len(vocab))
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(models.BPE(vocab=vocab, merges=merges)),
        eos_token="<|end|>",
        additional_special_tokens=["<|user|>", "<|assistant|>"],
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


WHOLE_WORDS = [("Y", "e"), ("Ye", "s"), ("N", "o")]


def test_single_token_answers_are_found() -> None:
    tokens = TokenizerOnly(tiny_tokenizer(WHOLE_WORDS), "tiny")
    for name in ("direct", "indirect", "fs_direct"):
        answers = find_answer_tokens(tokens, get_template(name))
        assert tokens.tokenizer.convert_ids_to_tokens([answers.yes_id, answers.no_id]) == ["Yes", "No"]
        assert (answers.yes, answers.no) == ("Yes", "No")


def test_a_model_that_splits_yes_scores_its_tokens_by_teacher_forcing() -> None:
    # "Yes" is three tokens here: accepted, scored as the sum of their log-probabilities.
    tokens = TokenizerOnly(tiny_tokenizer([("N", "o")]), "tiny-chars")
    answers = find_answer_tokens(tokens, get_template("fs_direct"))
    assert tokens.tokenizer.convert_ids_to_tokens(list(answers.yes_ids)) == ["Y", "e", "s"]
    assert tokens.tokenizer.convert_ids_to_tokens(list(answers.no_ids)) == ["No"]
    assert (answers.single, answers.longest) == (False, 3)


def test_an_answer_that_merges_into_the_generation_prompt_is_refused() -> None:
    # "\n" + "Yes" becomes one token: prompt + answer no longer tokenises as prompt, then answer.
    tokens = TokenizerOnly(tiny_tokenizer([*WHOLE_WORDS, ("\n", "Yes")]), "tiny-merging")
    with pytest.raises(MetricUnavailable) as caught:
        find_answer_tokens(tokens, get_template("direct"))
    assert str(caught.value) == (
        "tiny-merging: the answer 'Yes' of template 'direct' merges with the end of the chat template's "
        "generation prompt; ParaPLUIE needs the prompt's tokens followed by the answer's"
    )


def test_the_shared_prefix_stops_before_the_pair() -> None:
    tokens = TokenizerOnly(tiny_tokenizer([*WHOLE_WORDS, ('"', "T"), ('"', '"')]), "tiny")
    template = get_template("fs_direct")
    prefix = find_shared_prefix(tokens, lambda pair: render(tokens, template.question(*pair)))
    text = render(tokens, template.question("The cat.", "A cat."))
    decoded = "".join(tokens.tokenizer.convert_ids_to_tokens(prefix))  # no decoder: join the pieces
    assert text.startswith(decoded)
    # The opening quote merges with a sentence that starts with T or ", so it is not shared.
    assert decoded.endswith("<|user|>\nA: ")
    assert common_prefix([[1, 2, 3], [1, 2, 4], [1, 2]]) == [1, 2]
    assert common_prefix([]) == []


def test_an_assistant_turn_written_differently_from_the_scored_answer_is_refused() -> None:
    # This chat template writes past assistant turns as " Yes" (with a space), while the token
    # read after the generation prompt would be "Yes": the model never sees its answers that way.
    tokenizer = tiny_tokenizer([*WHOLE_WORDS, (" ", "Yes"), (" ", "No")])
    tokenizer.chat_template = CHAT_TEMPLATE.replace(
        "\n{{ m['content'] }}", "\n{% if m['role'] == 'assistant' %} {% endif %}{{ m['content'] }}"
    )
    with pytest.raises(MetricUnavailable, match=r"writes an assistant turn 'Yes' as \[' Yes'"):
        find_answer_tokens(TokenizerOnly(tokenizer, "tiny-spaced"), get_template("direct"))


# --- Batch size from free memory (no model: the arithmetic of parapluie_engine.fitting_batch_size) ---

MISTRAL_7B = {
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "vocab_size": 32000,
}


def judge_on(device: str, dtype: str) -> CausalLM:
    """A CausalLM record whose model is only a config (all fitting_batch_size reads)."""
    model = SimpleNamespace(config=SimpleNamespace(**MISTRAL_7B))
    return CausalLM(None, model, "mistral", device, dtype, 32768, 0, (2,))


def test_one_row_of_mistral_7b_needs_what_the_estimate_says() -> None:
    # 100 own tokens after a 500-token prefix, bfloat16: activations 100 x (6 x 4096 + 3 x 14336) x 2
    # bytes, scores 32 heads x 100 x 600 x (4 + 2) bytes, logits 32000 x 4; twice that.
    expected = 2 * (100 * (6 * 4096 + 3 * 14336) * 2 + 32 * 100 * 600 * 6 + 32000 * 4)
    assert expected == 50_329_600
    config = SimpleNamespace(**MISTRAL_7B)
    assert row_bytes(config, suffix=100, prefix=500, dtype_bytes=2) == expected


def test_the_batch_size_is_lowered_to_what_free_gpu_memory_holds() -> None:
    lm = judge_on("cuda:0", "bfloat16")
    # 80% of 1 GiB holds 17 rows of 50,329,600 bytes.
    assert fitting_batch_size(lm, 128, suffix=100, prefix=500, free_bytes=2**30) == 17
    # 60 GiB free: the configured 128 fits.
    assert fitting_batch_size(lm, 128, suffix=100, prefix=500, free_bytes=60 * 2**30) == 128
    # Nothing free: still one row (the run fails loudly rather than never starting).
    assert fitting_batch_size(lm, 128, suffix=100, prefix=500, free_bytes=0) == 1
    # float32 rows are larger: fewer fit.
    lm32 = judge_on("cuda:0", "float32")
    assert fitting_batch_size(lm32, 128, suffix=100, prefix=500, free_bytes=2**30) == 10


def test_on_a_cpu_the_configured_batch_size_is_kept() -> None:
    assert fitting_batch_size(judge_on("cpu", "float32"), 8, suffix=100, prefix=500) == 8
