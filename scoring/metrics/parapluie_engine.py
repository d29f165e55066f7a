"""ParaPLUIE's arithmetic: the fast one-pass scorer, batched generation, and the reference method.

ParaPLUIE(S, H) = log p(yes | Tpl(S, H)) - log p(no | Tpl(S, H)). Both answers are one token
placed right after the same prompt, so every position before the answer is identical in the
two sequences of the paper's practical formula (T + 1) x (loss(Tpl o no) - loss(Tpl o yes)):
the loss terms cancel except the last, and the score is read off the log-softmax of ONE
forward pass at the prompt's last position. This module does that for many pairs at once:

- prompts are sorted by length and batched with left padding (an attention mask hides the
  padding, explicit position ids keep every real token at its unpadded position), and only
  the last position's logits are computed (``logits_to_keep=1``);
- the tokens every prompt of a template shares (FS-DIRECT's six examples, the DIRECT
  preamble) are run once; their key/value cache is expanded over each batch, with the padding
  placed between the shared prefix and each pair's own tokens, where the mask hides it;
- INDIRECT first generates each explanation E greedily, in batches, capped at
  ``max_new_tokens``, then scores the follow-up question the same way.

:func:`reference_scores` is the paper's formula computed the way the authors' code does it
(two full forward passes, mean cross-entropy) for tests and the benchmark.

torch is imported inside the functions: importing this module stays cheap.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from scoring.metrics.base import InvalidPairError, MetricUnavailable, Pair
from scoring.metrics.lm import CausalLM
from scoring.metrics.templates import Messages, PromptTemplate, TemplateKind

# Sentences used to find what every prompt of a template shares and to check the answer tokens.
# They start with a letter, a quote and a digit: BPE may merge the template's opening quote with
# a sentence's first character, so only tokens that survive all three count as shared.
PROBE_PAIRS: tuple[Pair, ...] = (
    ("The cat is alive.", "The cat was alive."),
    ('"Quoted" start, {braces}.', "'Single' quotes"),
    ("42 is a number", "   spaced out   "),
)
# Spellings compared by :func:`answer_spelling_mass` (the paper's examples use Yes/No).
SPELLINGS: tuple[tuple[str, str], ...] = (("Yes", "No"), ("yes", "no"), (" Yes", " No"), (" yes", " no"))


class HasTokenizer(Protocol):
    """A loaded model, or just its tokenizer (enough to render prompts and check answers)."""

    @property
    def tokenizer(self) -> Any: ...

    @property
    def label(self) -> str: ...


@dataclass(frozen=True)
class AnswerTokens:
    """The single token ids of the yes/no answers right after the generation prompt."""

    yes: str
    no: str
    yes_id: int
    no_id: int


class PromptTooLong(InvalidPairError):
    """A prompt that does not fit in the model's context (nothing is truncated)."""


# --- Prompts --------------------------------------------------------------------------------


def render(lm: HasTokenizer, messages: Messages) -> str:
    """The chat-template text of ``messages``, ending with the assistant's generation prompt."""
    text = lm.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    if not isinstance(text, str):
        raise MetricUnavailable(f"{lm.label}: apply_chat_template returned {type(text).__name__}, not text")
    return text


def encode(lm: HasTokenizer, text: str) -> list[int]:
    """Token ids of chat-template text (its special tokens are already in the text)."""
    return list(lm.tokenizer(text, add_special_tokens=False)["input_ids"])


def find_answer_tokens(lm: HasTokenizer, template: PromptTemplate) -> AnswerTokens:
    """The template's answers as single tokens right after the chat template's generation prompt.

    Tokenising the text "prompt + answer" must give the prompt's tokens plus exactly one token
    (that is what the paper's text concatenation Tpl o yes means); otherwise the log-ratio of
    two single tokens is not the metric, and the model is refused with the reason. Where the
    chat template renders an assistant turn holding the answer as the generation prompt
    followed by more text, that turn must start with the same token: it is how the model sees
    its own answers (FS-DIRECT's examples are such turns).
    """
    dialogues = [template.question(*pair) for pair in PROBE_PAIRS]
    if template.kind is TemplateKind.INDIRECT:
        dialogues += [template.follow_up(*pair, "They mean the same thing.") for pair in PROBE_PAIRS]
    ids: dict[str, int] = {}
    for word in (template.yes, template.no):
        found: set[int] = set()
        for messages in dialogues:
            context = render(lm, messages)
            base = encode(lm, context)
            extended = encode(lm, context + word)
            added = extended[len(base) :]
            if extended[: len(base)] != base or len(added) != 1:
                pieces = lm.tokenizer.convert_ids_to_tokens(added) if extended[: len(base)] == base else "(merged)"
                raise MetricUnavailable(
                    f"{lm.label}: the answer {word!r} of template {template.name!r} is not one token after the "
                    f"chat template's generation prompt (got {pieces}); ParaPLUIE needs single-token answers"
                )
            _check_assistant_turn(lm, messages, context, base, word, added[0])
            found.add(added[0])
        if len(found) != 1:
            raise MetricUnavailable(f"{lm.label}: the answer {word!r} tokenises differently in different prompts")
        ids[word] = found.pop()
    if ids[template.yes] == ids[template.no]:
        raise MetricUnavailable(f"{lm.label}: {template.yes!r} and {template.no!r} are the same token")
    return AnswerTokens(template.yes, template.no, ids[template.yes], ids[template.no])


