"""Candidate generation: candidates/s and generated tokens/s against the model's forward-pass rate.

    .venv/bin/python benchmarks/generation_speed.py [--sources 8] [--max-new-tokens 32] [--rounds 3] [--threads 1]

On the embedded model (SmolLM2-135M-Instruct, float32, CPU unless ``--device``) and the first
``--sources`` sentences of MRPC's test file (``../shared/data/mrpc/``), with the paper's
``naive`` prompt (A.1), in one batch as a worker task runs it (:func:`scoring.generation.run.generate_texts`,
greedy). In the same process, alternating round by round, it times the reference: one forward
pass of the model over the same batch of prompts (no generation), the unit every generated
token costs at least once. Printed:

* forward passes/s over the prompt batch (and prompt tokens/s);
* candidates/s and generated tokens/s (tokens up to each row's end of sequence);
* decode steps/s (the longest row's tokens per second of generation) and its ratio to the
  forward passes/s: a step runs the model on one new token per row with the key/value cache,
  so it is cheaper than a whole-prompt pass; a ratio below 1 is the per-step overhead of
  ``generate`` (sampling logic, cache handling) dominating on a small model.

On a GPU, a configured judge model, e.g.::

    .venv/bin/python benchmarks/generation_speed.py --model /models/Mistral-7B-Instruct-v0.2 \\
        --device cuda --dtype float16 --sources 32 --max-new-tokens 48 --threads 0
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "paraeval.settings")
os.environ.setdefault("SECRET_KEY", "benchmark-only-not-a-secret")
# The output is the record (benchmarks/record.py keeps it): no progress bars, no library chatter.
os.environ.setdefault("TQDM_DISABLE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import django  # noqa: E402

django.setup()

# The shared corpora: PARAEVAL_SHARED_DATA, else shared/data beside the checkout (tests/corpora.py).
MRPC_TEST = (
    Path(os.environ.get("PARAEVAL_SHARED_DATA") or ROOT.parent / "shared" / "data") / "mrpc" / "msr_paraphrase_test.txt"
)


def mrpc_sources(count: int) -> list[str]:
    path = MRPC_TEST
    lines = path.read_text(encoding="utf-8-sig").splitlines()[1:]
    return [line.split("\t")[3] for line in lines[:count]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (0: torch's default)")
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    options = parser.parse_args()

    import torch

    from scoring.generation.candidates import GenerationSettings, templates
    from scoring.generation.run import generate_texts, render
    from scoring.metrics.lm import load_lm

    if options.threads > 0:
        torch.set_num_threads(options.threads)
    logging.getLogger("scoring.metrics.lm").setLevel(logging.WARNING)  # its "loaded" line: printed below
    loading = time.perf_counter()
    lm = load_lm(options.model, options.device, options.dtype)
    loaded_in = time.perf_counter() - loading
    template = templates()["naive"]
    prompts = [render(lm, template, source) for source in mrpc_sources(options.sources)]
    settings = GenerationSettings(max_new_tokens=options.max_new_tokens)
    tokenizer = lm.tokenizer
    tokenizer.padding_side = "left"
    batch = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    batch = {name: tensor.to(lm.model.device) for name, tensor in batch.items()}
    prompt_tokens = int(batch["attention_mask"].sum())

    def forward() -> float:
        started = time.perf_counter()
        with torch.inference_mode():
            lm.model(**batch)
        return time.perf_counter() - started

    forward()  # warm-up
    generate_texts(lm, prompts[:1], GenerationSettings(max_new_tokens=2))
    passes, runs = [], []
    for _ in range(options.rounds):
        passes.append(forward())
        started = time.perf_counter()
        outputs = generate_texts(lm, prompts, settings)
        runs.append((time.perf_counter() - started, outputs))
    pass_s = statistics.median(passes)
    gen_s = statistics.median(seconds for seconds, _ in runs)
    outputs = runs[-1][1]
    new_tokens = sum(tokens for _, tokens in outputs)
    steps = max(tokens for _, tokens in outputs)
    print(
        f"model {lm.label} on {options.device} ({options.dtype}, loaded in {loaded_in:.0f} s), "
        f"torch {torch.__version__}, threads {torch.get_num_threads()}, {os.cpu_count()} CPUs, "
        f"{platform.processor() or platform.machine()}; load average {os.getloadavg()[0]:.2f}"
    )
    print(
        f"{len(prompts)} sources, naive template, greedy, at most {options.max_new_tokens} new tokens; "
        f"median of {options.rounds} alternating rounds"
    )
    rate = f"{prompt_tokens / pass_s:,.0f} prompt tokens/s"
    print(f"forward pass over the prompt batch: {1 / pass_s:8.2f} passes/s ({rate})")
    tokens = f"{new_tokens / gen_s:,.1f} generated tokens/s"
    print(f"generation:                         {len(prompts) / gen_s:8.2f} candidates/s, {tokens}")
    ratio = f"{steps / gen_s * pass_s:.2f} x the forward-pass rate"
    print(f"decode steps:                       {steps / gen_s:8.2f} steps/s = {ratio}")
    print(f"one candidate costs {gen_s / len(prompts) / pass_s:.2f} batch forward passes of time")


if __name__ == "__main__":
    main()
