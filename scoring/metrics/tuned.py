"""A tuned judge on disk: a base judge model plus LoRA adapters trained to judge paraphrases.

:mod:`scoring.metrics.judge_training` writes a *bundle*, one folder per tuned judge (under
``PARAPLUIE_TUNED_DIR``, by default ``PARAEVAL_DATA_DIR/judges/``)::

    smollm2-tuned-1a2b3c4d/
        judge.json          what it is: base model, template, training settings, adapters
        full/               the adapter trained on all the pairs (less the validation split)
        fold-0/ ... fold-4/ cross-fitting: the adapter trained without fold i's pairs
        folds.json          which fold each training pair (a key of its two texts) fell in
        trained.json        the key of every pair it learnt from (folds or not): a tuning that
                            starts from this judge must not train on them
        training.json       how training went (loss and validation AUC over time, timings)

Scoring routes every pair by its texts (:func:`pair_key`): a pair the judge was trained on is
scored by the adapter of its fold, which never saw it (cross-fitting); any other pair by
``full``. So a judge tuned on a campaign's own labels gives honest scores on that campaign, and
the same pair imported into another campaign is never scored by an adapter that saw it either.

The judge's identity (what its configuration hash covers) is the base model's identity, the
template, the training settings and the content digests of every adapter's files and of the
fold assignment: another adapter is another configuration, even under the same folder name.
``training.json`` (history, timings) is left out: it does not change a score.

Standard library only: the web process describes tuned judges (hashes, labels, queues).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoring.metrics.base import MetricUnavailable
from scoring.metrics.fingerprint import file_digest

MANIFEST = "judge.json"
FOLDS_FILE = "folds.json"
TRAINED_FILE = "trained.json"
TRAINING_FILE = "training.json"
FULL = "full"
FORMAT = 1
ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors")
_INSTRUCT = re.compile(r"[-_. ]?instruct$", re.IGNORECASE)


def fold_adapter(index: int) -> str:
    """The name (and folder) of fold ``index``'s adapter."""
    return f"fold-{index}"


def pair_key(source: str, hypothesis: str) -> str:
    """What identifies a pair to a tuned judge: a digest of its two texts (order matters)."""
    return hashlib.sha256(f"{source}\x1f{hypothesis}".encode()).hexdigest()[:32]


def is_bundle(folder: str | Path) -> bool:
    """Whether ``folder`` holds a tuned judge (its manifest)."""
    return (Path(folder) / MANIFEST).is_file()


def short_label(base_label: str) -> str:
    """``SmolLM2-135M-Instruct`` -> ``SmolLM2-135M``: the tuned judge's label says ``tuned`` instead."""
    return _INSTRUCT.sub("", base_label) or base_label


def tuned_label(base_label: str, digest: str) -> str:
    """``SmolLM2-135M-tuned-1a2b3c4d``: the base model's label and the first 8 hex of the identity."""
    return f"{short_label(base_label)}-tuned-{digest[:8]}"


def tuned_name(base_name: str, digest: str) -> str:
    """The judge's name and queue suffix: ``smollm2-tuned-1a2b3c4d`` (at most 40 characters)."""
    return f"{base_name[:24]}-tuned-{digest[:8]}"


def _file_digest(path: Path) -> str:
    # Cached per process by path, size and modification time (an adapter is hashed once, not per task).
    return file_digest(path)


def adapter_digest(folder: Path) -> str:
    """SHA-256 over an adapter folder's configuration and weights."""
    digest = hashlib.sha256()
    for name in ADAPTER_FILES:
        path = folder / name
        if not path.is_file():
            raise MetricUnavailable(f"tuned judge {folder.parent.name}: {folder.name}/{name} is missing")
        digest.update(f"{name}={_file_digest(path)}\n".encode())
    return digest.hexdigest()


def identity_digest(identity: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()


@dataclass(frozen=True)
class Manifest:
    """``judge.json``: what a tuned judge was made of."""

    name: str
    base_spec: str  # "embedded", or the base model's folder
    base_name: str  # the base judge's name (PARAPLUIE_MODELS) when tuned through the project
    base_identity: dict[str, Any]  # the base model's identity when it was tuned
    base_label: str
    template: str
    template_sha256: str
    settings: dict[str, Any]
    folds: int  # 0: no cross-fitting adapters
    trained_on: dict[str, Any] = field(default_factory=dict)  # a description (campaign, reference, pairs)

    @property
    def adapters(self) -> list[str]:
        return [FULL, *(fold_adapter(index) for index in range(self.folds))]

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "name": self.name,
            "base": {
                "spec": self.base_spec,
                "name": self.base_name,
                "identity": self.base_identity,
                "label": self.base_label,
            },
            "template": self.template,
            "template_sha256": self.template_sha256,
            "settings": self.settings,
            "folds": self.folds,
            "trained_on": self.trained_on,
        }

    def write(self, folder: Path) -> None:
        (folder / MANIFEST).write_text(json.dumps(self.as_dict(), indent=2, sort_keys=True) + "\n", encoding="utf-8")


