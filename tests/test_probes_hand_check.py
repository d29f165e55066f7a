"""The probe benchmark's hand check: the sample it draws, the file of verdicts it reads back, and
the counts it prints (the documentation shows them through the recorded output)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.probes import HAND_CHECK, SAMPLED_KINDS, hand_sample, print_hand_check, probe_ids, write_sample
from scoring.probes.build import Probe, ProbeKind

PROBES = [
    Probe("1-2", ProbeKind.PAWS_SWAP, "A met B in Rome.", "B met A in Rome.", False, detail="A <-> B"),
    Probe("1-2", ProbeKind.CONTROL, "A met B in Rome.", "A met B in Rome.", True, detail="identity"),
    Probe("1-2", ProbeKind.CONTROL, "A met B in Rome.", "a met b in rome.", True, detail="case"),
    Probe("3-4", ProbeKind.PAWS_SWAP, "Cats chase dogs.", "Dogs chase cats.", False, detail="Cats <-> dogs"),
    Probe("3-4", ProbeKind.CONTROL, "Cats chase dogs.", "Cats chase dogs.", True, detail="identity"),
    Probe("3-4", ProbeKind.NUMBER, "It cost 5 dollars.", "It cost 7 dollars.", False, detail="5 -> 7"),
]


def test_each_probe_has_a_stable_id_of_kind_source_and_rank() -> None:
    assert probe_ids(PROBES) == [
        "paws_swap:1-2:1",
        "control:1-2:1",
        "control:1-2:2",
        "paws_swap:3-4:1",
        "control:3-4:1",
        "number:3-4:1",
    ]


def test_the_sample_is_seeded_and_takes_each_kind_up_to_its_size() -> None:
    sample = hand_sample(PROBES, 2, seed=5)
    assert [pid for pid, _ in sample] == [pid for pid, _ in hand_sample(PROBES, 2, seed=5)]
    kinds = [probe.kind for _, probe in sample]
    assert kinds.count(ProbeKind.PAWS_SWAP) == 2 and kinds.count(ProbeKind.CONTROL) == 2
    assert kinds.count(ProbeKind.NUMBER) == 1


def test_the_verdicts_are_counted_per_kind_and_a_file_of_another_sample_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "check.json"
    write_sample(PROBES, 2, 5, path)
    with pytest.raises(SystemExit, match="some probes have no verdict yet"):
        print_hand_check(PROBES, path)
    data = json.loads(path.read_text())
    for row in data["probes"]:
        row["fluent"] = row["id"] != "paws_swap:1-2:1"
        row["relation"] = row["kind"] != "number"
    data["notes"] = {"number": "a note"}
    path.write_text(json.dumps(data))
    print_hand_check(PROBES, path)
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:] == [
        "kind           fluent  relation   both",
        "multi_swap      0 / 0     0 / 0    0",
        "paws_swap       1 / 2     2 / 2    1",
        "number          1 / 1     0 / 1    0",
        "date            0 / 0     0 / 0    0",
        "negation        0 / 0     0 / 0    0",
        "reversed        0 / 0     0 / 0    0",
        "padded          0 / 0     0 / 0    0",
        "control         2 / 2     2 / 2    2",
        "  number: a note",
    ]
    data["seed"] = 6
    path.write_text(json.dumps(data))
    with pytest.raises(SystemExit, match="its probe ids are not the sample drawn with seed 6: draw it again"):
        print_hand_check(PROBES, path)


def test_the_committed_hand_check_reads_50_of_each_kind_with_both_verdicts() -> None:
    data = json.loads(HAND_CHECK.read_text())
    assert data["seed"] == 20250101 and data["per_kind"] == 50
    rows = data["probes"]
    assert len({row["id"] for row in rows}) == len(rows) == 50 * len(SAMPLED_KINDS)
    assert all(isinstance(row["fluent"], bool) and isinstance(row["relation"], bool) for row in rows)
    assert all(row["id"].startswith(f"{row['kind']}:") for row in rows)
