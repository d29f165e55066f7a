"""The embedded broker's transport: whole messages only, in order, each taken once, never fatal."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from kombu import Connection

import paraeval.celery  # noqa: F401 - registers the paraevalfs:// transport


def connection(base: Path) -> Connection:
    folder = base / "queue"
    return Connection(
        "paraevalfs://",
        transport_options={
            "data_folder_in": str(folder),
            "data_folder_out": str(folder),
            "processed_folder": str(base / "processed"),
            "control_folder": str(base / "control"),
        },
    )


def test_messages_keep_their_order_and_a_half_written_file_is_never_taken(tmp_path: Path) -> None:
    with connection(tmp_path) as conn:
        channel = conn.default_channel
        queue = tmp_path / "queue"
        # A message being written has a hidden temporary name: no consumer may match it.
        (queue / ".00000000000000000001_x.cpu.msg.tmp").write_bytes(b"")
        for number in range(200):  # far more than one per millisecond
            channel._put("cpu", {"n": number})
        assert channel._size("cpu") == 200
        taken = [channel._get("cpu")["n"] for _ in range(200)]
        assert taken == list(range(200))
        assert channel._size("cpu") == 0
        assert [path.name for path in queue.iterdir()] == [".00000000000000000001_x.cpu.msg.tmp"]
        assert list((tmp_path / "processed").iterdir()) == []


def test_a_broken_message_file_is_skipped_not_fatal(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with connection(tmp_path) as conn:
        channel = conn.default_channel
        (tmp_path / "queue" / "00000000000000000001_broken.cpu.msg").write_bytes(b"")
        channel._put("cpu", {"n": 1})
        assert channel._get("cpu") == {"n": 1}
        assert "not a valid message" in caplog.text


def test_two_consumers_never_take_the_same_message(tmp_path: Path) -> None:
    with connection(tmp_path) as producer:
        for number in range(300):
            producer.default_channel._put("llm", {"n": number})
    taken: list[list[int]] = [[], []]

    def consume(slot: int) -> None:
        with connection(tmp_path) as conn:
            channel = conn.default_channel
            while True:
                try:
                    taken[slot].append(channel._get("llm")["n"])
                except Exception:  # noqa: BLE001 - queue.Empty: nothing left
                    return

    threads = [threading.Thread(target=consume, args=(slot,)) for slot in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(taken[0] + taken[1]) == list(range(300))
