"""A second judge model for tests: a tiny randomly initialised Mistral-architecture causal LM.

Saved to a folder with its own tokenizer files (SmolLM2's tokenizer, which the embedded package
ships, re-saved in the Hugging Face format with its chat template): a local model folder as a
deployment would configure one, built without any download.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MISTRAL_CONFIG = ROOT / "benchmarks" / "configs" / "mistral-7b-instruct-v0.2.json"


def save_tiny_mistral(folder: Path, *, seed: int = 0) -> Path:
    """Write a 2-layer, 64-wide Mistral (grouped-query attention kept) and its tokenizer to ``folder``."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    from scoring.metrics.lm import load_tokenizer

    tokenizer = load_tokenizer("embedded").tokenizer
    config = json.loads(MISTRAL_CONFIG.read_text(encoding="utf-8"))
    config.update(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4)
    config.update(num_key_value_heads=2, max_position_embeddings=4096, vocab_size=len(tokenizer))
    config.update(
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id
    )
    config["_name_or_path"] = "tiny-mistral"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(str(folder)), dtype=torch.float32)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
