"""ParaPLUIE's fast path against the hardware's limit, on a model of Mistral-7B-Instruct-v0.2's shape.

    # On an H100 / H200 (the paper's judge model's shape, bfloat16):
    .venv/bin/python benchmarks/parapluie_gpu.py --device cuda --dtype bfloat16
    # On a CPU: a small configuration of the same architecture (hidden 512, 4 layers, 8 heads,
    # 2 key/value heads, MLP 1792), one thread (a worker's):
    .venv/bin/python benchmarks/parapluie_gpu.py --small --dtype float32
    .venv/bin/python benchmarks/parapluie_gpu.py --small --dtype bfloat16

The model is randomly initialised from ``benchmarks/configs/mistral-7b-instruct-v0.2.json``
(no weights can be fetched: the cost is real, the scores meaningless), with SmolLM2's tokenizer
standing in for Mistral's (the vocabulary is resized to its 49,152 tokens). For each template
(FS-DIRECT, DIRECT) and batch size (16/32/64/128), it scores the first ``--pairs`` MRPC test
pairs by the fast path the workers run and prints:

* pairs per second and prompt tokens per second (whole prompts: what gets scored), wall clock
  (on a CPU, process CPU time is printed too; at one thread both agree on a quiet machine);
* ``x floor``: the time over the compute floor, the time the pairs' own tokens take at the
  device's dense matrix-multiply rate measured in the same run (bfloat16 on a GPU, the model's
  dtype on a CPU): 2 x parameters x (suffix tokens: the prefix is shared and computed once) per
  pair, plus its one position of logits (``benchmarks/parapluie_flops.py``);
* ``bound``: the same ratio for the fast path's full FLOP count (attention over the prefix and
  the row's own tokens included) at that rate: what an implementation that wasted nothing
  would reach; ``x floor`` divided by it is the share lost to everything else;
* the same with the shared prefix's cache expanded over each batch (the previous method,
  ``expanded cache``) instead of attended to in place (``prefix attention``), when
  ``--compare`` is on (default on a CPU).

The batch size actually run can be lower than asked on a GPU: the scorer lowers it to what the
free memory holds (``parapluie_engine.fitting_batch_size``); the table says so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "paraeval.settings")
os.environ.setdefault("SECRET_KEY", "benchmark-only-not-a-secret")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from parapluie_flops import Shape, fast_flops, floor_flops, shape_of  # noqa: E402
from parapluie_speed import mrpc_pairs  # noqa: E402

from scoring.metrics.lm import CausalLM, build_random_lm, load_tokenizer  # noqa: E402
from scoring.metrics.parapluie_engine import (  # noqa: E402
    TemplateScorer,
    fitting_batch_size,
    install_prefix_attention,
    log_ratios,
)
from scoring.metrics.templates import get_template  # noqa: E402

CONFIG = ROOT / "benchmarks" / "configs" / "mistral-7b-instruct-v0.2.json"
# A small configuration of the same architecture for a CPU (grouped-query attention 8:2, the
# MLP/hidden ratio 3.5 and head size 64 of Mistral-7B's 32:8, 14336/4096, 128).
SMALL = {
    "hidden_size": 512,
    "intermediate_size": 1792,
    "num_hidden_layers": 4,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
}


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def matmul_rate(device: str, dtype: str, size: int, repeats: int) -> float:
    """Dense matrix-multiply FLOP/s of ``size`` x ``size`` products in ``dtype`` on ``device``."""
    import torch

    kind = getattr(torch, dtype)
    left = torch.randn(size, size, device=device, dtype=kind)
    right = torch.randn(size, size, device=device, dtype=kind)
    for _ in range(2):
        torch.matmul(left, right)
    synchronize(device)
    started = time.perf_counter()
    for _ in range(repeats):
        torch.matmul(left, right)
    synchronize(device)
    return 2.0 * size**3 * repeats / (time.perf_counter() - started)


def build(options: argparse.Namespace, folder: Path) -> CausalLM:
    config = json.loads(Path(options.config).read_text(encoding="utf-8"))
    if options.small:
        config.update(SMALL)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    tokenizer = load_tokenizer(options.tokenizer).tokenizer
    lm = build_random_lm(folder / "config.json", tokenizer, device=options.device, dtype=options.dtype)
    lm.label = "Mistral-7B-Instruct-v0.2 shape" + (
        " (small: " + ", ".join(f"{k} {v}" for k, v in SMALL.items()) + ")" if options.small else ""
    )
    return lm


def time_run(
    lm: CausalLM, scorer: TemplateScorer, prompts: list[list[int]], batch: int, device: str
) -> tuple[float, float]:
    """Wall and process CPU seconds of scoring ``prompts`` by the fast path."""
    synchronize(device)
    wall, cpu = time.perf_counter(), time.process_time()
    log_ratios(lm, prompts, scorer.answers, batch_size=batch, prefix=scorer.question_prefix)
    synchronize(device)
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=str(CONFIG), help="config.json of the architecture (Mistral-7B's).")
    parser.add_argument("--small", action="store_true", help="A small configuration of the same architecture (CPU).")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1…")
    parser.add_argument("--dtype", default=None, choices=["float32", "float16", "bfloat16"])
    parser.add_argument(
        "--pairs", type=int, default=None, help="MRPC test pairs (default 1024 on a GPU, 128 on a CPU)."
    )
    parser.add_argument("--batch-sizes", default="16,32,64,128")
    parser.add_argument("--templates", default="fs_direct,direct")
    parser.add_argument("--tokenizer", default="embedded", help="Stand-in tokenizer (its vocabulary sizes the model).")
    parser.add_argument(
        "--threads", type=int, default=settings.PARAEVAL_WORKER_THREADS, help="CPU threads (0: torch's)."
    )
    parser.add_argument("--compare", choices=["yes", "no"], default=None, help="Also time the expanded-cache method.")
    options = parser.parse_args()

    import torch

    cuda = options.device.startswith("cuda")
    options.dtype = options.dtype or ("bfloat16" if cuda else "float32")
    options.pairs = options.pairs or (1024 if cuda else 128)
    compare = (options.compare or ("no" if cuda else "yes")) == "yes"
    if not cuda and options.threads > 0:
        torch.set_num_threads(options.threads)
    pairs = mrpc_pairs(options.pairs)
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        lm = build(options, Path(folder))
        built = time.perf_counter() - started
    shape: Shape = shape_of(lm.model)
    parameters = sum(parameter.numel() for parameter in lm.model.parameters())
    rate_dtype = "bfloat16" if cuda else options.dtype
    rate = matmul_rate(options.device, rate_dtype, 8192 if cuda else 1024, 20 if cuda else 10)
    hardware = (
        torch.cuda.get_device_name(lm.model.device)
        if cuda
        else f"{os.cpu_count()} CPUs ({platform.processor() or platform.machine()})"
    )
    print(
        f"ParaPLUIE on the GPU path: {lm.label}, random weights; {parameters / 1e6:.0f}M parameters "
        f"({shape.body_parameters / 1e6:.0f}M in the decoder layers), built in {built:.0f}s; {lm.device}, {lm.dtype}"
    )
    print(
        f"torch {torch.__version__} ({torch.get_num_threads()} threads), {hardware}; {len(pairs)} MRPC test pairs; "
        f"dense {rate_dtype} matmul: {rate / 1e12:.3f} TFLOP/s; load average {os.getloadavg()[0]:.2f}"
    )
    header = ["template", "method", "batch", "pairs/s", "prompt tok/s", "x floor", "bound", "of bound"]
    if not cuda:
        header.insert(4, "pairs/s (CPU time)")
    table = [header]
    for name in [name.strip() for name in options.templates.split(",") if name.strip()]:
        scorer = TemplateScorer(lm, get_template(name))
        prompts = scorer.question_ids(pairs)
        shared = len(scorer.question_prefix.ids)
        suffixes = [len(ids) - shared if ids[:shared] == scorer.question_prefix.ids else len(ids) for ids in prompts]
        prompt_tokens = sum(len(ids) for ids in prompts)
        floor = sum(floor_flops(shape, suffix) for suffix in suffixes) / rate
        needed = sum(
            fast_flops(shape, len(ids), len(ids) - suffix) for ids, suffix in zip(prompts, suffixes, strict=True)
        )
        bound = needed / rate / floor
        print(
            f"  {name}: prompts {prompt_tokens / len(prompts):.0f} tokens on average, shared prefix {shared} "
            f"(computed once, not timed), own tokens {sum(suffixes) / len(suffixes):.0f}; floor "
            f"{floor / len(prompts) * 1e3:.2f} ms/pair",
            flush=True,
        )
        scorer.question_prefix.kv(lm)
        methods = [("prefix attention", True)] + ([("expanded cache", False)] if compare else [])
        for method, attend in methods:
            lm.derived["parapluie:prefix_attention"] = attend and install_prefix_attention(lm)
            time_run(lm, scorer, prompts[: min(16, len(prompts))], 16, options.device)  # warm-up
            for batch in [int(size) for size in options.batch_sizes.split(",")]:
                longest = max(suffixes)
                ran = fitting_batch_size(lm, batch, suffix=longest, prefix=shared)
                wall, cpu = time_run(lm, scorer, prompts, batch, options.device)
                ratio = wall / floor
                row = [
                    name,
                    method,
                    str(batch) if ran == batch else f"{batch} (ran {ran})",
                    f"{len(prompts) / wall:.1f}",
                    f"{prompt_tokens / wall:,.0f}",
                    f"{ratio:.2f}x",
                    f"{bound:.2f}x",
                    f"{100 * bound / ratio:.0f}%",
                ]
                if not cuda:
                    row.insert(4, f"{len(prompts) / cpu:.1f}")
                table.append(row)
                print("    " + "  ".join(row), flush=True)
        lm.derived.pop("parapluie:prefix_attention", None)
    print()
    widths = [max(len(line[column]) for line in table) for column in range(len(header))]
    for line in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip())
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
