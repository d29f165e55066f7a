"""A served judge against the in-process judge on MRPC test pairs, pair by pair, and against gold.

    .venv/bin/python benchmarks/served_parity.py [--pairs 300] [--template direct]

Starts llama-cpp-python's server (``requirements-served.txt``) twice on loopback ports: once with
the embedded SmolLM2 Q4_1 GGUF (what a user of that file sees), once with a float32 GGUF written
from the same file (``tests.served_support.write_float32_gguf``: exactly the float32 weights the
in-process judge de-quantises and computes with). Scores the first ``--pairs`` pairs of MRPC's
test file (``../shared/data/mrpc/``) with ParaPLUIE in the in-process fast path and with each
served judge in top-k mode, then prints, for each served file: the median and largest
|served - in-process| log-ratio, their Pearson correlation, the pairs that failed (an answer
outside the server's top-k: never a silent 0) and each judge's ROC AUC against MRPC's gold label
(scikit-learn's ``roc_auc_score``).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TQDM_DISABLE", "1")  # no de-quantisation progress bar in the recorded output

from scoring.metrics.judges import parse_models  # noqa: E402 - after the path above
from scoring.metrics.parapluie import ParaPluie  # noqa: E402
from scoring.metrics.served import ServedParaPluie  # noqa: E402

MRPC_TEST = Path(os.environ.get("PARAEVAL_SHARED_DATA") or ROOT.parent / "shared" / "data") / "mrpc"


def mrpc_pairs(count: int) -> tuple[list[tuple[str, str]], list[int]]:
    """The first ``count`` pairs of MRPC's test file (sentence 1 = source) and their gold labels."""
    with (MRPC_TEST / "msr_paraphrase_test.txt").open(encoding="utf-8-sig") as handle:
        next(handle)
        rows = [line.rstrip("\n").split("\t") for line in handle]
    rows = rows[:count]
    return [(row[3], row[4]) for row in rows], [int(row[0]) for row in rows]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--template", default="direct")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads of the server and of torch (default 2)")
    options = parser.parse_args()
    import numpy as np
    import torch
    from sklearn.metrics import roc_auc_score

    from tests.served_support import LlamaServer, embedded_model, write_float32_gguf

    torch.set_num_threads(options.threads)
    pairs, gold = mrpc_pairs(options.pairs)
    local = ParaPluie(template=options.template, model="embedded", batch_size=8)
    reference = np.array(local.score_batch(pairs), dtype=float)
    print(
        f"ParaPLUIE {options.template} on SmolLM2-135M-Instruct, the first {len(pairs)} pairs of MRPC test; "
        f"{platform.machine()}, {os.cpu_count()} cores"
    )
    auc_reference = roc_auc_score(gold, reference)
    print(f"in-process judge (transformers, the Q4_1 file de-quantised to float32): AUC {auc_reference:.3f}")
    print()
    header = (
        f"{'served file':<38} {'median |Δ|':>10} {'max |Δ|':>8} {'Pearson':>8} {'failed':>6} {'AUC':>6} {'ΔAUC':>7}"
    )
    print(header)
    with tempfile.TemporaryDirectory(prefix="served-parity-") as scratch:
        folder = Path(scratch)
        files = [
            ("Q4_1 (llama.cpp's quantised kernels)", embedded_model()),
            ("float32 (the in-process weights)", write_float32_gguf(folder / "smollm2-f32.gguf")),
        ]
        for name, model in files:
            server = LlamaServer(model, folder).start()
            try:
                judge = parse_models(f"served[server={server.url},chat_template=embedded,mode=top-k,concurrency=1]")[0]
                outcomes = ServedParaPluie(options.template, judge).score_many(pairs)
            finally:
                server.stop()
            ok = [index for index, outcome in enumerate(outcomes) if outcome.ok]
            served = np.array([outcomes[index].value for index in ok], dtype=float)
            deltas = np.abs(served - reference[ok])
            pearson = float(np.corrcoef(served, reference[ok])[0, 1])
            auc = roc_auc_score([gold[index] for index in ok], served)
            auc_local = roc_auc_score([gold[index] for index in ok], reference[ok])
            print(
                f"{name:<38} {float(np.median(deltas)):>10.4f} {float(deltas.max()):>8.4f} {pearson:>8.4f} "
                f"{len(pairs) - len(ok):>6} {auc:>6.3f} {auc - auc_local:>+7.3f}"
            )
    print()
    print(
        "ΔAUC: the served judge's AUC minus the in-process judge's on the same pairs; median over "
        f"{len(pairs)} pairs of |Δ| of the log-ratio log p(yes) - log p(no)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