def read_manifest(folder: str | Path) -> Manifest:
    """Read a bundle's ``judge.json``; :class:`MetricUnavailable` says what is wrong with it."""
    path = Path(folder) / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        base = data["base"]
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')!r}, this version reads {FORMAT}")
        return Manifest(
            name=str(data["name"]),
            base_spec=str(base["spec"]),
            base_name=str(base.get("name") or ""),
            base_identity=dict(base.get("identity") or {}),
            base_label=str(base.get("label") or ""),
            template=str(data["template"]),
            template_sha256=str(data.get("template_sha256") or ""),
            settings=dict(data.get("settings") or {}),
            folds=int(data.get("folds") or 0),
            trained_on=dict(data.get("trained_on") or {}),
        )
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise MetricUnavailable(f"{path}: not a readable tuned judge manifest: {error}") from None


def read_folds(folder: str | Path) -> dict[str, int]:
    """Pair key -> fold of every pair the judge was trained on (empty without cross-fitting)."""
    path = Path(folder) / FOLDS_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {str(row["key"]): int(row["fold"]) for row in data["pairs"]}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise MetricUnavailable(f"{path}: not a readable fold assignment: {error}") from None


def write_folds(folder: Path, rows: list[dict[str, Any]]) -> None:
    """Write ``folds.json``: one ``{"key", "fold"}`` object per training pair (plus any ids given)."""
    ordered = sorted(rows, key=lambda row: (int(row["fold"]), str(row["key"])))
    (folder / FOLDS_FILE).write_text(json.dumps({"pairs": ordered}, sort_keys=True) + "\n", encoding="utf-8")


def write_trained(folder: Path, keys: list[str]) -> None:
    """Write ``trained.json``: the keys of every pair the judge learnt from (sorted)."""
    (folder / TRAINED_FILE).write_text(json.dumps({"keys": sorted(keys)}) + "\n", encoding="utf-8")


def read_trained(folder: str | Path) -> set[str]:
    """The keys of every pair the judge learnt from (``trained.json``; a bundle written before it
    existed: the keys of ``folds.json``, which list them all when it was cross-fitted)."""
    path = Path(folder) / TRAINED_FILE
    if not path.is_file():
        return set(read_folds(folder))
    try:
        return {str(key) for key in json.loads(path.read_text(encoding="utf-8"))["keys"]}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise MetricUnavailable(f"{path}: not a readable list of training pairs: {error}") from None


def bundle_identity(folder: Path, manifest: Manifest, base_identity: dict[str, Any]) -> dict[str, Any]:
    """What a tuned judge's configuration hash covers (see the module docstring)."""
    folds_path = folder / FOLDS_FILE
    return {
        "base": base_identity,
        "tuned": {
            "template": manifest.template,
            "template_sha256": manifest.template_sha256,
            "settings": manifest.settings,
            "adapters": {name: adapter_digest(folder / name) for name in manifest.adapters},
            "folds": _file_digest(folds_path) if folds_path.is_file() else None,
        },
    }


def route(keys: list[str], folds: dict[str, int]) -> list[str]:
    """The adapter that scores each pair: its fold's when it was trained on, else ``full``."""
    return [fold_adapter(folds[key]) if key in folds else FULL for key in keys]


def find_bundles(root: str | Path) -> list[Path]:
    """The tuned judges' folders under ``root`` (sorted by name; a folder being written is skipped)."""
    path = Path(root)
    if not path.is_dir():
        return []
    return sorted(
        child for child in path.iterdir() if child.is_dir() and not child.name.startswith(".") and is_bundle(child)
    )


def state(root: str | Path) -> tuple[tuple[str, int], ...]:
    """What changes when a tuned judge appears, disappears or is rewritten (cheap: a listing)."""
    found = []
    for folder in find_bundles(root):
        try:
            found.append((folder.name, (folder / MANIFEST).stat().st_mtime_ns))
        except OSError:
            continue
    return tuple(found)
