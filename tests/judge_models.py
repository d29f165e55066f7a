"""A second judge model for tests: a tiny randomly initialised Mistral-architecture causal LM.

Saved to a folder with its own tokenizer files (SmolLM2's tokenizer, which the embedded package
ships, re-saved in the Hugging Face format with its chat template): a local model folder as a
deployment would configure one, built without any download.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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


def write_bundle(
    folder: Path,
    *,
    base_spec: str,
    base_name: str,
    template: str = "direct",
    folds: dict[str, int] | None = None,
    weights: bytes | None = None,
    name: str | None = None,
    settings: dict[str, object] | None = None,
) -> Path:
    """A tuned judge's folder as scoring.metrics.judge_training writes one, with given (fake) adapter bytes.

    Enough for everything that reads files only (identity, hashes, discovery, queues); no model
    library is imported. ``weights`` default: distinct bytes per adapter.
    """
    from scoring.metrics import tuned
    from scoring.metrics.lm import describe_model
    from scoring.metrics.templates import get_template

    fold_map = folds or {}
    count = len(set(fold_map.values()))
    base = describe_model(base_spec)
    manifest = tuned.Manifest(
        name=name or f"{base_name}-tuned-00000000",
        base_spec=base_spec,
        base_name=base_name,
        base_identity=base.identity,
        base_label=base.label,
        template=template,
        template_sha256=get_template(template).text_hash,
        settings=settings or {"rank": 16, "seed": 0},
        folds=count,
    )
    folder.mkdir(parents=True, exist_ok=True)
    for adapter in manifest.adapters:
        (folder / adapter).mkdir(exist_ok=True)
        (folder / adapter / "adapter_config.json").write_text('{"r": 16}', encoding="utf-8")
        (folder / adapter / "adapter_model.safetensors").write_bytes(weights or f"weights of {adapter}".encode())
    tuned.write_folds(folder, [{"key": key, "fold": fold} for key, fold in fold_map.items()])
    manifest.write(folder)
    return folder


def save_random_adapters(
    folder: Path, *, base_spec: str, base_name: str, template: str = "direct", folds: dict[str, int], seed: int = 0
) -> Path:
    """A real tuned judge's folder whose adapters are random (not trained): LoRA's B is not zero,
    so each adapter changes the scores, at no training cost (the fast path's equality tests)."""
    import torch
    from peft import LoraConfig, get_peft_model

    from scoring.metrics import tuned
    from scoring.metrics.judge_training import _save_adapter
    from scoring.metrics.lm import load_fresh

    write_bundle(folder, base_spec=base_spec, base_name=base_name, template=template, folds=folds)
    manifest = tuned.read_manifest(folder)
    model = load_fresh(base_spec).model
    peft_model = None
    for index, adapter in enumerate(manifest.adapters):
        torch.manual_seed(seed + index)
        targets = ["q_proj", "v_proj", "down_proj"]
        config = LoraConfig(r=4, lora_alpha=8, target_modules=targets, init_lora_weights=False)
        if peft_model is None:
            peft_model = get_peft_model(model, config, adapter_name=adapter)
        else:
            peft_model.add_adapter(adapter, config)
        with torch.no_grad():  # small enough that the scores stay in a sane range
            for parameter_name, parameter in peft_model.named_parameters():
                if f".{adapter}." in parameter_name and "lora_B" in parameter_name:
                    parameter.mul_(0.2)
        _save_adapter(peft_model, adapter, folder / adapter)
    return folder


def record_learnt(monkeypatch: Any) -> dict[str, set[tuple[int, ...]]]:
    """Which prompts each adapter is really given to learn from (train and validation), by
    adapter name, the training itself unchanged: the folds on disk alone cannot show a fold that
    learnt its own pairs. Filled while the test's tuning runs."""
    from scoring.metrics import judge_training

    learnt: dict[str, set[tuple[int, ...]]] = {}
    train_adapter = judge_training.train_adapter

    def recording(lm, peft_model, adapter, train, validation, *args, **kwargs):  # type: ignore[no-untyped-def]
        learnt[adapter] = {tuple(example.ids) for example in [*train, *validation]}
        return train_adapter(lm, peft_model, adapter, train, validation, *args, **kwargs)

    monkeypatch.setattr(judge_training, "train_adapter", recording)
    return learnt
