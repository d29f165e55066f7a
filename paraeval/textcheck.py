"""Text that PostgreSQL cannot hold: NUL characters and lone UTF-16 surrogates.

PostgreSQL refuses a NUL in any text value (``DataError``) and psycopg cannot encode a lone
surrogate (``UnicodeEncodeError``): either one reaching a query is a 500. They have no
business in an address, a header, a cookie or a JSON field, so requests holding them are
refused up front with a message (see :mod:`paraeval.middleware` and
:mod:`api.negotiation`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_INVALID = re.compile("[\x00\ud800-\udfff]")


@dataclass(frozen=True)
class InvalidText:
    """Where the first unacceptable character is, and which one."""

    where: str
    character: str

    @property
    def message(self) -> str:
        """A sentence for the person or program that sent it."""
        if self.character == "\x00":
            what = "a NUL character (U+0000)"
        else:
            what = f"a lone surrogate (U+{ord(self.character):04X}), which is not valid Unicode text"
        return f"{self.where} contains {what}: remove it and send the request again."


def first_invalid(text: str) -> str | None:
    """The first NUL or lone surrogate of ``text``, or None."""
    found = _INVALID.search(text)
    return found.group() if found else None


def find_in_data(data: Any) -> InvalidText | None:
    """The first invalid character in parsed JSON-like data (keys and string values), with its path.

    Paths read like ``pairs[3].source``, the way the API's error messages name fields.
    """
    # An explicit stack instead of recursion: a deeply nested body cannot exhaust the stack.
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            character = first_invalid(value)
            if character is not None:
                return InvalidText(f"The field {path}" if path else "The body", character)
        elif isinstance(value, dict):
            for key, item in reversed(list(value.items())):
                name = str(key)
                character = first_invalid(name)
                if character is not None:
                    return InvalidText(f"A field name in {path or 'the body'}", character)
                stack.append((item, f"{path}.{name}" if path else name))
        elif isinstance(value, list | tuple):
            stack.extend((item, f"{path}[{index}]") for index, item in reversed(list(enumerate(value))))
    return None


# Deepest nesting of arrays and objects a JSON body or line may have. Records are flat objects
# (a bulk import is 3 levels deep); Python's json module and anything recursive after it fail
# with a RecursionError near 1,000 levels, which would be a 500 or a traceback.
MAX_JSON_DEPTH = 32
TOO_DEEP = f"nested more than {MAX_JSON_DEPTH} levels deep"


def too_deep(data: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether parsed JSON-like ``data`` nests arrays and objects more than ``limit`` levels deep."""
    # An explicit stack, like find_in_data: the check itself cannot exhaust the stack.
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        items = value.values() if isinstance(value, dict) else value if isinstance(value, list | tuple) else None
        if items is None:
            continue
        if depth > limit:
            return True
        stack.extend((item, depth + 1) for item in items if isinstance(item, dict | list | tuple))
    return False


def loads_bounded(text: str | bytes) -> Any:
    """``json.loads`` that refuses nesting deeper than :data:`MAX_JSON_DEPTH` with a ``ValueError``
    saying so (never a ``RecursionError``); other errors are ``json.JSONDecodeError`` as usual."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None
    if too_deep(value):
        raise ValueError(TOO_DEEP)
    return value
