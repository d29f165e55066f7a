"""OpenAPI rules of the gold-label options of ``POST /api/pairs/`` that one field cannot state.

A constant gold label excludes a gold column and a value mapping, and a mapping excludes
``gold_as: score``; the API refuses those combinations with a 400, so the document says so
(``not`` clauses), and a client or a fuzzer that follows it never sends one.
"""

from __future__ import annotations

from typing import Any

from annotate.importers.options import NON_PARAPHRASE, PARAPHRASE, UNLABELLED

# A mapping's target as the API accepts it: a finite number or one of three words, exactly.
GOLD_TARGET_SCHEMA: dict[str, Any] = {
    "anyOf": [{"type": "number"}, {"type": "string", "enum": [PARAPHRASE, NON_PARAPHRASE, UNLABELLED]}]
}

_EXCLUSIONS: list[dict[str, Any]] = [
    {
        "required": ["gold_constant", "gold_column"],
        "properties": {"gold_constant": {"minLength": 1}, "gold_column": {"pattern": r"\S"}},
    },
    {
        "required": ["gold_constant", "gold_map"],
        "properties": {"gold_constant": {"minLength": 1}, "gold_map": {"minProperties": 1}},
    },
    {
        "required": ["gold_as", "gold_map"],
        "properties": {"gold_as": {"enum": ["score"]}, "gold_map": {"minProperties": 1}},
    },
]


def gold_option_rules(result: dict[str, Any], generator: Any, request: Any, public: Any) -> dict[str, Any]:
    """drf-spectacular post-processing hook: add the exclusions to the bulk import's body schema."""
    for schema in result.get("components", {}).get("schemas", {}).values():
        properties = schema.get("properties", {})
        if {"gold_constant", "gold_column", "gold_map", "gold_as"} <= properties.keys():
            schema["allOf"] = [{"not": exclusion} for exclusion in _EXCLUSIONS]
    return result