def _check_assistant_turn(
    lm: HasTokenizer, messages: Messages, context: str, base: list[int], word: str, token: int
) -> None:
    answered = lm.tokenizer.apply_chat_template(
        [*messages, {"role": "assistant", "content": word}], tokenize=False, add_generation_prompt=False
    )
    if not isinstance(answered, str) or not answered.startswith(context):
        return  # this chat template writes past turns differently from the generation prompt
    turn = encode(lm, answered)
    if turn[: len(base)] == base and len(turn) > len(base) and turn[len(base)] != token:
        written = lm.tokenizer.convert_ids_to_tokens(turn[len(base) : len(base) + 3])
        raise MetricUnavailable(
            f"{lm.label}: its chat template writes an assistant turn {word!r} as {written}, not as the token "
            f"{lm.tokenizer.convert_ids_to_tokens([token])} read after the generation prompt"
        )


def common_prefix(sequences: Sequence[Sequence[int]]) -> list[int]:
    """The longest run of leading tokens that every sequence shares."""
    if not sequences:
        return []
    first = sequences[0]
    length = len(first)
    for sequence in sequences[1:]:
        length = min(length, len(sequence))
        for position in range(length):
            if sequence[position] != first[position]:
                length = position
                break
    return list(first[:length])


# --- Shared prefix --------------------------------------------------------------------------


@dataclass
class SharedPrefix:
    """Tokens every prompt of one template stage starts with, and their key/value cache."""

    ids: list[int]
    _kv: list[tuple[Any, Any]] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def kv(self, lm: CausalLM) -> list[tuple[Any, Any]]:
        """Per layer (keys, values) of the prefix, batch size 1; computed on first use."""
        with self._lock:
            if self._kv is None:
                import torch

                with torch.inference_mode():
                    input_ids = torch.tensor([self.ids], device=lm.model.device)
                    output = lm.model(input_ids=input_ids, use_cache=True, logits_to_keep=1)
                self._kv = [(layer.keys, layer.values) for layer in output.past_key_values.layers]
            return self._kv


def find_shared_prefix(lm: HasTokenizer, render_probe: Callable[[Pair], str]) -> list[int]:
    """Tokens shared by the prompts of every probe pair (see :data:`PROBE_PAIRS`)."""
    return common_prefix([encode(lm, render_probe(pair)) for pair in PROBE_PAIRS])


# --- The fast path --------------------------------------------------------------------------


def log_ratios(
    lm: CausalLM,
    prompts: Sequence[Sequence[int]],
    answers: AnswerTokens,
    *,
    batch_size: int,
    prefix: SharedPrefix | None = None,
) -> list[float]:
    """log p(yes) - log p(no) after each prompt: one forward pass per prompt, batched.

    Prompts that start with ``prefix.ids`` reuse its key/value cache; the others (a sentence
    whose first character merged into the template's tokens) run in full. Prompts are sorted by
    length so that each batch pads little; results come back in the caller's order.
    """
    import torch

    scores: list[float] = [0.0] * len(prompts)
    cached: list[int] = []
    full: list[int] = []
    usable = prefix is not None and len(prefix.ids) > 0
    for index, ids in enumerate(prompts):
        if usable and len(ids) > len(prefix.ids) and list(ids[: len(prefix.ids)]) == prefix.ids:  # type: ignore[union-attr]
            cached.append(index)
        else:
            full.append(index)
    with torch.inference_mode():
        for group, group_prefix in ((cached, prefix), (full, None)):
            skip = len(group_prefix.ids) if group_prefix is not None else 0
            order = sorted(group, key=lambda index: len(prompts[index]))
            for start in range(0, len(order), batch_size):
                chunk = order[start : start + batch_size]
                values = _forward_last(lm, [prompts[index][skip:] for index in chunk], answers, group_prefix)
                for index, value in zip(chunk, values, strict=True):
                    scores[index] = value
    return scores


