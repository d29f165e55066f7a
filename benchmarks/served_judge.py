"""A served judge against the in-process fast path, same process, same pairs, same model.

    .venv/bin/python benchmarks/served_judge.py [--template direct] [--in-flight 1,4,16] [--rounds 1]

Starts llama-cpp-python's server (``requirements-served.txt``) on a free loopback port with the
embedded SmolLM2 GGUF, then scores the demo campaign's pairs with ParaPLUIE:

* in-process: the fast path the model workers run (one forward pass per pair, batches of 8,
  the template's shared prefix cached), on this machine's cores;
* served: :class:`scoring.metrics.served.ServedParaPluie` in top-k mode (one ``/v1/completions``
  request per pair), with 1, 4 and 16 requests in flight.

For each it prints pairs/s (wall clock), the ratio to the in-process rate, and the CPU seconds
per pair of the scoring process (for the served judge: the worker's share, requests and
JSON) and of the server process (``/proc/<pid>/stat``). Both sides share this machine's cores,
so the served rate is the server's: the worker's CPU per pair is what a served judge costs the
worker node. Run again with ``--server URL --chat-template SOURCE`` to time another server
(its CPU is then not measured). Pairs are scored in the same order each time; the first
request of each run warms the server's prompt cache like the in-process prefix.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TQDM_DISABLE", "1")  # no de-quantisation progress bar in the recorded output

from scoring.metrics.judges import parse_models  # noqa: E402 - after the path above
from scoring.metrics.parapluie import ParaPluie  # noqa: E402
from scoring.metrics.served import ServedParaPluie, forget_connections  # noqa: E402

DEMO = ROOT / "annotate" / "demo" / "demo_campaign.jsonl"
TICKS = os.sysconf("SC_CLK_TCK")


def demo_pairs() -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(row["source"], row["hypothesis"]) for row in rows]


def process_cpu(pid: int | None) -> float:
    """User + system CPU seconds of process ``pid`` (0 when unknown)."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def timed(run, pairs, server_pid):  # type: ignore[no-untyped-def]
    wall, cpu, server = time.perf_counter(), time.process_time(), process_cpu(server_pid)
    outcomes = run(pairs)
    wall = time.perf_counter() - wall
    cpu = time.process_time() - cpu
    server = process_cpu(server_pid) - server
    return outcomes, wall, cpu, server


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--template", default="direct")
    parser.add_argument("--in-flight", default="1,4,16", help="requests in flight, comma-separated")
    parser.add_argument("--server", help="an OpenAI-compatible server already running (default: start one)")
    parser.add_argument("--chat-template", default="embedded", help="with --server: the model's chat template")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads of the server and of torch (default 2)")
    options = parser.parse_args()
    import torch

    torch.set_num_threads(options.threads)
    pairs = demo_pairs()
    server = None
    url = options.server
    if url is None:
        from tests.served_support import LlamaServer, embedded_model

        server = LlamaServer(embedded_model(), Path("/tmp"), alias="SmolLM2-135M-Instruct-Q4_1")
        server.start()
        url = server.url
    pid = server.process.pid if server is not None and server.process is not None else None
    try:
        local = ParaPluie(template=options.template, model="embedded", batch_size=8)
        local.score_batch(pairs[:2])  # loads the model and caches the shared prefix, untimed
        print(
            f"ParaPLUIE {options.template} on SmolLM2-135M-Instruct, {len(pairs)} demo pairs; "
            f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load average "
            f"{os.getloadavg()[0]:.2f}; torch and the server on {options.threads} threads"
        )
        values, wall, cpu, _ = timed(local.score_batch, pairs, None)
        base = len(pairs) / wall
        rows = [("in-process fast path (float32)", "-", base, 1.0, cpu / len(pairs), None, 0)]
        for in_flight in [int(value) for value in options.in_flight.split(",")]:
            forget_connections()
            judge = parse_models(
                f"served[server={url},chat_template={options.chat_template},mode=top-k,concurrency={in_flight}]"
            )[0]
            metric = ServedParaPluie(options.template, judge)
            metric.score_many(pairs[:1])  # the server's first prompt, untimed
            outcomes, wall, cpu, server_cpu = timed(metric.score_many, pairs, pid)
            failed = sum(1 for outcome in outcomes if not outcome.ok)
            rate = len(pairs) / wall
            rows.append(
                (
                    f"served, top-{metric.served.plan.top_k}",
                    str(in_flight),
                    rate,
                    rate / base,
                    cpu / len(pairs),
                    server_cpu / len(pairs) if pid else None,
                    failed,
                )
            )
            deltas = [abs(o.value - v) for o, v in zip(outcomes, values, strict=True) if o.ok]
            print(
                f"  {in_flight} in flight: median |served - in-process| {sorted(deltas)[len(deltas) // 2]:.3f} "
                f"(the Q4_1 file computed by llama.cpp), {failed} failed"
            )
        print()
        print(
            f"{'judge':<32} {'in flight':>9} {'pairs/s':>8} {'x in-process':>12} {'worker CPU/pair':>16} "
            f"{'server CPU/pair':>16} {'failed':>6}"
        )
        for name, in_flight, rate, ratio, worker_cpu, server_cpu, failed in rows:
            server_text = f"{server_cpu * 1000:.1f} ms" if server_cpu is not None else "-"
            print(
                f"{name:<32} {in_flight:>9} {rate:>8.1f} {ratio:>11.2f}x {worker_cpu * 1000:>13.1f} ms "
                f"{server_text:>16} {failed:>6}"
            )
        print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
