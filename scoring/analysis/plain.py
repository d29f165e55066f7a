"""Typed results to JSON: the one serialisation of the report and the meta-evaluation.

The analyses return frozen dataclasses, read by attribute everywhere in Python (the tables, the
command line, the service). The dashboard and the API read JSON: :func:`to_json` turns a result
into it, field by field in declaration order. Field names are the JSON keys, but for the few a
class renames in ``JSON_NAMES`` (the chart library's ``whiskerMin``) and the optional ones it
leaves out when unset (``JSON_OMIT_NONE``); enums become their values, tuples lists, dictionary
keys strings (metric ids), and non-finite numbers ``null``.
"""

from __future__ import annotations

import dataclasses
import math
from enum import Enum
from typing import Any

import numpy as np


def to_json(value: Any) -> Any:
    """``value`` as plain JSON types (dict, list, str, int, float, bool, None)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names: dict[str, str] = getattr(value, "JSON_NAMES", {})
        omitted: frozenset[str] = getattr(value, "JSON_OMIT_NONE", frozenset())
        out: dict[str, Any] = {}
        for field in dataclasses.fields(value):
            item = getattr(value, field.name)
            if item is None and field.name in omitted:
                continue
            out[names.get(field.name, field.name)] = to_json(item)
        return out
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {_key(key): to_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]
    if isinstance(value, np.ndarray):
        return [to_json(item) for item in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        return number if math.isfinite(number) else None
    return value


def _key(key: Any) -> str:
    if isinstance(key, Enum):
        return str(key.value)
    return str(key)
