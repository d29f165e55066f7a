"""The subsets a report is computed on: all pairs, then each corpus (origin)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scoring.analysis.report.inputs import ALL, ALL_LABEL, NO_ORIGIN_LABEL, BoolArray

# --- subsets ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Subset:
    key: str
    label: str
    mask: BoolArray


def subsets(origins: list[str]) -> list[Subset]:
    """One subset per origin (corpus) when there are several, then all pairs together ("Global")."""
    values = np.asarray(origins, dtype=object)
    distinct = sorted(set(origins))
    result: list[Subset] = []
    if len(distinct) > 1:
        result = [Subset(origin, origin or NO_ORIGIN_LABEL, values == origin) for origin in distinct]
    # A single corpus (or a corpus filter) is named as such rather than "Global".
    label = distinct[0] if len(distinct) == 1 and distinct[0] else ALL_LABEL
    result.append(Subset(ALL, label, np.ones(len(origins), dtype=bool)))
    return result
