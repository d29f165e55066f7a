"""Probe pairs as training pairs for a judge that should read word order: the swaps and changes
as non-paraphrases, the meaning-keeping controls as paraphrases, cross-fitted by source.

:func:`training_probes` builds them from the labelled pairs a tuning keeps (``tune_judge
--probe-share``, ``PARAEVAL_TUNING_PROBE_SHARE``) and picks the share asked for; the tuning code
(:func:`scoring.metrics.judge_training.training_plan`) deals their folds by source sentence. Cross-fitting
holds only if a probe trains and is scored in its source pair's fold, so :func:`probe_folds` puts
each probe in the fold of the pair it was built from; a probe whose source was not among the
training pairs gets a fold from a stable hash of its source, so all the probes of one source
still share one.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence

from scoring.metrics.judge_training_options import LabelledPair, TrainingProbe
from scoring.probes.build import AGAINST_CONTROL, Probe, ProbeKind, SourcePair

# The identity control (S, S) teaches nothing a judge does not know: the real rewrites do.
TRAINING_CONTROLS = ("coordination", "punctuation", "case")
NEGATIVE_KINDS = (*AGAINST_CONTROL, ProbeKind.MULTI_SWAP)


# A probe as a training pair, with the source group that decides its fold.
ProbeTrainingPair = TrainingProbe


class NotEnoughProbes(ValueError):
    """Fewer probes could be built than the share asks for; the message gives both counts."""


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


def wanted_probes(share: float, campaign_pairs: int) -> int:
    """How many probes make up ``share`` of a mix with ``campaign_pairs`` labelled pairs."""
    return round(share / (1 - share) * campaign_pairs)


def training_probes(pairs: Sequence[LabelledPair], share: float, seed: int) -> list[TrainingProbe]:
    """The probes of ``pairs`` (the labelled pairs a tuning keeps) making up exactly ``share`` of
    the mix: built with the seed (a pair's key is its group), then picked by
    :func:`probe_training_pairs`; :class:`NotEnoughProbes` when fewer can be built."""
    from scoring.probes.build import build_probes
    from scoring.probes.parse import parse_pairs

    if not 0 <= share < 1:
        raise ValueError(f"the probes' share of the training pairs must be in [0, 1), got {share}")
    wanted = wanted_probes(share, len(pairs))
    if not wanted:
        return []
    sources = [SourcePair(pair.key, pair.source, pair.hypothesis, pair.label) for pair in pairs]
    probes = build_probes(parse_pairs(sources), (*AGAINST_CONTROL, ProbeKind.MULTI_SWAP), seed)
    chosen = probe_training_pairs(probes, share, len(pairs), seed)
    if len(chosen) < wanted:
        raise NotEnoughProbes(
            f"a probe share of {share} with {len(pairs)} labelled pairs needs {wanted} probe pairs, but only "
            f"{len(chosen)} could be built from them: lower the share"
        )
    return chosen
