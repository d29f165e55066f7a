"""A ParaEval metric plug-in: the Jaccard overlap of the two sentences' character n-grams."""

from __future__ import annotations

from typing import Any, ClassVar

from scoring.metrics.base import Direction, Metric, Pair


class CharacterOverlap(Metric):
    """Share of character n-grams the two sentences have in common (1: the same n-grams)."""

    name: ClassVar[str] = "example_overlap"  # the entry point's name in pyproject.toml
    direction: ClassVar[Direction] = Direction.HIGHER_IS_CLOSER
    queue: ClassVar[str] = "example"  # the workers started with -Q example compute it
    description: ClassVar[str] = "Jaccard overlap of character n-grams (an example plug-in)."
    spec_keys: ClassVar[tuple[str, ...]] = ("n",)  # example_overlap[n=2]

    def __init__(self, n: str = "3") -> None:
        self.n = int(n)
        if self.n < 1:
            raise ValueError(f"n must be at least 1, got {n}")

    def config(self) -> dict[str, Any]:
        return {"n": self.n}  # everything that changes the numbers

    def _score(self, pairs: list[Pair]) -> list[float]:
        return [self._overlap(source.lower(), hypothesis.lower()) for source, hypothesis in pairs]

    def _overlap(self, a: str, b: str) -> float:
        grams_a = {a[i : i + self.n] for i in range(max(len(a) - self.n + 1, 1))}
        grams_b = {b[i : i + self.n] for i in range(max(len(b) - self.n + 1, 1))}
        return len(grams_a & grams_b) / len(grams_a | grams_b)