def _forward_last(
    lm: CausalLM, suffixes: Sequence[Sequence[int]], answers: AnswerTokens, prefix: SharedPrefix | None
) -> list[float]:
    import torch
    from transformers import DynamicCache

    device = lm.model.device
    batch = len(suffixes)
    width = max(len(ids) for ids in suffixes)
    past = len(prefix.ids) if prefix is not None else 0
    input_ids = torch.full((batch, width), lm.pad_id, dtype=torch.long)
    mask = torch.zeros((batch, past + width), dtype=torch.long)
    mask[:, :past] = 1
    positions = torch.zeros((batch, width), dtype=torch.long)
    for row, ids in enumerate(suffixes):
        pad = width - len(ids)
        input_ids[row, pad:] = torch.tensor(ids, dtype=torch.long)
        mask[row, past + pad :] = 1
        # Real tokens continue right after the prefix, as if no padding were there.
        positions[row, pad:] = torch.arange(past, past + len(ids))
    kwargs: dict[str, Any] = {}
    if prefix is not None:
        layers = [(keys.expand(batch, -1, -1, -1), values.expand(batch, -1, -1, -1)) for keys, values in prefix.kv(lm)]
        kwargs["past_key_values"] = DynamicCache(ddp_cache_data=layers, config=lm.model.config)
    output = lm.model(
        input_ids=input_ids.to(device),
        attention_mask=mask.to(device),
        position_ids=positions.to(device),
        use_cache=prefix is not None,
        logits_to_keep=1,
        **kwargs,
    )
    log_probs = output.logits[:, -1, :].float().log_softmax(dim=-1)
    return (log_probs[:, answers.yes_id] - log_probs[:, answers.no_id]).tolist()


# --- INDIRECT: the generation step ----------------------------------------------------------


def generate(lm: CausalLM, prompts: Sequence[Sequence[int]], *, max_new_tokens: int, batch_size: int) -> list[str]:
    """Greedy continuations of each prompt (the INDIRECT explanation E), at most ``max_new_tokens``.

    Batched with left padding (generate derives positions from the attention mask); generation
    stops at the model's end-of-turn token. Special tokens are dropped from the text.
    """
    import torch

    texts: list[str] = [""] * len(prompts)
    order = sorted(range(len(prompts)), key=lambda index: len(prompts[index]))
    device = lm.model.device
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            width = max(len(prompts[index]) for index in chunk)
            input_ids = torch.full((len(chunk), width), lm.pad_id, dtype=torch.long)
            mask = torch.zeros((len(chunk), width), dtype=torch.long)
            for row, index in enumerate(chunk):
                ids = prompts[index]
                input_ids[row, width - len(ids) :] = torch.tensor(list(ids), dtype=torch.long)
                mask[row, width - len(ids) :] = 1
            output = lm.model.generate(
                input_ids=input_ids.to(device),
                attention_mask=mask.to(device),
                max_new_tokens=max_new_tokens,
                do_sample=False,
                temperature=None,
                top_p=None,
                top_k=None,
                pad_token_id=lm.pad_id,
                eos_token_id=list(lm.eos_ids) or None,
            )
            for row, index in enumerate(chunk):
                new_tokens = output[row, width:].tolist()
                texts[index] = lm.tokenizer.decode(new_tokens, skip_special_tokens=True).strip()
    return texts


# --- The reference method -------------------------------------------------------------------


@dataclass(frozen=True)
class ReferenceScore:
    """One pair scored the reference way (see :func:`reference_scores`)."""

    value: float  # (T + 1) x (mean CE(no) - mean CE(yes)), each mean accumulated in float64
    value_float32_mean: float  # the same with the float32 means of model(labels=...).loss
    tokens: int  # T + 1: the tokens the mean cross-entropy runs over


