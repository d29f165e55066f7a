"""FLOP accounting for the ParaPLUIE benchmarks: the reference's and the fast path's arithmetic.

A forward pass over ``tokens`` new tokens that follow ``past`` cached ones costs, per token,
2 x (the decoder layers' weights) for the matrix products, 4 x layers x heads x head_dim x
(keys it attends to) for attention (q k^T and the weighted sum of the values, causal), and
2 x hidden x vocab for each position whose logits are computed. The embedding table is a
lookup (no FLOPs). Not counted: norms, rotary embeddings, activations, softmax (elementwise).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Shape:
    """What the FLOP count needs of a decoder-only model."""

    layers: int
    heads: int
    head_dim: int
    hidden: int
    vocab: int
    body_parameters: int  # weights of the decoder layers (every token multiplies them)

    @property
    def head_parameters(self) -> int:
        return self.hidden * self.vocab


def shape_of(model: Any) -> Shape:
    """The :class:`Shape` of a transformers causal LM (Llama / Mistral / Qwen2 layout)."""
    config = model.config
    heads = int(config.num_attention_heads)
    head_dim = int(getattr(config, "head_dim", None) or config.hidden_size // heads)
    body = sum(parameter.numel() for parameter in model.model.layers.parameters())
    return Shape(
        layers=int(config.num_hidden_layers),
        heads=heads,
        head_dim=head_dim,
        hidden=int(config.hidden_size),
        vocab=int(config.vocab_size),
        body_parameters=int(body),
    )


def forward_flops(shape: Shape, tokens: int, *, past: int = 0, logits: int = 1) -> float:
    """FLOPs of one row's forward pass: ``tokens`` new tokens after ``past`` cached ones."""
    attended = tokens * past + tokens * (tokens + 1) / 2  # token t sees past + t keys (causal)
    attention = 4.0 * shape.layers * shape.heads * shape.head_dim * attended
    return 2.0 * shape.body_parameters * tokens + attention + 2.0 * shape.head_parameters * logits


def reference_flops(shape: Shape, prompt_tokens: int) -> float:
    """The paper's two passes (prompt + yes, prompt + no), logits at every position (``labels=``)."""
    length = prompt_tokens + 1
    return 2 * forward_flops(shape, length, logits=length)


def fast_flops(shape: Shape, prompt_tokens: int, prefix_tokens: int) -> float:
    """One pass over the prompt's own tokens after the shared prefix, logits at the last position."""
    return forward_flops(shape, prompt_tokens - prefix_tokens, past=prefix_tokens, logits=1)


def floor_flops(shape: Shape, suffix_tokens: float) -> float:
    """The compute floor of one pair: 2 x parameters x the tokens it must process (its suffix),
    plus its one position of logits; attention not counted (a lower bound)."""
    return 2.0 * shape.body_parameters * suffix_tokens + 2.0 * shape.head_parameters
