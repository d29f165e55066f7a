"""ParaPLUIE: the fast path against the paper's two-pass reference, same process, same pairs.

    .venv/bin/python benchmarks/parapluie_speed.py [--pairs 200] [--templates direct,fs_direct,indirect] [--threads 1]

On the embedded model (SmolLM2-135M-Instruct, float32, CPU) and the first ``--pairs`` pairs of
MRPC's test file (``../shared/data/mrpc/``), for each template:

* reference: the paper's (T + 1) x (loss(Tpl o no) - loss(Tpl o yes)), two full forward passes
  per pair with mean cross-entropy, one pair at a time (as the authors' ``ppluie`` code does);
* fast: what the workers run: one forward pass per pair, batches of ``--batch-size`` with left
  padding, the template's shared prefix run once and its key/value cache reused (its one-time
  cost is included in the fast time).

The pairs go through in chunks of ``--chunk`` (a worker task's size): reference then fast on each
chunk, so a machine that gets busier or quieter mid-run affects both alike. Pairs per second use
wall-clock time; on CPU the ratio of process CPU time is printed too, which other processes
on a shared machine disturb less. "max |fast - ref|" compares with the reference whose mean
cross-entropies are accumulated in float64; "ref32" is the same two passes with float32 means
(``model(labels=...).loss``), whose own rounding grows with the prompt's length.

On a CPU the run uses the worker's thread count (``--threads``, default
``PARAEVAL_WORKER_THREADS`` = 1; 0 keeps torch's default). Beside each ratio it prints the FLOP
bound: the reference's FLOPs over the fast path's (``benchmarks/parapluie_flops.py``: matrix
products, attention and logits; the shared prefix's one-time pass included), the ratio a
method would reach at the same FLOP rate as the reference; "of bound" is the measured ratio
(CPU time on a CPU) over it. For a model of Mistral-7B's shape against the hardware's own
matrix-multiply rate, see ``benchmarks/parapluie_gpu.py``.

INDIRECT generates each explanation E first (greedy, batched, at most ``--max-new-tokens``),
once: both methods then score the same E, and both times include generating it (the ratio of
the scoring alone is printed below the table).

On a GPU node, time the paper's configuration with the model's weights::

    benchmarks/parapluie_speed.py --model /models/Mistral-7B-Instruct-v0.2 --device cuda --dtype float16

or, without them, a randomly initialised model of the same architecture (the cost is real, the
scores meaningless; the embedded model's tokenizer stands in for Mistral's)::

    benchmarks/parapluie_speed.py --random-init-config benchmarks/configs/mistral-7b-instruct-v0.2.json \\
        --device cuda --dtype float16
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "paraeval.settings")
os.environ.setdefault("SECRET_KEY", "benchmark-only-not-a-secret")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from scoring.metrics.base import Pair  # noqa: E402
from scoring.metrics.lm import CausalLM, build_random_lm, load_lm, load_tokenizer  # noqa: E402
from scoring.metrics.parapluie_engine import TemplateScorer, answer_spelling_mass  # noqa: E402
from scoring.metrics.templates import TemplateKind, get_template  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from parapluie_flops import fast_flops, forward_flops, reference_flops, shape_of  # noqa: E402

MRPC_TEST = ROOT.parent / "shared" / "data" / "mrpc" / "msr_paraphrase_test.txt"


def mrpc_pairs(count: int) -> list[Pair]:
    """The first ``count`` pairs of MRPC's test file (sentence 1 = source)."""
    with MRPC_TEST.open(encoding="utf-8-sig") as handle:
        next(handle)
        rows = [line.rstrip("\n").split("\t") for line in handle]
    return [(row[3], row[4]) for row in rows[:count]]


@dataclass
class Clock:
    """Wall-clock and process CPU seconds spent inside :meth:`run`."""

    cuda: bool
    wall: float = 0.0
    cpu: float = 0.0

    def run(self, work: Callable[[], Any]) -> Any:
        self._sync()
        wall, cpu = time.perf_counter(), time.process_time()
        result = work()
        self._sync()
        self.wall += time.perf_counter() - wall
        self.cpu += time.process_time() - cpu
        return result

    def _sync(self) -> None:
        if self.cuda:
            import torch

            torch.cuda.synchronize()


