"""The metric specification syntax: ``name`` or ``name[key=value,key=value]``.

One place parses what ``PARAEVAL_METRICS``, ``PARAPLUIE_MODELS`` and ``score_pairs --metrics``
accept, so every parameter that changes a metric's numbers is chosen the same way everywhere::

    bleu[tokenize=moses,lowercase=false]      BLEU on Moses tokens, case kept (the paper's PAWS)
    bertscore[model=/models/bert-base-uncased,layers=9]
    parapluie_fs_direct[model=mistral]         one judge model of PARAPLUIE_MODELS

Lists are separated by commas (or semicolons) outside brackets. A malformed spec raises
:class:`SpecError` naming the spec and the problem. Standard library only (settings import it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
_KEY = re.compile(r"^[a-z_][a-z0-9_]*$")
TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"0", "false", "no", "off"})


class SpecError(ValueError):
    """A metric or model specification that cannot be parsed; the message names it."""


@dataclass(frozen=True)
class Spec:
    """A parsed ``name[key=value,...]``; options keep their order of writing."""

    name: str
    options: tuple[tuple[str, str], ...] = ()

    def option(self, key: str) -> str | None:
        return dict(self.options).get(key)

    def __str__(self) -> str:
        if not self.options:
            return self.name
        return f"{self.name}[{','.join(f'{key}={value}' for key, value in self.options)}]"


def split_list(text: str) -> list[str]:
    """Split a list of specs on commas or semicolons that are not inside brackets."""
    items: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "[":
            depth += 1
        elif char == "]":
            depth = max(depth - 1, 0)
        if char in ",;" and depth == 0:
            items.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    items.append("".join(current).strip())
    return [item for item in items if item]


def parse(text: str) -> Spec:
    """Parse one ``name[key=value,...]``; raise :class:`SpecError` saying what is wrong."""
    raw = text.strip()
    name, bracket, rest = raw.partition("[")
    name = name.strip()
    if not _NAME.match(name):
        raise SpecError(f"{raw!r}: expected a name such as bleu or parapluie_fs_direct, then optional [key=value,...]")
    if not bracket:
        return Spec(name)
    if not rest.endswith("]") or "[" in rest[:-1] or "]" in rest[:-1]:
        raise SpecError(f"{raw!r}: the options must be one [key=value,...] group at the end")
    options: list[tuple[str, str]] = []
    for item in rest[:-1].split(","):
        if not item.strip():
            continue
        key, equals, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not equals or not _KEY.match(key) or not value:
            raise SpecError(f"{raw!r}: option {item.strip()!r} is not key=value")
        if key in dict(options):
            raise SpecError(f"{raw!r}: option {key!r} is given twice")
        options.append((key, value))
    return Spec(name, tuple(options))


def to_bool(spec: Spec | str, key: str, value: str) -> bool:
    """An option's yes/no value (true/false, 1/0, yes/no, on/off)."""
    lowered = value.lower()
    if lowered in TRUE:
        return True
    if lowered in FALSE:
        return False
    raise SpecError(f"{str(spec)!r}: {key} must be true or false, got {value!r}")


def to_int(spec: Spec | str, key: str, value: str, *, minimum: int = 1) -> int:
    """An option's integer value, at least ``minimum``."""
    try:
        number = int(value)
    except ValueError:
        raise SpecError(f"{str(spec)!r}: {key} must be an integer, got {value!r}") from None
    if number < minimum:
        raise SpecError(f"{str(spec)!r}: {key} must be at least {minimum}, got {number}")
    return number
