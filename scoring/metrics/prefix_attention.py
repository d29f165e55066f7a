"""Attention over a shared prefix without copying it per row ("cascade" attention).

Every prompt of an FS-DIRECT batch starts with the same ~530 tokens. The plain way to reuse
their key/value cache is to expand it over the batch and let the model append each row's own
keys, which copies the prefix's keys and values once per row and per layer, then attends
row by row. Here each layer attends to the prefix once for the whole batch (one matrix product
per key/value head, the batch folded into the query rows) and to each row's own tokens
separately, then merges the two softmax parts exactly:

    softmax([s_prefix, s_own]) @ [V_prefix; V_own]
        = (exp(s_prefix - m) @ V_prefix + exp(s_own - m) @ V_own) / (sum exp(s_prefix - m) + sum exp(s_own - m))

with m the row maximum over both parts. The model runs as an ordinary forward pass over the
rows' own tokens (left padded, explicit position ids that continue after the prefix); the
attention function, registered with transformers as ``paraeval_shared_prefix``, reads the
prefix's keys and values from a context variable set around that call, and is plain SDPA when
none is set, so the same model still generates and runs the reference method as before.

It is used for decoder-only models whose attention is standard scaled dot-product attention
over rotary keys (Llama, Mistral, Qwen2 families) without a sliding window shorter than the
prompt; other models take the expanded-cache path. torch is imported inside the functions.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Sequence
from typing import Any

IMPLEMENTATION = "paraeval_shared_prefix"
SUPPORTED_MODEL_TYPES = frozenset({"llama", "mistral", "qwen2", "qwen3"})

# Per layer (keys, values) of the shared prefix, batch size 1, while a prefix forward runs.
_PREFIX: contextvars.ContextVar[Sequence[tuple[Any, Any]] | None] = contextvars.ContextVar(
    "paraeval_shared_prefix", default=None
)
_registered = False


def _register() -> None:
    global _registered
    if _registered:
        return
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(IMPLEMENTATION, shared_prefix_attention)
    # The same boolean masks as SDPA (causal + padding over the rows' own tokens).
    AttentionMaskInterface.register(IMPLEMENTATION, sdpa_mask)
    _registered = True


def enable(model: Any, prompt_length: int) -> bool:
    """Switch ``model`` to the shared-prefix attention if it qualifies; say whether it did.

    Qualifies: a supported architecture running SDPA (or already switched), and no sliding
    window shorter than ``prompt_length``. The switch changes nothing when no prefix is set.
    """
    config = model.config
    if getattr(config, "model_type", None) not in SUPPORTED_MODEL_TYPES:
        return False
    implementation = getattr(config, "_attn_implementation", None)
    if implementation == IMPLEMENTATION:
        return True
    if implementation != "sdpa":
        return False
    window = getattr(config, "sliding_window", None)
    if window is not None and window < prompt_length:
        return False
    _register()
    model.set_attn_implementation(IMPLEMENTATION)
    return True


@contextlib.contextmanager
def shared_prefix(layers: Sequence[tuple[Any, Any]]) -> Iterator[None]:
    """Within the block, every layer also attends to these prefix keys/values (batch 1)."""
    token = _PREFIX.set(layers)
    try:
        yield
    finally:
        _PREFIX.reset(token)


def shared_prefix_attention(
    module: Any,
    query: Any,
    key: Any,
    value: Any,
    attention_mask: Any,
    dropout: float = 0.0,
    scaling: float | None = None,
    **kwargs: Any,
) -> tuple[Any, None]:
    """Attention of each row's queries to the shared prefix and to the row's own keys.

    Shapes as transformers passes them: query (B, H, L, D), key/value (B, KVH, L, D), mask
    (B, 1, L, L) boolean (True = attend) or None (plain causal). Returns (B, L, H, D).
    """
    layers = _PREFIX.get()
    if layers is None:
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(  # type: ignore[no-any-return]
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
        )
    import torch

    prefix_keys, prefix_values = layers[module.layer_idx]  # (1, KVH, P, D)
    batch, heads, length, dim = query.shape
    kv_heads = key.shape[1]
    groups = heads // kv_heads
    scale = scaling if scaling is not None else dim**-0.5
    # Query heads h = kv * groups + g share key/value head kv: group them by kv head.
    grouped = query.reshape(batch, kv_heads, groups * length, dim)
    # Prefix part: the batch folded into the rows, one product per key/value head.
    folded = grouped.transpose(0, 1).reshape(kv_heads, batch * groups * length, dim)
    prefix_scores = torch.matmul(folded, prefix_keys[0].transpose(-1, -2)) * scale  # (KVH, B*G*L, P)
    prefix_scores = prefix_scores.view(kv_heads, batch, groups * length, -1).transpose(0, 1)  # (B, KVH, G*L, P)
    # Own part: each row's keys, causal and padding mask.
    own_scores = torch.matmul(grouped, key.transpose(-1, -2)) * scale  # (B, KVH, G*L, L)
    if attention_mask is None:
        allowed = torch.ones(length, length, dtype=torch.bool, device=query.device).tril()
        allowed = allowed.expand(batch, 1, length, length)
    elif attention_mask.dtype == torch.bool:
        allowed = attention_mask
    else:  # an additive float mask: 0 where allowed
        allowed = attention_mask == 0
    allowed = allowed.expand(batch, 1, length, length).unsqueeze(2)  # (B, 1, 1, L, L)
    own_scores = own_scores.view(batch, kv_heads, groups, length, length).masked_fill(~allowed, float("-inf"))
    own_scores = own_scores.view(batch, kv_heads, groups * length, length)
    # One softmax over both parts (a row always sees the prefix, so the maximum is finite).
    top = torch.maximum(prefix_scores.amax(dim=-1, keepdim=True), own_scores.amax(dim=-1, keepdim=True))
    prefix_weights = torch.exp(prefix_scores - top)
    own_weights = torch.exp(own_scores - top)
    total = prefix_weights.sum(dim=-1, keepdim=True) + own_weights.sum(dim=-1, keepdim=True)
    prefix_part = torch.matmul(
        prefix_weights.transpose(0, 1).reshape(kv_heads, batch * groups * length, -1), prefix_values[0]
    ).view(kv_heads, batch, groups * length, dim)
    output = (prefix_part.transpose(0, 1) + torch.matmul(own_weights, value)) / total  # (B, KVH, G*L, D)
    output = output.view(batch, heads, length, dim).transpose(1, 2).contiguous()
    return output, None
