"""From the judgements of one pair to its human label (pure Python, shared by the analyses
and the exports).

Don't know answers are counted but carry no label. With several judges the pair's label is
the majority; a tie has no label and is reported as such. The mean of the ordinal 1-4 scale
is kept for correlations.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from annotate.labels import LABEL_ORDER, Label, is_paraphrase, ordinal


@dataclass(frozen=True)
class PairVerdict:
    """What the judges of one pair said, summarised."""

    counts: dict[Label, int]
    judgements: int
    majority_label: Label | None
    label_tie: bool
    is_paraphrase: bool | None
    binary_tie: bool
    mean_ordinal: float | None

    @property
    def graded(self) -> int:
        """Judgements with a graded answer (everything but Don't know)."""
        return self.judgements - self.counts[Label.DONT_KNOW]


def verdict(labels: Iterable[str]) -> PairVerdict:
    """Summarise the labels given to one pair (training judgements must be left out by the caller)."""
    counter = Counter(Label(label) for label in labels)
    counts = {label: counter.get(label, 0) for label in LABEL_ORDER}
    graded = {label: count for label, count in counts.items() if label is not Label.DONT_KNOW and count}

    majority_label: Label | None = None
    label_tie = False
    if graded:
        top = max(graded.values())
        leaders = [label for label, count in graded.items() if count == top]
        label_tie = len(leaders) > 1
        majority_label = None if label_tie else leaders[0]

    yes = sum(count for label, count in graded.items() if is_paraphrase(label))
    no = sum(graded.values()) - yes
    binary_tie = bool(graded) and yes == no
    binary: bool | None = None if not graded or binary_tie else yes > no

    values = [ordinal(label) for label, count in graded.items() for _ in range(count)]
    mean = sum(v for v in values if v is not None) / len(values) if values else None
    return PairVerdict(
        counts=counts,
        judgements=sum(counts.values()),
        majority_label=majority_label,
        label_tie=label_tie,
        is_paraphrase=binary,
        binary_tie=binary_tie,
        mean_ordinal=mean,
    )
