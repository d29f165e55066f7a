"""Answer tokens: ParaPLUIE runs only where "yes" and "no" are single tokens after the prompt.

Small tokenizers built here (character-level BPE with a chat template) stand for models whose
vocabularies split the answers or merge them into the prompt's last token.
"""

from __future__ import annotations

from typing import Any

import pytest

from scoring.metrics.base import MetricUnavailable
from scoring.metrics.lm import TokenizerOnly
from scoring.metrics.parapluie_engine import common_prefix, find_answer_tokens, find_shared_prefix, render
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


def test_a_model_that_splits_yes_is_refused() -> None:
    tokens = TokenizerOnly(tiny_tokenizer([("N", "o")]), "tiny-chars")
    with pytest.raises(MetricUnavailable) as caught:
        find_answer_tokens(tokens, get_template("fs_direct"))
    message = str(caught.value)
    assert message.startswith("tiny-chars: the answer 'Yes' of template 'fs_direct' is not one token")
    assert "['Y', 'e', 's']" in message
    assert "ParaPLUIE needs single-token answers" in message


def test_an_answer_that_merges_into_the_generation_prompt_is_refused() -> None:
    # "\n" + "Yes" becomes one token: prompt + answer no longer tokenises as prompt, then answer.
    tokens = TokenizerOnly(tiny_tokenizer([*WHOLE_WORDS, ("\n", "Yes")]), "tiny-merging")
    with pytest.raises(MetricUnavailable, match=r"'Yes' .* is not one token .*\(got \(merged\)\)"):
        find_answer_tokens(tokens, get_template("direct"))


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
