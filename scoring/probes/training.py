"""Probe pairs as training pairs for a judge that should read word order: the swaps and changes
as non-paraphrases, the meaning-keeping controls as paraphrases, cross-fitted by source.

Plain Python: the tuning code takes the pairs this returns. Cross-fitting holds only if a probe
trains and is scored in its source pair's fold, so :func:`probe_folds` puts each probe in the
fold of the pair it was built from; a probe whose source was not among the training pairs gets
a fold from a stable hash of its source, so all the probes of one source still share one.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scoring.metrics.judge_training_options import LabelledPair
from scoring.probes.build import AGAINST_CONTROL, Probe, ProbeKind

# The identity control (S, S) teaches nothing a judge does not know: the real rewrites do.
TRAINING_CONTROLS = ("coordination", "punctuation", "case")
NEGATIVE_KINDS = (*AGAINST_CONTROL, ProbeKind.MULTI_SWAP)


@dataclass(frozen=True)
class ProbeTrainingPair:
    """A probe as a training pair, with the source group that decides its fold."""

    group: str
    pair: LabelledPair


def probe_training_pairs(
    probes: Sequence[Probe], share: float, campaign_pairs: int, seed: int
) -> list[ProbeTrainingPair]:
    """Probes making up ``share`` of a training mix with ``campaign_pairs`` labelled pairs, half
    non-paraphrases (swaps, changes) and half controls where there are enough of each."""
    if not 0 <= share < 1:
        raise ValueError(f"the probes' share of the training pairs must be in [0, 1), got {share}")
    wanted = round(share / (1 - share) * campaign_pairs)
    negatives = [p for p in probes if p.kind in NEGATIVE_KINDS]
    positives = [p for p in probes if p.kind == ProbeKind.CONTROL and p.detail in TRAINING_CONTROLS]
    rng = random.Random(seed)
    rng.shuffle(negatives)
    rng.shuffle(positives)
    take_positive = min(len(positives), wanted // 2)
    take_negative = min(len(negatives), wanted - take_positive)
    take_positive = min(len(positives), wanted - take_negative)
    chosen = [(p, False) for p in negatives[:take_negative]] + [(p, True) for p in positives[:take_positive]]
    return [ProbeTrainingPair(p.group, LabelledPair(p.source, p.hypothesis, label)) for p, label in chosen]


def probe_folds(pairs: Sequence[ProbeTrainingPair], source_folds: Mapping[str, int], folds: int) -> dict[str, int]:
    """Training key -> fold for each probe: its source pair's fold (``source_folds`` by group)."""
    assignment: dict[str, int] = {}
    for item in pairs:
        fold = source_folds.get(item.group)
        if fold is None:
            digest = hashlib.sha256(item.group.encode()).digest()
            fold = int.from_bytes(digest[:4], "big") % folds
        assignment[item.pair.key] = fold
    return assignment
