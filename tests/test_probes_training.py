"""Probe pairs in a judge's training mix: the share asked for, the labels by construction, and
every probe in its source's fold."""

from __future__ import annotations

import pytest

from scoring.probes.build import Probe, ProbeKind
from scoring.probes.training import probe_folds, probe_training_pairs

PROBES = [
    Probe("1", ProbeKind.PAWS_SWAP, "A met B.", "B met A.", False),
    Probe("1", ProbeKind.CONTROL, "A met B.", "A met B.", True, detail="identity"),
    Probe("1", ProbeKind.CONTROL, "A met B.", "a met b.", True, detail="case"),
    Probe("2", ProbeKind.NUMBER, "It cost 5 dollars.", "It cost 7 dollars.", False),
    Probe("2", ProbeKind.CONTROL, "It cost 5 dollars.", "It cost 5 dollars", True, detail="punctuation"),
    Probe("2", ProbeKind.REVERSED, "x", "y", True),
]


def test_share_and_labels() -> None:
    # A quarter of the mix with 12 campaign pairs: 4 probes, two of each label (all there are).
    chosen = probe_training_pairs(PROBES, 0.25, 12, seed=1)
    assert sorted((c.group, c.pair.hypothesis, c.pair.label) for c in chosen) == [
        ("1", "B met A.", False),
        ("1", "a met b.", True),
        ("2", "It cost 5 dollars", True),
        ("2", "It cost 7 dollars.", False),
    ]
    assert probe_training_pairs(PROBES, 0.0, 12, seed=1) == []
    with pytest.raises(ValueError, match=r"must be in \[0, 1\), got 1.0"):
        probe_training_pairs(PROBES, 1.0, 12, seed=1)


def test_each_probe_trains_in_its_source_fold() -> None:
    chosen = probe_training_pairs(PROBES, 0.25, 12, seed=1)
    folds = probe_folds(chosen, {"1": 3}, folds=5)
    assert {folds[c.pair.key] for c in chosen if c.group == "1"} == {3}
    # The source of group 2 was not trained on: its probes still share one fold.
    assert len({folds[c.pair.key] for c in chosen if c.group == "2"}) == 1