def reference_scores(lm: CausalLM, prompt_texts: Sequence[str], answers: AnswerTokens) -> list[ReferenceScore]:
    """The paper's (T + 1) x (loss(Tpl o no) - loss(Tpl o yes)), computed the authors' way.

    Two full forward passes per prompt, on the text concatenations prompt + "Yes" and
    prompt + "No", each giving the model's mean cross-entropy (``labels=input_ids``). The mean
    runs over the tokens the model predicts (every token after the first; the paper's T + 1):
    multiplying by that count turns each mean back into a sum, and the two sums differ only by
    the answer's term. ``value`` accumulates the per-token losses in float64: in float32 a mean
    over ~600 tokens of FS-DIRECT rounds at ~1e-7 of a sum near 1,200 nats, which the factor
    T + 1 turns into errors up to ~2e-4 in the reference itself (``value_float32_mean`` keeps
    that number, as the authors' code computes it).
    """
    import torch
    import torch.nn.functional as functional

    device = lm.model.device
    scores = []
    with torch.inference_mode():
        for text in prompt_texts:
            prompt_ids = encode(lm, text)
            means: dict[str, tuple[float, float]] = {}
            count = len(prompt_ids)
            for word, token in ((answers.yes, answers.yes_id), (answers.no, answers.no_id)):
                ids = encode(lm, text + word)
                if ids != [*prompt_ids, token]:
                    raise MetricUnavailable(f"{lm.label}: prompt + {word!r} does not tokenise as prompt + one token")
                input_ids = torch.tensor([ids], device=device)
                output = lm.model(input_ids=input_ids, labels=input_ids)
                per_token = functional.cross_entropy(output.logits[0, :-1].float(), input_ids[0, 1:], reduction="none")
                means[word] = (float(per_token.double().mean()), float(output.loss))
            (yes64, yes32), (no64, no32) = means[answers.yes], means[answers.no]
            scores.append(ReferenceScore(count * (no64 - yes64), count * (no32 - yes32), count))
    return scores


def answer_spelling_mass(lm: CausalLM, prompt_texts: Sequence[str]) -> dict[str, float]:
    """Mean probability the model gives each single-token yes/no spelling right after the prompt.

    Shows which spelling and case the model actually uses after its chat template (reported
    by ``list_templates --show`` and the benchmark; the embedded model puts most mass on Yes/No).
    """
    import torch

    device = lm.model.device
    candidates: dict[str, tuple[int, int]] = {}
    sample = prompt_texts[0]
    base = encode(lm, sample)
    for yes, no in SPELLINGS:
        ids = [encode(lm, sample + word)[len(base) :] for word in (yes, no)]
        if all(len(piece) == 1 for piece in ids):
            candidates[f"{yes!r}/{no!r}"] = (ids[0][0], ids[1][0])
    totals = dict.fromkeys(candidates, 0.0)
    with torch.inference_mode():
        for text in prompt_texts:
            input_ids = torch.tensor([encode(lm, text)], device=device)
            probs = lm.model(input_ids=input_ids, logits_to_keep=1).logits[0, -1].float().softmax(-1)
            for name, (yes_id, no_id) in candidates.items():
                totals[name] += float(probs[yes_id] + probs[no_id]) / len(prompt_texts)
    return totals


def check_fits(lm: CausalLM, length: int, index: int, *, extra: int = 0, what: str = "prompt") -> None:
    """Refuse, naming the pair, a prompt that would not fit the context (nothing is truncated)."""
    if length + extra > lm.context_length:
        more = (
            f" plus {extra} for the answer"
            if extra == 1
            else f" plus up to {extra} for E, the follow-up and the answer"
        )
        raise PromptTooLong(
            f"pair {index}: the {what} is {length} tokens{more}: more than {lm.label}'s context of "
            f"{lm.context_length} tokens; shorten the sentences (nothing is truncated)"
        )


# --- One template on one model --------------------------------------------------------------


