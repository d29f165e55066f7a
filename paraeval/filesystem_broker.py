"""The embedded broker: kombu's filesystem transport, with messages that appear whole.

kombu's transport writes a message by creating ``<time>_<uuid>.<queue>.msg`` and then
writing into it, while a consumer polling the folder may take the file in between: it reads
an empty message and the worker stops with "Unrecoverable error: JSONDecodeError" (seen here
under load). This transport writes each message to a hidden temporary name and renames it
into place, which is atomic on one file system, so a consumer only ever sees complete
messages. It also

* names messages by ``time.monotonic_ns()``, zero-padded, so that messages sent within the
  same millisecond keep their order (kombu sorts by name; its millisecond stamp left them to
  the random uuid);
* puts the message's priority (0-9) first in the name, so a worker takes a queue's messages
  with the smallest number first, as on Redis (kombu's own transport ignores priorities): an
  answered pair's scores do not wait behind an import's backlog;
* takes a message by renaming it into the processed folder (same file system, atomic), so
  two consumers of one folder can never both take it;
* logs and skips a file that is not a valid message instead of stopping the worker.

Registered as the ``paraevalfs://`` broker URL in :mod:`paraeval.celery`.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from pathlib import Path
from queue import Empty
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

logger = logging.getLogger(__name__)


class Channel(filesystem.Channel):
    """Atomic writes and takes; see the module docstring."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A missing folder would make every take fail like a lost race: create them up front
        # (here, where they are used: the settings create no folder).
        for folder in (self.data_folder_in, self.data_folder_out, self.processed_folder, self.control_folder):
            os.makedirs(folder, exist_ok=True)

    # kombu names the argument "message" in AbstractChannel and "payload" in filesystem.Channel.
    def _put(self, queue: Any, payload: Any, **kwargs: Any) -> None:  # type: ignore[override]
        priority = self._get_message_priority(payload)  # 0-9; 0 when the message has none
        name = f"{priority}_{time.monotonic_ns():020d}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        # A leading dot and a trailing ".tmp": no consumer matches it while it is being written.
        temporary = os.path.join(self.data_folder_out, f".{name}.tmp")
        try:
            with open(temporary, "wb") as handle:
                handle.write(str_to_bytes(dumps(payload)))
            os.replace(temporary, final)
        except OSError as error:
            Path(temporary).unlink(missing_ok=True)
            raise ChannelError(f"Cannot add message {name!r} to {self.data_folder_out!r}: {error}") from error

    def _get(self, queue: Any, timeout: Any = None) -> Any:
        wanted = f"{queue}.msg"
        for name in sorted(os.listdir(self.data_folder_in)):
            if name.partition(".")[2] != wanted:
                continue
            taken = os.path.join(self.processed_folder, name)
            try:
                os.rename(os.path.join(self.data_folder_in, name), taken)
            except OSError:
                continue  # another consumer took it first
            try:
                payload = Path(taken).read_bytes()
            except OSError as error:
                raise ChannelError(f"Cannot read message {taken!r}: {error}") from error
            finally:
                if not self.store_processed:
                    Path(taken).unlink(missing_ok=True)
            try:
                return loads(bytes_to_str(payload))
            except ValueError:
                logger.error("skipped %s: not a valid message (%d bytes)", name, len(payload))
        raise Empty()


class Transport(filesystem.Transport):
    Channel = Channel

    @property
    def default_connection_params(self) -> dict[str, Any]:
        # A folder has no host or port: the stock filesystem transport inherits the network
        # defaults, and kombu then warns "No hostname was supplied" on every connection.
        return {}
