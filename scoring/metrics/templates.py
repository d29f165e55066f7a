"""ParaPLUIE prompt templates (placeholder until the ParaPLUIE work lands)."""

from __future__ import annotations


def template_names() -> list[str]:
    return ["direct", "indirect", "fs_direct"]
