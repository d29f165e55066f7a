"""A content fingerprint of a model folder: what goes into a configuration hash as the model's identity.

A path or a name does not identify weights: a folder re-downloaded, fine-tuned in place or
copied from another revision keeps its name. The fingerprint hashes the files that decide the
numbers: ``config.json``, the tokenizer's files, the generation config, the weight index and
the weight files themselves. It must be the same on every node holding the same files (the web
process computes it, each worker recomputes it and refuses a configuration that differs), so it
reads contents, never modification times.

Cost: small files are hashed whole. A weight file larger than :data:`FULL_HASH_BYTES` (a 7B
model is 14 GB) is hashed by its size, its first :data:`HEAD_BYTES` (a safetensors header lists
every tensor's name, dtype, shape and offset) and :data:`SAMPLES` evenly spaced blocks of
:data:`BLOCK_BYTES`: a fine-tuned or re-quantised model changes them all, and the fingerprint
takes milliseconds instead of a minute. Results are cached per process, keyed by each file's
path, size and modification time, so a changed file is read again and an unchanged one never.

Only the standard library is imported (the web process calls this).
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

# Files that shape the tokenizer, the prompt (chat template) or the model's arithmetic.
CONFIG_FILES = (
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "chat_template.jinja",
    "chat_template.json",
    "tokenizer.model",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "spiece.model",
    "sentencepiece.bpe.model",
    "modules.json",
    "sentence_bert_config.json",
    "1_Pooling/config.json",
)
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth", ".h5", ".msgpack")
INDEX_SUFFIX = ".index.json"
FULL_HASH_BYTES = 256 * 1024 * 1024
HEAD_BYTES = 1024 * 1024
SAMPLES = 64
BLOCK_BYTES = 64 * 1024

_lock = threading.Lock()
_file_cache: dict[tuple[str, int, int], str] = {}


def file_digest(path: Path) -> str:
    """SHA-256 of a file (sampled past :data:`FULL_HASH_BYTES`), cached by path, size and mtime."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    with _lock:
        cached = _file_cache.get(key)
    if cached is not None:
        return cached
    digest = hashlib.sha256()
    size = stat.st_size
    with path.open("rb") as handle:
        if size <= FULL_HASH_BYTES:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        else:
            digest.update(f"sampled:{size}:".encode())
            digest.update(handle.read(HEAD_BYTES))
            step = (size - BLOCK_BYTES) // (SAMPLES - 1)
            for sample in range(SAMPLES):
                handle.seek(sample * step)
                digest.update(handle.read(BLOCK_BYTES))
    value = digest.hexdigest()
    with _lock:
        _file_cache[key] = value
    return value


def model_files(folder: Path) -> list[Path]:
    """The files of ``folder`` that :func:`fingerprint` covers, in a stable order."""
    found = [folder / name for name in CONFIG_FILES if (folder / name).is_file()]
    for path in sorted(folder.iterdir()):
        if path.is_file() and (path.name.endswith(INDEX_SUFFIX) or path.suffix in WEIGHT_SUFFIXES):
            found.append(path)
    return found


def fingerprint(folder: str | Path) -> str | None:
    """One SHA-256 over the names and digests of the model files in ``folder`` (``None``: no such folder)."""
    path = Path(folder)
    if not path.is_dir():
        return None
    digest = hashlib.sha256()
    for file in model_files(path):
        try:
            digest.update(f"{file.relative_to(path).as_posix()}={file_digest(file)}\n".encode())
        except OSError:
            digest.update(f"{file.relative_to(path).as_posix()}=unreadable\n".encode())
    return digest.hexdigest()


def forget() -> None:
    """Drop the cached digests (tests)."""
    with _lock:
        _file_cache.clear()