@dataclass
class Row:
    template: str
    pairs: int
    prompt_tokens: float
    prefix_tokens: int
    reference: Clock
    fast: Clock
    max_difference: float
    max_difference_float32: float
    generation_seconds: float | None = None
    scoring_only: tuple[float, float] | None = None  # INDIRECT: seconds after E, reference and fast
    bound: float | None = None  # reference FLOPs / fast FLOPs (not for INDIRECT: generation)

    def cells(self, cuda: bool) -> list[str]:
        ratio = self.reference.wall / self.fast.wall
        measured = ratio if cuda else self.reference.cpu / self.fast.cpu
        cells = [
            self.template,
            f"{self.prompt_tokens:.0f}",
            str(self.prefix_tokens),
            f"{self.pairs / self.reference.wall:.2f}",
            f"{self.pairs / self.fast.wall:.2f}",
            f"{ratio:.1f}x",
        ]
        if not cuda:
            cells.append(f"{measured:.1f}x")
        if self.bound is not None:
            cells += [f"{self.bound:.1f}x", f"{100 * measured / self.bound:.0f}%"]
        else:
            cells += ["-", "-"]
        cells += [f"{self.max_difference:.1e}", f"{self.max_difference_float32:.1e}"]
        return cells


def build_model(options: argparse.Namespace) -> CausalLM:
    if options.random_init_config:
        tokenizer = load_tokenizer(options.tokenizer).tokenizer
        return build_random_lm(options.random_init_config, tokenizer, device=options.device, dtype=options.dtype)
    return load_lm(options.model, options.device, options.dtype, allow_download=settings.PARAEVAL_ALLOW_MODEL_DOWNLOAD)


def measure(lm: CausalLM, name: str, pairs: Sequence[Pair], options: argparse.Namespace) -> Row:
    template = get_template(name)
    cuda = options.device.startswith("cuda")
    reference, fast = Clock(cuda), Clock(cuda)
    # A fresh scorer: its shared prefix is computed inside the first timed fast run.
    scorer = TemplateScorer(lm, template)
    fast_scores: list[float] = []
    reference_scores: list[Any] = []
    generation = Clock(cuda)
    for start in range(0, len(pairs), options.chunk):
        chunk = pairs[start : start + options.chunk]
        if template.kind is TemplateKind.INDIRECT:
            explanations = generation.run(
                lambda chunk=chunk: scorer.explanations(
                    chunk, batch_size=options.batch_size, max_new_tokens=options.max_new_tokens
                )
            )
            reference_scores += reference.run(lambda chunk=chunk, e=explanations: scorer.reference(chunk, e))
            fast_scores += fast.run(
                lambda chunk=chunk, e=explanations: scorer.score_follow_ups(chunk, e, batch_size=options.batch_size)
            )
        else:
            reference_scores += reference.run(lambda chunk=chunk: scorer.reference(chunk))
            fast_scores += fast.run(
                lambda chunk=chunk: scorer.score(chunk, batch_size=options.batch_size, max_new_tokens=0)
            )
    prefix = scorer.follow_up_prefix if template.kind is TemplateKind.INDIRECT else scorer.question_prefix
    bound = None
    if template.kind is not TemplateKind.INDIRECT and prefix is not None:
        shape = shape_of(lm.model)
        shared = len(prefix.ids)
        prompts = scorer.question_ids(pairs)
        reference_total = sum(reference_flops(shape, len(ids)) for ids in prompts)
        fast_total = forward_flops(shape, shared) + sum(
            fast_flops(shape, len(ids), shared if ids[:shared] == prefix.ids else 0) for ids in prompts
        )
        bound = reference_total / fast_total
    scoring_only = None
    if template.kind is TemplateKind.INDIRECT:
        # E is generated once (batched) and both methods score it: both pay for it.
        scoring_only = (reference.wall, fast.wall)
        for clock in (reference, fast):
            clock.wall += generation.wall
            clock.cpu += generation.cpu
    return Row(
        template=name,
        pairs=len(pairs),
        prompt_tokens=sum(result.tokens for result in reference_scores) / len(pairs),
        prefix_tokens=len(prefix.ids) if prefix is not None else 0,
        reference=reference,
        fast=fast,
        max_difference=max(abs(a - b.value) for a, b in zip(fast_scores, reference_scores, strict=True)),
        max_difference_float32=max(
            abs(a - b.value_float32_mean) for a, b in zip(fast_scores, reference_scores, strict=True)
        ),
        generation_seconds=generation.wall if scoring_only else None,
        scoring_only=scoring_only,
        bound=bound,
    )