class TemplateScorer:
    """ParaPLUIE for one template on one loaded model: prompts, answer tokens, shared prefixes.

    Built once per (model, template) and kept on the model (:func:`scorer_for`), so the shared
    prefix's key/value cache is computed once per process.
    """

    def __init__(self, lm: CausalLM, template: PromptTemplate) -> None:
        self.lm = lm
        self.template = template
        self.answers = find_answer_tokens(lm, template)
        self.question_prefix = SharedPrefix(find_shared_prefix(lm, lambda pair: self.question_text(*pair)))
        self.follow_up_prefix: SharedPrefix | None = None
        self.follow_up_overhead = 0
        if template.kind is TemplateKind.INDIRECT:
            self.follow_up_prefix = SharedPrefix(
                find_shared_prefix(lm, lambda pair: self.follow_up_text(*pair, "They mean the same thing."))
            )
            probe = PROBE_PAIRS[0]
            # Tokens the follow-up adds besides E (end of E's turn, the "Summarize..." turn).
            self.follow_up_overhead = len(encode(lm, self.follow_up_text(*probe, ""))) - len(
                encode(lm, self.question_text(*probe))
            )

    # Prompt texts and ids.
    def question_text(self, source: str, hypothesis: str) -> str:
        return render(self.lm, self.template.question(source, hypothesis))

    def follow_up_text(self, source: str, hypothesis: str, explanation: str) -> str:
        return render(self.lm, self.template.follow_up(source, hypothesis, explanation))

    def question_ids(self, pairs: Sequence[Pair], *, max_new_tokens: int = 0) -> list[list[int]]:
        """Token ids of each pair's prompt; refuses a prompt that cannot fit the context."""
        prompts = [encode(self.lm, self.question_text(*pair)) for pair in pairs]
        for index, ids in enumerate(prompts):
            self.check_length(len(ids), index, max_new_tokens=max_new_tokens)
        return prompts

    def check_length(self, length: int, index: int, *, max_new_tokens: int = 0) -> None:
        """Pair ``index``'s prompt must leave room for the answer (and for E, with INDIRECT)."""
        extra = 1
        if self.template.kind is TemplateKind.INDIRECT:
            extra += max_new_tokens + self.follow_up_overhead
        check_fits(self.lm, length, index, extra=extra)

    # Scores.
    def score(self, pairs: Sequence[Pair], *, batch_size: int, max_new_tokens: int) -> list[float]:
        """ParaPLUIE of every pair by the fast path (INDIRECT generates E first)."""
        if self.template.kind is TemplateKind.INDIRECT:
            explanations = self.explanations(pairs, batch_size=batch_size, max_new_tokens=max_new_tokens)
            return self.score_follow_ups(pairs, explanations, batch_size=batch_size)
        prompts = self.question_ids(pairs)
        return log_ratios(self.lm, prompts, self.answers, batch_size=batch_size, prefix=self.question_prefix)

    def explanations(self, pairs: Sequence[Pair], *, batch_size: int, max_new_tokens: int) -> list[str]:
        """INDIRECT's generation step: the model's explanation E of each pair (greedy, capped)."""
        prompts = self.question_ids(pairs, max_new_tokens=max_new_tokens)
        return generate(self.lm, prompts, max_new_tokens=max_new_tokens, batch_size=batch_size)

    def follow_up_ids(self, pairs: Sequence[Pair], explanations: Sequence[str]) -> list[list[int]]:
        prompts = []
        for index, (pair, explanation) in enumerate(zip(pairs, explanations, strict=True)):
            ids = encode(self.lm, self.follow_up_text(*pair, explanation))
            check_fits(self.lm, len(ids), index, extra=1, what="follow-up prompt (with E)")
            prompts.append(ids)
        return prompts

    def score_follow_ups(self, pairs: Sequence[Pair], explanations: Sequence[str], *, batch_size: int) -> list[float]:
        """INDIRECT's score once E is known: one pass on the follow-up question."""
        prompts = self.follow_up_ids(pairs, explanations)
        return log_ratios(self.lm, prompts, self.answers, batch_size=batch_size, prefix=self.follow_up_prefix)

    def reference(self, pairs: Sequence[Pair], explanations: Sequence[str] | None = None) -> list[ReferenceScore]:
        """The two-pass reference on the same prompts (INDIRECT needs the explanations E)."""
        if self.template.kind is TemplateKind.INDIRECT:
            if explanations is None:
                raise ValueError("the INDIRECT reference needs the generated explanations E")
            texts = [self.follow_up_text(*pair, e) for pair, e in zip(pairs, explanations, strict=True)]
        else:
            texts = [self.question_text(*pair) for pair in pairs]
        return reference_scores(self.lm, texts, self.answers)


def scorer_for(lm: CausalLM, template: PromptTemplate) -> TemplateScorer:
    """The scorer of ``template`` on ``lm``, built once and kept with the loaded model."""
    key = f"parapluie:{template.name}:{template.text_hash}"
    with lm.lock:
        scorer = lm.derived.get(key)
        if scorer is None:
            scorer = lm.derived[key] = TemplateScorer(lm, template)
    return scorer  # type: ignore[no-any-return]
