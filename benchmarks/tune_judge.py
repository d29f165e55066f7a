"""Tune the embedded judge on MRPC train and measure what it gains against its targets, and what it costs.

    # Train and score (no Django, no database): on a GPU, or a small slice on a CPU.
    python benchmarks/tune_judge.py train --device cuda --epochs 2 --batch-size 16 --cross-fit 5 \
        --out tune_judge-gpu.json
    nice python benchmarks/tune_judge.py train --train-pairs 200 --test-pairs 200 --threads 2 \
        --out tune_judge-cpu.json
    # A judge that reads word order: probe pairs built from the training pairs' sources, 30 % of the mix.
    python benchmarks/tune_judge.py train --device cuda --epochs 2 --batch-size 16 --probe-share 0.3 \
        --out tune_judge-gpu-probes.json
    # Cross-fit MRPC test again against a judge a train run saved (its folder), without training it
    # again: from scratch, starting from that judge (tune_judge --start-from), or both.
    python benchmarks/tune_judge.py crossfit --judge data/benchmark-judges/smollm2-tuned-XXXXXXXX \
        --test-pairs 600 --threads 2 --cross-fit-start elsewhere --out tune_judge-crossfit.json
    # The baselines on the same evaluation pairs (BERTScore on all-MiniLM-L6-v2, METEOR), on a CPU
    # (benchmarks/tune_judge-baselines.json holds those of the full sets, so a GPU report needs no rerun):
    python benchmarks/tune_judge.py baselines --out benchmarks/tune_judge-baselines.json
    # The table the documentation shows (benchmarks/record.py keeps it):
    python benchmarks/record.py tune_judge -- python benchmarks/tune_judge.py report \
        tune_judge-gpu.json benchmarks/tune_judge-baselines.json
    # What a GPU machine without the gguf package needs (the package, the GGUF file, the corpora),
    # and there, the GGUF de-quantised once into a Hugging Face folder (loads in seconds):
    python benchmarks/tune_judge.py prepare --out gpu-kit
    PYTHONPATH=gpu-kit/site python benchmarks/tune_judge.py convert \
        --model-file gpu-kit/SmolLM2-135M-Instruct.Q4_1.gguf --out /tmp/smollm2
    python benchmarks/tune_judge.py train --device cuda --model-file /tmp/smollm2 --data gpu-kit/data \
        --epochs 2 --batch-size 16 --score-batch-size 64 --cross-fit 5 --judges-dir /tmp/judges \
        --out tune_judge-gpu.json

``train`` loads the base judge (``--model-file``: ``embedded``, a GGUF file, or a folder saved by
``save_pretrained``), tunes LoRA adapters on the DIRECT template exactly as ``manage.py
tune_judge`` does (:func:`scoring.metrics.judge_training.tune`, no cross-fitting: the test sets are
other pairs), prints the loss and validation AUC as it trains, then scores, with the base model
and with the tuned judge in the same run (the workers' fast path, :class:`ParaPluie`):

* MRPC test (``--test-pairs`` of its 1,725, spread over the file): ROC AUC and the accuracy at
  the natural threshold 0 (issue targets: AUC >= 0.80, accuracy >= 0.75);
* transfer, data it never saw: STS-H (PARAPHRASUS, the 338 adjudicated pairs) and the PIT-2015
  test set binarised as its organisers do (grades 4-5 paraphrase, 0-2 not, 3 left out): AUC
  (target >= 0.75);
* the training time, minutes per 1,000 training pairs, and pairs scored per second by the base
  model and by the tuned judge (its full adapter merged) in the same process.

Only the standard library, torch, transformers, peft (and gguf for a GGUF file) are needed:
``--data`` points at the corpora (default ``PARAEVAL_SHARED_DATA``, else ``../shared/data``).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shutil
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGETS = {"mrpc_auc": 0.80, "mrpc_accuracy": 0.75, "transfer_auc": 0.75}
SETS = ("mrpc", "sts_h", "pit2015")
SET_NAMES = {"mrpc": "MRPC test", "sts_h": "STS-H", "pit2015": "PIT-2015 test"}

Pair = tuple[str, str, bool]


def data_dir(given: str | None) -> Path:
    if given:
        return Path(given)
    configured = os.environ.get("PARAEVAL_SHARED_DATA", "").strip()
    return Path(configured) if configured else ROOT.parent / "shared" / "data"


def read_mrpc(path: Path) -> list[Pair]:
    with path.open(encoding="utf-8-sig") as handle:
        next(handle)
        rows = [line.rstrip("\n").split("\t") for line in handle if line.strip()]
    return [(row[3], row[4], row[0] == "1") for row in rows]


def read_sts_h(path: Path) -> list[Pair]:
    csv.field_size_limit(1 << 24)
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        # 1 paraphrase, 0 not, -100 not annotated (written 1.0, 0.0, -100.0).
        rows = [(row, float(row["Human Annotation - Consensus"])) for row in reader]
    return [(row["sentence1"], row["sentence2"], label == 1.0) for row, label in rows if label in (0.0, 1.0)]


def read_pit(folder: Path) -> list[Pair]:
    data = [line.rstrip("\n").split("\t") for line in (folder / "test.data").open(encoding="utf-8") if line.strip()]
    labels = [line.split("\t")[0] for line in (folder / "test.label").open(encoding="utf-8") if line.strip()]
    return [(row[2], row[3], label == "true") for row, label in zip(data, labels, strict=True) if label != "----"]


def spread(pairs: list[Pair], count: int) -> list[Pair]:
    """``count`` pairs spread evenly over the list (all of them for 0)."""
    if not count or count >= len(pairs):
        return pairs
    step = len(pairs) / count
    return [pairs[int(index * step)] for index in range(count)]


def evaluation_sets(folder: Path, test_pairs: int, transfer_pairs: int = 0) -> dict[str, list[Pair]]:
    return {
        "mrpc": spread(read_mrpc(folder / "mrpc" / "msr_paraphrase_test.txt"), test_pairs),
        "sts_h": spread(read_sts_h(folder / "paraphrasus" / "stsbenchmark-test-sts.tsv"), transfer_pairs),
        "pit2015": spread(read_pit(folder / "pit2015"), transfer_pairs),
    }


def figures(scores: list[float], pairs: list[Pair], threshold: float | None) -> dict[str, Any]:
    from scoring.metrics.judge_training import roc_auc

    labels = [1.0 if label else 0.0 for _, _, label in pairs]
    result: dict[str, Any] = {"pairs": len(pairs), "auc": roc_auc(scores, labels)}
    if threshold is not None:
        correct = sum(1 for score, label in zip(scores, labels, strict=True) if (score > threshold) == (label > 0.5))
        result["accuracy_at_0"] = correct / len(pairs)
        result["predicted_paraphrase_share"] = sum(1 for score in scores if score > threshold) / len(pairs)
    result["majority_share"] = max(sum(labels), len(labels) - sum(labels)) / len(labels)
    return result


def timed_scores(metric: Any, pairs: list[Pair], device: str) -> tuple[list[float], float]:
    texts = [(source, hypothesis) for source, hypothesis, _ in pairs]
    metric.score_batch(texts[: min(8, len(texts))])  # load, warm the caches
    synchronize(device)
    started = time.perf_counter()
    scores = metric.score_batch(texts)
    synchronize(device)
    return scores, time.perf_counter() - started


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def model_spec(given: str) -> str:
    if given == "embedded":
        return given
    path = Path(given).resolve()
    if not path.exists():
        raise SystemExit(f"--model-file {given}: no such file or folder")
    return str(path)


def train(args: argparse.Namespace) -> int:
    import torch

    from scoring.metrics.judge_training import tune
    from scoring.metrics.judge_training_options import LabelledPair, TuningOptions
    from scoring.metrics.lm import load_fresh
    from scoring.metrics.parapluie import ParaPluie
    from scoring.metrics.templates import get_template

    if args.threads:
        torch.set_num_threads(args.threads)
    folder = data_dir(args.data)
    spec = model_spec(args.model_file)
    train_all = read_mrpc(folder / "mrpc" / "msr_paraphrase_train.txt")
    chosen = spread(train_all, args.train_pairs)
    pairs = [LabelledPair(source, hypothesis, label, index) for index, (source, hypothesis, label) in enumerate(chosen)]
    sets = evaluation_sets(folder, args.test_pairs, args.transfer_pairs)
    options = TuningOptions(
        template="direct",
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        eval_every=args.eval_every,
        patience=args.patience,
        max_tokens=args.max_tokens,
        seed=args.seed,
        probe_share=args.probe_share,
    )
    probes = []
    if args.probe_share:
        from scoring.metrics.judge_training import distinct_pairs
        from scoring.probes.training import training_probes

        kept, _ = distinct_pairs(pairs, options.max_pairs, options.seed)
        probes = training_probes(kept, args.probe_share, args.seed)
        print(f"# probes in the mix: {len(probes)} (share {args.probe_share}), built from the training pairs' sources")
    device_name = torch.cuda.get_device_name(0) if args.device.startswith("cuda") else platform.processor() or "cpu"
    print(
        f"# tune_judge: {spec} on {args.device} ({device_name}), {args.dtype}, torch threads {torch.get_num_threads()}"
    )
    print(f"# training: {len(pairs)} MRPC train pairs, template direct, {options.identity()}")
    template = get_template("direct", [])
    loading = time.perf_counter()
    lm = load_fresh(spec, args.device, args.dtype)
    print(f"# base model loaded in {time.perf_counter() - loading:.1f} s")
    # Process CPU time besides the wall clock: on a CPU shared with other jobs the wall clock
    # says how busy the machine was; CPU seconds / threads is what a quiet machine would take.
    cpu_started = time.process_time()
    result = tune(
        lm,
        pairs,
        options,
        template,
        Path(args.judges_dir),
        base_spec=spec,
        base_name="smollm2" if spec == "embedded" else Path(spec).stem.lower()[:24],
        trained_on={"corpus": "MRPC train", "pairs": len(pairs)},
        progress=lambda state: print(state.line(), flush=True),
        probes=probes,
    )
    cpu_seconds = time.process_time() - cpu_started
    del lm
    full = result.adapters[0]
    print(
        f"# trained {result.name} in {full.seconds:.1f} s: {full.examples} training examples, "
        f"{result.minutes_per_1000:.2f} min per 1,000 training pairs (validation passes included); "
        f"{result.too_long} pairs longer than {options.max_tokens} tokens left out"
    )
    common = {"device": args.device, "dtype": args.dtype, "batch_size": args.score_batch_size, "template_dirs": []}
    base = ParaPluie("direct", model=spec, allow_download=False, **common)
    tuned = ParaPluie("direct", model=str(result.folder), allow_download=False, **common)
    results: dict[str, Any] = {
        "model": spec,
        "label": result.label,
        "device": args.device,
        "device_name": device_name,
        "dtype": args.dtype,
        "threads": torch.get_num_threads(),
        "batch_size": args.score_batch_size,
        "training": {
            "pairs": len(pairs),
            "examples": full.examples,
            "seconds": round(full.seconds, 1),
            "minutes_per_1000_pairs": round(result.minutes_per_1000, 3),
            "cpu_seconds": round(cpu_seconds, 1),
            "cpu_minutes_per_1000_pairs_per_thread": round(
                cpu_seconds / torch.get_num_threads() / 60 / max(full.examples, 1) * 1000, 3
            ),
            "best_validation_auc": full.best_validation_auc,
            "base_validation_auc": full.base_validation_auc,
            "best_step": full.best_step,
            "steps": full.steps,
            "stopped_early": full.stopped_early,
            "options": options.identity(),
        },
        "sets": {},
        "speed": {},
    }
    for name, evaluation in sets.items():
        entry: dict[str, Any] = {}
        for which, metric in (("base", base), ("tuned", tuned)):
            scores, seconds = timed_scores(metric, evaluation, args.device)
            entry[which] = figures(scores, evaluation, 0.0)
            entry[which]["pairs_per_second"] = round(len(evaluation) / seconds, 2)
        results["sets"][name] = entry
        print(
            f"# {SET_NAMES[name]} ({len(evaluation)} pairs): "
            f"AUC {_number(entry['base']['auc'])} -> {_number(entry['tuned']['auc'])}, "
            f"accuracy at 0 {_number(entry['base']['accuracy_at_0'])} -> {_number(entry['tuned']['accuracy_at_0'])}",
            flush=True,
        )
    base_rate = sum(results["sets"][name]["base"]["pairs_per_second"] for name in SETS) / len(SETS)
    tuned_rate = sum(results["sets"][name]["tuned"]["pairs_per_second"] for name in SETS) / len(SETS)
    results["speed"] = {"base_pairs_per_second": base_rate, "tuned_pairs_per_second": tuned_rate}
    results["adapter_folder"] = str(result.folder)
    if args.cross_fit:
        results.update(cross_fits(args, spec, options, template, sets["mrpc"], tuned, result))
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"# wrote {args.out} (adapter in {result.folder})")
    report_tables(results, None)
    return 0


def crossfit_only(args: argparse.Namespace) -> int:
    """Cross-fit MRPC test against a judge an earlier ``train`` run saved (``--judge``), without
    training that judge again: on 2 CPU cores its training is a third of the whole run."""
    from types import SimpleNamespace

    import torch

    from scoring.metrics.judge_training_options import TuningOptions
    from scoring.metrics.parapluie import ParaPluie
    from scoring.metrics.templates import get_template

    if args.threads:
        torch.set_num_threads(args.threads)
    judge = Path(args.judge)
    described = json.loads((judge / "judge.json").read_text(encoding="utf-8"))
    options = TuningOptions.from_identity(described["settings"])
    spec = described["base"]["spec"]
    evaluation = evaluation_sets(data_dir(args.data), args.test_pairs)["mrpc"]
    common = {"device": args.device, "dtype": args.dtype, "batch_size": args.score_batch_size, "template_dirs": []}
    tuned = ParaPluie(options.template, model=str(judge), allow_download=False, **common)
    start = SimpleNamespace(name=described["name"], folder=judge)
    print(f"# cross-fit against {described['name']} ({judge}), torch threads {torch.get_num_threads()}")
    results: dict[str, Any] = {
        "judge": described["name"],
        "judge_trained_on": described.get("trained_on", {}),
        "device": args.device,
        "threads": torch.get_num_threads(),
    }
    template = get_template(options.template, [])
    results.update(cross_fits(args, spec, options, template, evaluation, tuned, start))
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"# wrote {args.out}")
    report_cross_fits(results)
    return 0


def bootstrap_auc(scores: list[float], labels: list[float], resamples: int, seed: int) -> tuple[float, float]:
    """95 % percentile interval of the AUC over pairs resampled with replacement (seeded)."""
    import random

    from scoring.metrics.judge_training import roc_auc

    rng = random.Random(seed)
    values = []
    for _ in range(resamples):
        picks = [rng.randrange(len(scores)) for _ in scores]
        value = roc_auc([scores[i] for i in picks], [labels[i] for i in picks])
        if value is not None:
            values.append(value)
    values.sort()
    return values[int(0.025 * len(values))], values[int(0.975 * len(values)) - 1]


def cross_fits(
    args: argparse.Namespace, spec: str, options: Any, template: Any, pairs: list[Pair], judge: Any, start: Any
) -> dict[str, Any]:
    """The cross-fits ``--cross-fit-start`` asks for, keyed as the results store them: from
    scratch (``cross_fit``) and starting from the judge tuned elsewhere (``cross_fit_started``)."""
    crossed = {}
    if args.cross_fit_start in ("scratch", "both"):
        crossed["cross_fit"] = cross_fit(args, spec, options, template, pairs, judge)
    if args.cross_fit_start in ("elsewhere", "both"):
        crossed["cross_fit_started"] = cross_fit(args, spec, options, template, pairs, judge, start)
    return crossed


def cross_fit(
    args: argparse.Namespace,
    spec: str,
    options: Any,
    template: Any,
    pairs: list[Pair],
    trained_elsewhere: Any,
    start: Any = None,
) -> dict[str, Any]:
    """The campaign case: tune on MRPC test's own labels with k folds and score it cross-fitted;
    its AUC should fall in the bootstrap interval of the judge tuned on MRPC train, scored there.
    ``start`` (that judge's tuning result): every adapter starts from its full adapter
    (``tune_judge --start-from``), from scratch otherwise."""
    from dataclasses import replace

    from scoring.metrics.judge_training import tune
    from scoring.metrics.judge_training_options import LabelledPair
    from scoring.metrics.lm import load_fresh
    from scoring.metrics.parapluie import ParaPluie

    labelled = [
        LabelledPair(source, hypothesis, label, index) for index, (source, hypothesis, label) in enumerate(pairs)
    ]
    origin = f"starting from {start.name}" if start is not None else "from scratch"
    print(
        f"# cross-fitting: tuning on the {len(pairs)} MRPC test pairs' own labels, {args.cross_fit} folds, {origin}",
        flush=True,
    )
    result = tune(
        load_fresh(spec, args.device, args.dtype),
        labelled,
        replace(options, folds=args.cross_fit, start_from=start.name if start is not None else ""),
        template,
        Path(args.judges_dir),
        base_spec=spec,
        base_name="crossfit",
        progress=lambda state: print(state.line(), flush=True) if state.event != "eval" else None,
        start=start.folder if start is not None else None,
    )
    common = {"device": args.device, "dtype": args.dtype, "batch_size": args.score_batch_size, "template_dirs": []}
    metric = ParaPluie("direct", model=str(result.folder), allow_download=False, **common)
    texts = [(source, hypothesis) for source, hypothesis, _ in pairs]
    labels = [1.0 if label else 0.0 for _, _, label in pairs]
    crossfitted = figures(metric.score_batch(texts), pairs, 0.0)
    elsewhere_scores = trained_elsewhere.score_batch(texts)
    low, high = bootstrap_auc(elsewhere_scores, labels, 1000, args.seed)
    inside = crossfitted["auc"] is not None and low <= crossfitted["auc"] <= high
    elsewhere_auc = figures(elsewhere_scores, pairs, 0.0)["auc"]
    print(
        f"# cross-fitted AUC on MRPC test {_number(crossfitted['auc'])}; the MRPC-train judge there "
        f"{_number(elsewhere_auc)}, 95 % bootstrap interval [{low:.3f}, {high:.3f}]: "
        f"{'inside' if inside else 'OUTSIDE'}",
        flush=True,
    )
    return {
        "folds": args.cross_fit,
        "started_from": start.name if start is not None else None,
        "training_pairs": len(pairs),
        "auc": crossfitted["auc"],
        "accuracy_at_0": crossfitted["accuracy_at_0"],
        "elsewhere_auc": elsewhere_auc,
        "elsewhere_interval": [low, high],
        "inside": inside,
        "training_minutes_per_1000_pairs": round(result.minutes_per_1000, 3),
    }


def baselines(args: argparse.Namespace) -> int:
    from scoring.metrics.bertscore import BertScore
    from scoring.metrics.judge_training import roc_auc
    from scoring.metrics.meteor import Meteor

    sets = evaluation_sets(data_dir(args.data), args.test_pairs, args.transfer_pairs)
    nltk_data = os.environ.get("NLTK_DATA") or str(ROOT / "data" / "nltk_data")
    metrics = {"bertscore": BertScore(model="embedded", num_layers=6), "meteor": Meteor(nltk_data=nltk_data)}
    results: dict[str, Any] = {"sets": {}}
    for name, evaluation in sets.items():
        texts = [(source, hypothesis) for source, hypothesis, _ in evaluation]
        labels = [1.0 if label else 0.0 for _, _, label in evaluation]
        results["sets"][name] = {}
        for metric_name, metric in metrics.items():
            scores = metric.score_batch(texts)
            results["sets"][name][metric_name] = {"pairs": len(evaluation), "auc": roc_auc(scores, labels)}
            print(f"# {SET_NAMES[name]}: {metric_name} AUC {results['sets'][name][metric_name]['auc']:.3f}")
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"# wrote {args.out}")
    return 0


def _number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def report_tables(results: dict[str, Any], extra: dict[str, Any] | None) -> None:
    training = results["training"]
    print()
    print(
        f"Tuned judge {results['label']} (LoRA on {results['model']}), {results['device']} ({results['device_name']})"
    )
    print(
        f"Training: {training['pairs']} MRPC train pairs, {training['examples']} examples in {training['seconds']} s = "
        f"{training['minutes_per_1000_pairs']:.2f} min per 1,000 training pairs (wall clock; process CPU time / "
        f"{results['threads']} threads: {training.get('cpu_minutes_per_1000_pairs_per_thread', 0):.2f} min); "
        "best validation AUC "
        f"{_number(training['best_validation_auc'])} (untuned {_number(training['base_validation_auc'])}) at step "
        f"{training['best_step']} of {training['steps']}{', stopped early' if training['stopped_early'] else ''}"
    )
    print()
    header = f"{'set':<15}{'pairs':>6}  {'metric':<24}{'AUC':>7}{'acc@0':>8}  target"
    print(header)
    print("-" * (len(header) + 20))
    for name in SETS:
        entry = results["sets"][name]
        target = (
            f"AUC>={TARGETS['mrpc_auc']}, acc>={TARGETS['mrpc_accuracy']}"
            if name == "mrpc"
            else f"AUC>={TARGETS['transfer_auc']}"
        )
        rows = [("ParaPLUIE DIRECT base", entry["base"]), ("ParaPLUIE DIRECT tuned", entry["tuned"])]
        if extra is not None:
            rows += [(key, value) for key, value in extra["sets"].get(name, {}).items()]
        for index, (label, figures_) in enumerate(rows):
            print(
                f"{SET_NAMES[name] if index == 0 else '':<15}{figures_['pairs'] if index == 0 else '':>6}  "
                f"{label:<24}{_number(figures_.get('auc')):>7}{_number(figures_.get('accuracy_at_0')):>8}"
                f"  {target if index == 1 else '':<24}".rstrip()
            )
        print(f"{'':<21}majority class share {entry['base']['majority_share']:.3f}")
    report_cross_fits(results)
    speed = results["speed"]
    print()
    print(
        f"Scoring speed (fast path, batch {results.get('batch_size', '')}): base {speed['base_pairs_per_second']:.1f} "
        f"pairs/s, tuned (full adapter merged) {speed['tuned_pairs_per_second']:.1f} pairs/s = "
        f"{speed['tuned_pairs_per_second'] / speed['base_pairs_per_second']:.2f} x the base"
    )


def report_cross_fits(results: dict[str, Any]) -> None:
    """The cross-fitted AUCs of a run against the interval of the judge tuned on MRPC train."""
    for key, origin in (("cross_fit", "from scratch"), ("cross_fit_started", "starting from the MRPC-train judge")):
        crossed = results.get(key)
        if not crossed:
            continue
        low, high = crossed["elsewhere_interval"]
        judge_auc = f" {_number(crossed['elsewhere_auc'])}," if crossed.get("elsewhere_auc") is not None else ""
        print()
        print(
            f"Cross-fitted on MRPC test's own labels ({crossed['folds']} folds, {origin}): "
            f"AUC {_number(crossed['auc'])}, accuracy at 0 {crossed['accuracy_at_0']:.3f}; the judge tuned on MRPC "
            f"train:{judge_auc} 95 % bootstrap interval of its AUC there [{low:.3f}, {high:.3f}] -> "
            f"{'inside (target met)' if crossed['inside'] else 'outside (target missed)'}"
        )


def report(args: argparse.Namespace) -> int:
    results = json.loads(Path(args.results).read_text(encoding="utf-8"))
    if "training" not in results:  # a crossfit run: the judge was tuned by an earlier train run
        trained_on = results.get("judge_trained_on", {})
        print(
            f"Cross-fitting against {results['judge']} (tuned by an earlier train run on "
            f"{trained_on.get('pairs', '?')} {trained_on.get('corpus', '')} pairs), {results['device']}, "
            f"torch threads {results['threads']}"
        )
        report_cross_fits(results)
        return 0
    extra = json.loads(Path(args.baselines).read_text(encoding="utf-8")) if args.baselines else None
    report_tables(results, extra)
    return 0


def prepare(args: argparse.Namespace) -> int:
    """Copy what a GPU machine without gguf (or without the corpora) needs into one folder."""
    import importlib.util

    out = Path(args.out)
    (out / "site").mkdir(parents=True, exist_ok=True)
    spec = importlib.util.find_spec("gguf")
    if spec is None or spec.origin is None:
        raise SystemExit("the gguf package is not installed here")
    shutil.copytree(Path(spec.origin).parent, out / "site" / "gguf", dirs_exist_ok=True)
    from scoring.metrics.lm import EMBEDDED_FILE, describe_model

    shutil.copy2(Path(describe_model("embedded").location) / EMBEDDED_FILE, out / EMBEDDED_FILE)
    source = data_dir(args.data)
    for part in ("mrpc", "paraphrasus", "pit2015"):
        shutil.copytree(source / part, out / "data" / part, dirs_exist_ok=True)
    print(f"# {out}: site/gguf (the gguf package), {EMBEDDED_FILE}, data/ (MRPC, PARAPHRASUS, PIT-2015)")
    return 0


def convert(args: argparse.Namespace) -> int:
    """Save the model a GGUF file holds as a Hugging Face folder (float32 safetensors, tokenizer and
    chat template): a GPU run loads it in seconds instead of de-quantising the GGUF at each load."""
    from scoring.metrics.lm import load_fresh

    lm = load_fresh(model_spec(args.model_file))
    # Loaded from a GGUF, the model and its config remember it; the weights are de-quantised
    # float32 already: the saved folder is plain weights.
    lm.model.hf_quantizer = None
    for name in ("quantization_config", "_pre_quantization_dtype"):
        if hasattr(lm.model.config, name):
            delattr(lm.model.config, name)
    lm.model.save_pretrained(args.out)
    lm.tokenizer.save_pretrained(args.out)
    print(f"# {args.out}: {lm.label} as a Hugging Face folder")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    modes = parser.add_subparsers(dest="mode", required=True)
    run = modes.add_parser("train", help="tune on MRPC train, score base and tuned (no Django)")
    run.add_argument("--model-file", default="embedded", help="embedded, a GGUF file, or a save_pretrained folder")
    run.add_argument("--device", default="cpu")
    run.add_argument("--dtype", default="float32", choices=("float32", "bfloat16", "float16"))
    run.add_argument("--data", help="folder holding mrpc/, paraphrasus/, pit2015/")
    run.add_argument("--train-pairs", type=int, default=0, help="MRPC train pairs (0: all 4,076), spread over the file")
    run.add_argument("--test-pairs", type=int, default=0, help="MRPC test pairs (0: all 1,725), spread over the file")
    run.add_argument("--transfer-pairs", type=int, default=0, help="STS-H / PIT-2015 pairs each (0: all)")
    run.add_argument("--epochs", type=int, default=1)
    run.add_argument("--batch-size", type=int, default=8)
    run.add_argument("--score-batch-size", type=int, default=16)
    run.add_argument("--learning-rate", type=float, default=2e-4)
    run.add_argument("--eval-every", type=int, default=50)
    run.add_argument("--patience", type=int, default=3)
    run.add_argument("--max-tokens", type=int, default=192)
    run.add_argument("--seed", type=int, default=20250101)
    run.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: its default)")
    run.add_argument(
        "--probe-share", type=float, default=0.0, help="share of probe pairs in the mix (tune_judge --probe-share)"
    )
    run.add_argument("--cross-fit", type=int, default=0, help="also tune on MRPC test with k folds (0: no)")
    run.add_argument(
        "--cross-fit-start",
        choices=("scratch", "elsewhere", "both"),
        default="both",
        help="the cross-fitted adapters start from scratch, from the MRPC-train judge (--start-from), or both runs",
    )
    run.add_argument("--judges-dir", default=str(ROOT / "data" / "benchmark-judges"), help="where the adapter goes")
    run.add_argument("--out", default="tune_judge.json")
    base = modes.add_parser("baselines", help="BERTScore and METEOR on the same evaluation pairs (CPU)")
    base.add_argument("--data")
    base.add_argument("--test-pairs", type=int, default=0)
    base.add_argument("--transfer-pairs", type=int, default=0)
    base.add_argument("--out", default="tune_judge-baselines.json")
    table = modes.add_parser("report", help="print the table of a train run (and the baselines)")
    table.add_argument("results")
    table.add_argument("baselines", nargs="?")
    again = modes.add_parser("crossfit", help="cross-fit MRPC test against a judge a train run saved")
    again.add_argument("--judge", required=True, help="the tuned judge's folder (printed by train)")
    again.add_argument("--device", default="cpu")
    again.add_argument("--dtype", default="float32", choices=("float32", "bfloat16", "float16"))
    again.add_argument("--data")
    again.add_argument("--test-pairs", type=int, default=0, help="MRPC test pairs (0: all 1,725), spread over the file")
    again.add_argument("--score-batch-size", type=int, default=16)
    again.add_argument("--seed", type=int, default=20250101)
    again.add_argument("--threads", type=int, default=0)
    again.add_argument("--cross-fit", type=int, default=5)
    again.add_argument("--cross-fit-start", choices=("scratch", "elsewhere", "both"), default="elsewhere")
    again.add_argument("--judges-dir", default=str(ROOT / "data" / "benchmark-judges"))
    again.add_argument("--out", default="tune_judge-crossfit.json")
    kit = modes.add_parser("prepare", help="copy gguf, the GGUF file and the corpora for a GPU machine")
    kit.add_argument("--out", required=True)
    kit.add_argument("--data")
    folder = modes.add_parser("convert", help="save a GGUF model as a Hugging Face folder (fast to load)")
    folder.add_argument("--model-file", required=True)
    folder.add_argument("--out", required=True)
    args = parser.parse_args()
    modes_run = {
        "train": train,
        "crossfit": crossfit_only,
        "baselines": baselines,
        "report": report,
        "prepare": prepare,
        "convert": convert,
    }
    return modes_run[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