def print_table(rows: list[Row], cuda: bool) -> None:
    header = ["template", "prompt tokens", "shared prefix", "reference pairs/s", "fast pairs/s", "ratio"]
    if not cuda:
        header.append("CPU-time ratio")
    header += ["FLOP bound", "of bound", "max |fast - ref|", "max |fast - ref32|"]
    table = [header, *(row.cells(cuda) for row in rows)]
    widths = [max(len(line[column]) for line in table) for column in range(len(header))]
    for line in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=200, help="MRPC test pairs (default 200).")
    parser.add_argument("--templates", default="direct,fs_direct,indirect", help="Comma-separated template names.")
    parser.add_argument("--model", default=settings.PARAPLUIE_MODEL, help="As PARAPLUIE_MODEL (default: embedded).")
    parser.add_argument("--device", default=settings.PARAPLUIE_DEVICE, help="cpu, cuda, cuda:1…")
    parser.add_argument("--dtype", default=settings.PARAPLUIE_DTYPE, choices=["float32", "float16", "bfloat16"])
    parser.add_argument("--batch-size", type=int, default=settings.PARAPLUIE_BATCH_SIZE)
    parser.add_argument("--chunk", type=int, default=settings.PARAEVAL_SCORING_BATCH_SIZE, help="Pairs per task.")
    parser.add_argument("--max-new-tokens", type=int, default=settings.PARAPLUIE_INDIRECT_MAX_NEW_TOKENS)
    parser.add_argument(
        "--random-init-config", default=None, help="config.json of a model to build with random weights."
    )
    parser.add_argument("--tokenizer", default="embedded", help="Stand-in tokenizer for --random-init-config.")
    parser.add_argument(
        "--threads",
        type=int,
        default=settings.PARAEVAL_WORKER_THREADS,
        help="CPU threads (default: a worker's, PARAEVAL_WORKER_THREADS; 0: torch's default).",
    )
    options = parser.parse_args()

    import torch

    if options.threads > 0:
        torch.set_num_threads(options.threads)

    cuda = options.device.startswith("cuda")
    pairs = mrpc_pairs(options.pairs)
    started = time.perf_counter()
    lm = build_model(options)
    loaded = time.perf_counter() - started
    parameters = sum(parameter.numel() for parameter in lm.model.parameters())
    print(
        f"ParaPLUIE speed: {lm.label} ({parameters / 1e6:.0f}M parameters, loaded in {loaded:.0f}s), "
        f"{lm.device}, {lm.dtype}; {len(pairs)} MRPC test pairs"
    )
    hardware = torch.cuda.get_device_name(lm.model.device) if cuda else f"{os.cpu_count()} CPUs"
    print(
        f"torch {torch.__version__} ({torch.get_num_threads()} threads), {hardware}, {platform.machine()}; "
        f"batch {options.batch_size}, chunks of {options.chunk} pairs; load average {os.getloadavg()[0]:.2f}"
    )
    rows = []
    for name in [name.strip() for name in options.templates.split(",") if name.strip()]:
        row = measure(lm, name, pairs, options)
        rows.append(row)
        print(f"  {name}: done (load average {os.getloadavg()[0]:.2f})", flush=True)
    print()
    print_table(rows, cuda)
    for row in rows:
        if row.generation_seconds is not None and row.scoring_only is not None:
            reference_seconds, fast_seconds = row.scoring_only
            print(
                f"{row.template}: both include generating E once (greedy, batched, <= {options.max_new_tokens} "
                f"tokens): {row.generation_seconds:.1f}s; scoring E's follow-up alone: reference "
                f"{row.pairs / reference_seconds:.2f} pairs/s, fast {row.pairs / fast_seconds:.2f} pairs/s "
                f"({reference_seconds / fast_seconds:.1f}x)"
            )
    scorer = TemplateScorer(lm, get_template("direct"))
    sample = pairs[:20]
    mass = answer_spelling_mass(lm, [scorer.question_text(*pair) for pair in sample])
    spelled = ", ".join(f"{name} {value:.3f}" for name, value in mass.items())
    print(f"answer spellings after the generation prompt (mean p(yes) + p(no), DIRECT, {len(sample)} pairs): {spelled}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
