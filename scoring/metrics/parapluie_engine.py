"""ParaPLUIE's arithmetic: the fast one-pass scorer, batched generation, and the reference method.

ParaPLUIE(S, H) = log p(yes | Tpl(S, H)) - log p(no | Tpl(S, H)). When both answers are one
token placed right after the same prompt, every position before the answer is identical in the
two sequences of the paper's practical formula (T + 1) x (loss(Tpl o no) - loss(Tpl o yes)):
the loss terms cancel except the last, and the score is read off the log-softmax of ONE
forward pass at the prompt's last position. An answer of several tokens (French "Oui" in
SmolLM2's tokenizer) adds its later tokens' log-probabilities, read by teacher forcing on the
prompt's key/value cache (one short extra pass per multi-token answer and batch). This module
does that for many pairs at once:

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
    """The token ids of the yes/no answers right after the generation prompt.

    Usually one token each ("Yes"/"No" in most tokenizers); French "Oui" is two tokens in
    SmolLM2's. ``yes_id``/``no_id`` are the first tokens.
    """

    yes: str
    no: str
    yes_ids: tuple[int, ...]
    no_ids: tuple[int, ...]

    @property
    def yes_id(self) -> int:
        return self.yes_ids[0]

    @property
    def no_id(self) -> int:
        return self.no_ids[0]

    @property
    def single(self) -> bool:
        """Both answers are one token: the score is read off one position (the fast path)."""
        return len(self.yes_ids) == 1 and len(self.no_ids) == 1

    @property
    def longest(self) -> int:
        return max(len(self.yes_ids), len(self.no_ids))


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
    """The template's answers as tokens right after the chat template's generation prompt.

    Tokenising the text "prompt + answer" must give the prompt's tokens plus the answer's
    tokens, the same ones after every prompt (that is what the paper's text concatenation
    Tpl o yes means); otherwise the model is refused with the reason. An answer of several
    tokens ("Oui" in SmolLM2's tokenizer) is scored as the sum of its tokens' log-probabilities
    by teacher forcing. Where the chat template renders an assistant turn holding the answer as
    the generation prompt followed by more text, that turn must start with the same tokens: it
    is how the model sees its own answers (FS-DIRECT's examples are such turns).
    """
    dialogues = [template.question(*pair) for pair in PROBE_PAIRS]
    if template.kind is TemplateKind.INDIRECT:
        dialogues += [template.follow_up(*pair, "They mean the same thing.") for pair in PROBE_PAIRS]
    ids: dict[str, tuple[int, ...]] = {}
    for word in (template.yes, template.no):
        found: set[tuple[int, ...]] = set()
        for messages in dialogues:
            context = render(lm, messages)
            base = encode(lm, context)
            extended = encode(lm, context + word)
            added = tuple(extended[len(base) :])
            if extended[: len(base)] != base or not added:
                raise MetricUnavailable(
                    f"{lm.label}: the answer {word!r} of template {template.name!r} merges with the end of the chat "
                    "template's generation prompt; ParaPLUIE needs the prompt's tokens followed by the answer's"
                )
            _check_assistant_turn(lm, messages, context, base, word, added)
            found.add(added)
        if len(found) != 1:
            raise MetricUnavailable(f"{lm.label}: the answer {word!r} tokenises differently in different prompts")
        ids[word] = found.pop()
    if ids[template.yes] == ids[template.no]:
        raise MetricUnavailable(f"{lm.label}: {template.yes!r} and {template.no!r} are the same tokens")
    return AnswerTokens(template.yes, template.no, ids[template.yes], ids[template.no])


def _check_assistant_turn(
    lm: HasTokenizer, messages: Messages, context: str, base: list[int], word: str, tokens: tuple[int, ...]
) -> None:
    answered = lm.tokenizer.apply_chat_template(
        [*messages, {"role": "assistant", "content": word}], tokenize=False, add_generation_prompt=False
    )
    if not isinstance(answered, str) or not answered.startswith(context):
        return  # this chat template writes past turns differently from the generation prompt
    turn = encode(lm, answered)
    written = tuple(turn[len(base) : len(base) + len(tokens)])
    if turn[: len(base)] == base and len(turn) > len(base) and written != tokens:
        raise MetricUnavailable(
            f"{lm.label}: its chat template writes an assistant turn {word!r} as "
            f"{lm.tokenizer.convert_ids_to_tokens(list(written))}, not as the tokens "
            f"{lm.tokenizer.convert_ids_to_tokens(list(tokens))} read after the generation prompt"
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


# --- Attending to the shared prefix without copying it ----------------------------------------

# The name under which the prefix-aware attention is registered with transformers, per base
# implementation it wraps (only "sdpa", the default for Llama/Mistral/Qwen2 on CPU and GPU).
PREFIX_ATTENTION = "parapluie_prefix+sdpa"
# The forward keyword that carries the prefix's per-layer (keys, values), batch 1.
PREFIX_KWARG = "parapluie_prefix"


def prefix_attention(
    module: Any,
    query: Any,
    key: Any,
    value: Any,
    attention_mask: Any,
    scaling: float | None = None,
    dropout: float = 0.0,
    **kwargs: Any,
) -> tuple[Any, None]:
    """Attention of a batch's own tokens over [shared prefix ; their own tokens], the prefix never copied.

    Registered with transformers' ``AttentionInterface`` (:func:`install_prefix_attention`): a
    forward pass given ``parapluie_prefix=[(keys, values) per layer]`` (batch 1, the prefix's
    cache) sees only the rows' own tokens as its sequence, with their true positions, and each
    layer attends to the prefix here; without that keyword it is transformers' sdpa, unchanged.

    Why hand-written: ``scaled_dot_product_attention`` takes one key tensor, so attending to
    [prefix ; suffix] with it means concatenating the prefix into every row of every batch (the
    copy this removes), and it returns no log-sum-exp to merge two partial attentions. Here the
    attention to the prefix is ONE attention per key/value head: the batch and the query heads
    that share a key/value head fold into its query rows (grouped-query layout: head h reads
    key/value head h // groups), so the prefix's keys are read once per batch, never expanded
    (:func:`_attend_prefix`). The attention to the rows' own tokens is a small batched product
    with the causal and padding mask; the two halves merge through the prefix's log-sum-exp
    into exactly the softmax over the concatenation. Softmax arithmetic in float32.
    """
    import torch

    prefix = kwargs.get(PREFIX_KWARG)
    if prefix is None:
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
        )
    prefix_keys, prefix_values = prefix[module.layer_idx]  # (1, kv_heads, P, head_dim)
    batch, heads, length, dim = query.shape
    kv_heads = prefix_keys.shape[1]
    groups = heads // kv_heads
    scale = scaling if scaling is not None else dim**-0.5
    rows = groups * length
    # (batch, kv_heads, groups * length, dim): the query heads of one key/value head side by side.
    grouped = query.reshape(batch, kv_heads, rows, dim)
    folded = grouped.transpose(0, 1).reshape(1, kv_heads, batch * rows, dim)
    on_prefix, prefix_lse = _attend_prefix(folded, prefix_keys, prefix_values, scale)
    # Back to (batch, kv_heads, rows, ...): views, no copy.
    on_prefix = on_prefix.view(kv_heads, batch, rows, dim).transpose(0, 1)
    prefix_lse = prefix_lse.view(kv_heads, batch, rows).transpose(0, 1).unsqueeze(-1)
    # The rows' own tokens: (batch, kv_heads, groups * length, length), causal and padding masked.
    scores = torch.matmul(grouped, key.transpose(2, 3)).float().mul_(scale)
    scores = scores.view(batch, kv_heads, groups, length, length)
    if attention_mask is None:  # transformers leaves it out when nothing is padded: causal only
        attention_mask = torch.ones((length, length), dtype=torch.bool, device=query.device).tril_()
    if attention_mask.dtype == torch.bool:
        hidden = ~attention_mask
        while hidden.dim() < 5:
            hidden = hidden.unsqueeze(-3) if hidden.dim() == 4 else hidden.unsqueeze(0)
        scores = scores.masked_fill_(hidden, float("-inf"))
    else:  # an additive mask (batch, 1, length, length)
        scores = scores.add_(attention_mask.float().unsqueeze(2))
    scores = scores.view(batch, kv_heads, rows, length)
    # softmax over [prefix ; own] = (e^(lse - top) out_prefix + sum_j e^(s_j - top) v_j) / (e^(lse - top) + sum_j
    # e^(s_j - top)); the prefix is never masked, so top is finite and no row is empty.
    top = torch.maximum(scores.amax(dim=-1, keepdim=True), prefix_lse)
    weights = scores.sub_(top).exp_()
    prefix_weight = (prefix_lse - top).exp_()
    total = weights.sum(dim=-1, keepdim=True).add_(prefix_weight)
    output = torch.matmul(weights.to(query.dtype), value).float()
    output = output.add_(on_prefix.float() * prefix_weight).div_(total).to(query.dtype)
    # (batch, length, heads, dim), as transformers' attention functions return it.
    output = output.view(batch, kv_heads, groups, length, dim).permute(0, 3, 1, 2, 4)
    return output.reshape(batch, length, heads, dim), None


# Whether the prefix part uses torch's fused CPU attention kernel (see _attend_prefix); tests
# switch it off to check the portable arithmetic (the one a GPU runs) on a CPU.
FUSED_CPU_KERNEL = True


def _attend_prefix(query: Any, keys: Any, values: Any, scale: float) -> tuple[Any, Any]:
    """softmax(q k^T * scale) v over the prefix, and each row's log-sum-exp (float32).

    Shapes: query (1, kv_heads, rows, dim), keys/values (1, kv_heads, P, dim); no mask (every
    row sees the whole prefix). On a CPU, torch's fused flash-attention kernel, which also
    returns the log-sum-exp (a private aten op; the public sdpa does not return it): the
    scores are never materialised. Elsewhere two matrix products and a float32 softmax (the
    prefix part of a batch is one (rows x P) score matrix per key/value head).
    """
    import torch

    if FUSED_CPU_KERNEL and query.device.type == "cpu":
        kernel = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)
        if kernel is not None:
            output, lse = kernel(query, keys, values, 0.0, False, scale=scale)
            return output, lse.float()
    scores = torch.matmul(query, keys.transpose(2, 3)).float().mul_(scale)
    lse = torch.logsumexp(scores, dim=-1)
    weights = scores.sub_(lse.unsqueeze(-1)).exp_().to(query.dtype)
    return torch.matmul(weights, values), lse


def install_prefix_attention(lm: CausalLM) -> bool:
    """Switch ``lm``'s attention to :func:`prefix_attention` where it applies; True if it did.

    It applies to models on transformers' sdpa attention (the default) without a sliding
    window or logit soft-capping: Llama (SmolLM2), Mistral, Qwen2. Elsewhere the prefix's cache
    is expanded over each batch as a ``DynamicCache`` (:func:`_forward_last`'s other branch).
    Without the prefix keyword the registered function IS sdpa: the reference method and
    generation run exactly as before. Once per model.
    """
    key = "parapluie:prefix_attention"
    with lm.lock:
        if key in lm.derived:
            return bool(lm.derived[key])
        config = lm.model.config
        sliding = getattr(config, "sliding_window", None) and getattr(config, "use_sliding_window", True)
        usable = (
            config._attn_implementation in ("sdpa", PREFIX_ATTENTION)
            and not sliding
            and getattr(config, "attn_logit_softcapping", None) is None
            and all(hasattr(module, "layer_idx") for module in _attention_modules(lm))
        )
        if usable:
            from transformers import AttentionInterface
            from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

            AttentionInterface.register(PREFIX_ATTENTION, prefix_attention)
            AttentionMaskInterface.register(PREFIX_ATTENTION, sdpa_mask)
            config._attn_implementation = PREFIX_ATTENTION
        lm.derived[key] = usable
        return usable


def _attention_modules(lm: CausalLM) -> list[Any]:
    return [module for name, module in lm.model.named_modules() if name.endswith("self_attn")]


# --- Batch size -----------------------------------------------------------------------------


def row_bytes(config: Any, *, suffix: int, prefix: int, dtype_bytes: int) -> int:
    """Peak bytes one row of a batch needs in the suffix pass, beyond the weights (an estimate).

    Per layer (inference frees each layer's activations before the next): the hidden states and
    the q/k/v/o projections, the MLP's gate, up and product, and the float32 attention scores
    over [prefix ; suffix] (twice: scores, then the probabilities in the model's dtype). Plus
    the last position's float32 logits. A margin of 2x covers the allocator's rounding.
    """
    hidden = int(config.hidden_size)
    intermediate = int(getattr(config, "intermediate_size", 4 * hidden))
    heads = int(config.num_attention_heads)
    vocab = int(config.vocab_size)
    activations = suffix * (6 * hidden + 3 * intermediate) * dtype_bytes
    scores = heads * suffix * (prefix + suffix) * (4 + dtype_bytes)
    return 2 * (activations + scores + vocab * 4)


def fitting_batch_size(
    lm: CausalLM,
    requested: int,
    *,
    suffix: int,
    prefix: int,
    free_bytes: int | None = None,
    usable_share: float = 0.8,
) -> int:
    """The batch size to run: ``requested``, lowered on a GPU to what its free memory holds.

    ``free_bytes`` is torch.cuda.mem_get_info()'s free memory on a CUDA device (read here when
    not given; tests inject it); on a CPU nothing is capped (``requested`` as configured). So a
    judge model configured with ``batch_size=128`` runs 128 rows where they fit and fewer on a
    smaller or busier GPU instead of running out of memory.
    """
    if free_bytes is None:
        if not str(lm.device).startswith("cuda"):
            return requested
        import torch

        free_bytes = int(torch.cuda.mem_get_info(lm.model.device)[0])
    dtype_bytes = 4 if lm.dtype == "float32" else 2
    per_row = row_bytes(lm.model.config, suffix=suffix, prefix=prefix, dtype_bytes=dtype_bytes)
    return max(1, min(requested, int(free_bytes * usable_share) // per_row))


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
    length so that each batch pads little; results come back in the caller's order. The scores
    stay on the model's device until every batch has run: one copy to the host at the end, so
    a GPU never waits for the host between batches.
    """
    import torch

    cached: list[int] = []
    full: list[int] = []
    usable = prefix is not None and len(prefix.ids) > 0
    for index, ids in enumerate(prompts):
        if usable and len(ids) > len(prefix.ids) and list(ids[: len(prefix.ids)]) == prefix.ids:  # type: ignore[union-attr]
            cached.append(index)
        else:
            full.append(index)
    order_done: list[int] = []
    parts: list[Any] = []
    with torch.inference_mode():
        for group, group_prefix in ((cached, prefix), (full, None)):
            if not group:
                continue
            skip = len(group_prefix.ids) if group_prefix is not None else 0
            order = sorted(group, key=lambda index: len(prompts[index]))
            longest = len(prompts[order[-1]]) - skip
            size = fitting_batch_size(lm, batch_size, suffix=longest, prefix=skip)
            for start in range(0, len(order), size):
                chunk = order[start : start + size]
                parts.append(_forward_last(lm, [prompts[index][skip:] for index in chunk], answers, group_prefix))
                order_done += chunk
        values = torch.cat(parts).cpu().tolist() if parts else []
    scores: list[float] = [0.0] * len(prompts)
    for index, value in zip(order_done, values, strict=True):
        scores[index] = value
    return scores


def _to_device(tensor: Any, device: Any) -> Any:
    """Host to device without making the host wait (pinned memory, non-blocking) on a GPU."""
    if getattr(device, "type", str(device)) == "cpu":
        return tensor
    return tensor.pin_memory().to(device, non_blocking=True)


def _forward_last(
    lm: CausalLM, suffixes: Sequence[Sequence[int]], answers: AnswerTokens, prefix: SharedPrefix | None
) -> Any:
    """The batch's scores as a float32 tensor on the model's device (see :func:`log_ratios`)."""
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
    input_ids, positions = _to_device(input_ids, device), _to_device(positions, device)
    kwargs: dict[str, Any] = {}
    if prefix is not None and answers.single and install_prefix_attention(lm):
        # The rows' own tokens are the whole sequence (their mask, no cache); each layer attends
        # to the prefix's batch-1 cache through prefix_attention: nothing is copied per batch.
        kwargs[PREFIX_KWARG] = prefix.kv(lm)
        mask = mask[:, past:]
    elif prefix is not None:
        # A multi-token answer reads its later tokens on the prompt's cache: the prefix's cache is
        # expanded over the batch (views; DynamicCache concatenates them with the rows' tokens).
        layers = [(keys.expand(batch, -1, -1, -1), values.expand(batch, -1, -1, -1)) for keys, values in prefix.kv(lm)]
        kwargs["past_key_values"] = DynamicCache(ddp_cache_data=layers, config=lm.model.config)
    mask = _to_device(mask, device)
    output = lm.model(
        input_ids=input_ids,
        attention_mask=mask,
        position_ids=positions,
        use_cache=PREFIX_KWARG not in kwargs and (prefix is not None or not answers.single),
        logits_to_keep=1,
        **kwargs,
    )
    logits = output.logits[:, -1, :]
    if answers.single:
        # log p(yes) - log p(no) = logit(yes) - logit(no): the normaliser cancels, and only two
        # logits per row are gathered (on the device).
        pair = logits[:, [answers.yes_id, answers.no_id]].float()
        return pair[:, 0] - pair[:, 1]
    log_probs = logits.float().log_softmax(dim=-1)
    scores = log_probs[:, answers.yes_id] - log_probs[:, answers.no_id]
    # Teacher forcing: each answer's later tokens read after its earlier ones, on the prompt's
    # cache (cut back to the prompt between the two answers).
    cache = output.past_key_values
    after = positions[:, -1:] + 1
    for tokens, sign in ((answers.yes_ids, 1.0), (answers.no_ids, -1.0)):
        if len(tokens) > 1:
            scores += sign * _continuation_log_prob(lm, cache, mask, after, tokens)
            cache.crop(-(len(tokens) - 1))  # negative: drop that many tokens, back to the prompt
    return scores


def _continuation_log_prob(lm: CausalLM, cache: Any, mask: Any, after: Any, tokens: Sequence[int]) -> Any:
    """Sum of log p(tokens[i] | prompt, tokens[:i]) for i >= 1, every row of a batch at once."""
    import torch

    device = lm.model.device
    batch = mask.shape[0]
    steps = len(tokens) - 1
    feed = torch.tensor(tokens[:-1], dtype=torch.long, device=device).expand(batch, -1)
    output = lm.model(
        input_ids=feed,
        attention_mask=torch.cat([mask, torch.ones((batch, steps), dtype=mask.dtype, device=device)], dim=1),
        position_ids=after + torch.arange(steps, device=device),
        past_key_values=cache,
        use_cache=True,
        logits_to_keep=steps,
    )
    log_probs = output.logits.float().log_softmax(dim=-1)
    targets = torch.tensor(tokens[1:], dtype=torch.long, device=device).expand(batch, -1)
    return log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1).sum(dim=-1)


# --- INDIRECT: the generation step ----------------------------------------------------------


def generate(
    lm: CausalLM,
    prompts: Sequence[Sequence[int]],
    *,
    max_new_tokens: int,
    batch_size: int,
    prefix: SharedPrefix | None = None,
) -> list[str]:
    """Greedy continuations of each prompt (the INDIRECT explanation E), at most ``max_new_tokens``.

    Batched (prompts sorted by length) with the padding placed before each prompt's own tokens;
    generate derives every real token's position from the attention mask, so padding changes
    nothing. Prompts that start with ``prefix.ids`` reuse the prefix's key/value cache (the
    template's shared preamble is not run again for every batch); the others run in full.
    Generation stops at the model's end-of-turn token; special tokens are dropped from the text.
    """
    import torch

    texts: list[str] = [""] * len(prompts)
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
            order = sorted(group, key=lambda index: len(prompts[index]))
            for start in range(0, len(order), batch_size):
                chunk = order[start : start + batch_size]
                for index, text in zip(
                    chunk, _generate_batch(lm, [prompts[i] for i in chunk], max_new_tokens, group_prefix), strict=True
                ):
                    texts[index] = text
    return texts


def _generate_batch(
    lm: CausalLM, prompts: Sequence[Sequence[int]], max_new_tokens: int, prefix: SharedPrefix | None
) -> list[str]:
    import torch
    from transformers import DynamicCache

    device = lm.model.device
    batch = len(prompts)
    past = len(prefix.ids) if prefix is not None else 0
    suffixes = [list(ids[past:]) for ids in prompts]
    width = max(len(ids) for ids in suffixes)
    input_ids = torch.full((batch, past + width), lm.pad_id, dtype=torch.long)
    mask = torch.zeros((batch, past + width), dtype=torch.long)
    if prefix is not None:
        input_ids[:, :past] = torch.tensor(prefix.ids, dtype=torch.long)
        mask[:, :past] = 1
    for row, ids in enumerate(suffixes):
        input_ids[row, past + width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
        mask[row, past + width - len(ids) :] = 1
    kwargs: dict[str, Any] = {}
    if prefix is not None:
        # The prefix's cache, viewed once per row (generate appends to a copy, never to it).
        layers = [(keys.expand(batch, -1, -1, -1), values.expand(batch, -1, -1, -1)) for keys, values in prefix.kv(lm)]
        kwargs["past_key_values"] = DynamicCache(ddp_cache_data=layers, config=lm.model.config)
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
        **kwargs,
    )
    return [
        lm.tokenizer.decode(output[row, past + width :].tolist(), skip_special_tokens=True).strip()
        for row in range(batch)
    ]


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
            # Sum of cross-entropies = (tokens predicted) x mean; the prompt's terms cancel.
            sums: dict[str, tuple[float, float]] = {}
            for word, tokens in ((answers.yes, answers.yes_ids), (answers.no, answers.no_ids)):
                ids = encode(lm, text + word)
                if ids != [*prompt_ids, *tokens]:
                    raise MetricUnavailable(f"{lm.label}: prompt + {word!r} does not tokenise as prompt + answer")
                input_ids = torch.tensor([ids], device=device)
                output = lm.model(input_ids=input_ids, labels=input_ids)
                per_token = functional.cross_entropy(output.logits[0, :-1].float(), input_ids[0, 1:], reduction="none")
                count = len(ids) - 1
                sums[word] = (count * float(per_token.double().mean()), count * float(output.loss))
            (yes64, yes32), (no64, no32) = sums[answers.yes], sums[answers.no]
            scores.append(ReferenceScore(no64 - yes64, no32 - yes32, len(prompt_ids)))
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


def check_fits(
    lm: CausalLM, length: int, index: int, *, extra: int = 0, what: str = "prompt", generates: bool = False
) -> None:
    """Refuse, naming the pair, a prompt that would not fit the context (nothing is truncated)."""
    if length + extra > lm.context_length:
        more = (
            f" plus up to {extra} for E, the follow-up and the answer" if generates else f" plus {extra} for the answer"
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
        extra = self.answers.longest
        generates = self.template.kind is TemplateKind.INDIRECT
        if generates:
            extra += max_new_tokens + self.follow_up_overhead
        check_fits(self.lm, length, index, extra=extra, generates=generates)

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
        return generate(
            self.lm, prompts, max_new_tokens=max_new_tokens, batch_size=batch_size, prefix=self.question_prefix
        )

    def follow_up_ids(self, pairs: Sequence[Pair], explanations: Sequence[str]) -> list[list[int]]:
        prompts = []
        for index, (pair, explanation) in enumerate(zip(pairs, explanations, strict=True)):
            ids = encode(self.lm, self.follow_up_text(*pair, explanation))
            check_fits(self.lm, len(ids), index, extra=self.answers.longest, what="follow-up prompt (with E)")
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
    return scorer
