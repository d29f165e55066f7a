"""Tune a judge model for ParaPLUIE: LoRA adapters trained so that log p(yes) - log p(no) separates paraphrases.

The paper's ethics statement (section 7) asks for small models adapted to the task rather than
ever larger ones; ParaPLUIE itself learns nothing. This module does the adaptation:

* the base model stays frozen; PEFT's LoRA (rank ``rank``, scale ``alpha / rank``) is added to
  the attention and MLP projections (``q k v o gate up down``: 3.5 % of SmolLM2-135M's weights);
* each labelled pair is rendered with the ParaPLUIE template through the model's chat template,
  exactly as :mod:`scoring.metrics.parapluie_engine` renders it for scoring, and the model's
  score is read where the fast path reads it: the logit of "Yes" minus the logit of "No" at the
  prompt's last position (= log p(yes) - log p(no));
* the loss is the logistic loss of that score against the label (1 paraphrase, 0 not): the
  score is trained to be the log-odds of "paraphrase", so its natural threshold stays 0;
* a seeded validation split (stratified by label) is scored before training (the base model's
  figures, for comparison), every ``eval_every`` steps and at each epoch's end; the adapter
  with the best validation AUC (ties: lower validation loss) is kept, and training stops after
  ``patience`` evaluations without improvement;
* with ``folds`` = k > 1, k more adapters are trained for cross-fitting: the pairs are split in
  k folds (seeded, stratified) and adapter i learns from every fold but i, so each training
  pair can be scored by an adapter that never saw it (:mod:`scoring.metrics.tuned` routes);
* with probe pairs in the mix (``probes``: swaps and changes of a pair's source sentence as
  non-paraphrases, its meaning-keeping rewrites as paraphrases), the folds are dealt by source
  sentence: the pairs sharing a source sentence and every probe built from it fall in one fold,
  so no adapter is trained on a probe of a sentence that it scores (:func:`training_plan`).

A prompt longer than ``max_tokens`` is left out of training (counted, never truncated: cutting
a sentence would train on a pair that is not the one labelled). The bundle is written to a
hidden folder and renamed into place once complete, so a worker never sees half an adapter.

No Django, no database: the caller passes the pairs and the options (the project's service is
:mod:`scoring.tuning.service`; ``benchmarks/tune_judge.py`` calls this on a GPU without Django).
torch and peft are imported inside the functions.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import shutil
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from scoring.metrics import tuned
from scoring.metrics.judge_training_options import (
    LabelledPair,
    Progress,
    ProgressCallback,
    TrainingProbe,
    TuningError,
    TuningOptions,
)
from scoring.metrics.judges import safe_name
from scoring.metrics.lm import CausalLM, describe_model
from scoring.metrics.parapluie_engine import encode, find_answer_tokens, render
from scoring.metrics.templates import PromptTemplate, TemplateKind

__all__ = ["LabelledPair", "Progress", "TrainingProbe", "TuningError", "TuningOptions", "tune"]


@dataclass
class AdapterResult:
    """How one adapter's training went."""

    adapter: str
    train_pairs: int
    validation_pairs: int
    steps: int
    examples: int  # training examples processed (pairs x epochs run)
    seconds: float
    best_validation_auc: float | None
    best_validation_loss: float | None
    best_step: int
    stopped_early: bool
    history: list[dict[str, Any]] = field(default_factory=list)
    base_validation_auc: float | None = None  # before tuning (step 0)
    base_validation_loss: float | None = None


@dataclass
class TuneResult:
    """A finished tuning: where the bundle is, what it holds and what it cost."""

    folder: Path
    name: str
    label: str
    pairs: int  # distinct pairs used
    too_long: int  # left out: prompt longer than max_tokens
    duplicates: int  # left out: the same texts given twice
    adapters: list[AdapterResult]
    seconds: float
    folds: dict[str, int]  # the labelled pairs' folds (the probes' are in probe_folds)
    probe_folds: dict[str, int] = field(default_factory=dict)
    probes: int = 0  # probe pairs trained on
    probes_too_long: int = 0

    @property
    def training_examples(self) -> int:
        return sum(adapter.examples for adapter in self.adapters)

    @property
    def training_seconds(self) -> float:
        return sum(adapter.seconds for adapter in self.adapters)

    @property
    def minutes_per_1000(self) -> float:
        """Minutes of training (validation passes included) per 1,000 training examples."""
        return self.training_seconds / 60 / max(self.training_examples, 1) * 1000

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "pairs": self.pairs,
            "too_long": self.too_long,
            "duplicates": self.duplicates,
            **({"probes": self.probes, "probes_too_long": self.probes_too_long} if self.probes else {}),
            "seconds": round(self.seconds, 1),
            "minutes_per_1000_pairs": round(self.minutes_per_1000, 2),
            "adapters": [asdict(adapter) for adapter in self.adapters],
        }


@dataclass(frozen=True)
class _Example:
    ids: list[int]
    label: float


# --- Small pieces, tested on their own --------------------------------------------------------


def roc_auc(scores: Sequence[float], labels: Sequence[float]) -> float | None:
    """Area under the ROC curve (Mann-Whitney, ties counted half); None without both classes."""
    positives = sum(1 for label in labels if label > 0.5)
    negatives = len(labels) - positives
    if positives == 0 or negatives == 0:
        return None
    order = sorted(range(len(scores)), key=lambda index: scores[index])
    ranks = [0.0] * len(scores)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and scores[order[end + 1]] == scores[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2 + 1
        start = end + 1
    rank_sum = sum(rank for rank, label in zip(ranks, labels, strict=True) if label > 0.5)
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


def stratified_split(items: Sequence[LabelledPair], share: float, seed: int) -> tuple[list[int], list[int]]:
    """Indexes of (training, validation): ``share`` of each class to validation (at least one
    of each class that has two or more pairs), drawn with ``seed``."""
    rng = random.Random(seed)
    train: list[int] = []
    validation: list[int] = []
    for label in (True, False):
        indexes = [index for index, item in enumerate(items) if item.label is label]
        rng.shuffle(indexes)
        take = min(len(indexes) - 1, max(1, round(share * len(indexes)))) if len(indexes) >= 2 else 0
        validation += indexes[:take]
        train += indexes[take:]
    return sorted(train), sorted(validation)


def assign_folds(items: Sequence[LabelledPair], folds: int, seed: int) -> dict[str, int]:
    """Pair key -> fold in 0..folds-1: seeded, each class dealt round-robin so folds stay balanced."""
    rng = random.Random(seed)
    assignment: dict[str, int] = {}
    start = 0
    for label in (True, False):
        keys = [item.key for item in items if item.label is label]
        rng.shuffle(keys)
        for position, key in enumerate(keys):
            assignment[key] = (start + position) % folds
        start = (start + len(keys)) % folds
    return assignment


def source_sentence(text: str) -> str:
    """The source sentence a fold is dealt by: its words, whatever the spacing."""
    return " ".join(text.split())


def assign_source_folds(items: Sequence[LabelledPair], folds: int, seed: int) -> dict[str, int]:
    """Pair key -> fold, the pairs sharing a source sentence in one fold: the sentences in a seeded
    order, each to the fold with the fewest pairs of its first pair's label (then the fewest pairs)."""
    sentences: dict[str, list[LabelledPair]] = {}
    for item in items:
        sentences.setdefault(source_sentence(item.source), []).append(item)
    order = list(sentences)
    random.Random(seed).shuffle(order)
    by_label = [[0] * folds, [0] * folds]  # not, paraphrase
    total = [0] * folds
    assignment: dict[str, int] = {}
    for sentence in order:
        members = sentences[sentence]
        counts = by_label[int(members[0].label)]
        fold = min(range(folds), key=lambda index: (counts[index], total[index], index))
        for item in members:
            assignment[item.key] = fold
            by_label[int(item.label)][fold] += 1
            total[fold] += 1
    return assignment


@dataclass(frozen=True)
class TrainingPlan:
    """What each adapter learns from: the full one from everything, fold i's from all but fold i."""

    folds: dict[str, int]  # labelled pair key -> fold
    probe_folds: dict[str, int]  # probe pair key -> the fold of its source sentence
    adapters: list[tuple[str, list[LabelledPair]]]


def training_plan(kept: Sequence[LabelledPair], probes: Sequence[TrainingProbe], folds: int, seed: int) -> TrainingPlan:
    """The folds and each adapter's training pairs (``probes`` already free of duplicates).

    Without probes the folds are :func:`assign_folds`' (by pair, as before probes existed); with
    them, :func:`assign_source_folds`' (by source sentence), and each probe goes to the fold of its
    source sentence, or, when no kept pair has that sentence (nothing of it is scored), to a fold
    drawn from a stable hash of it."""
    if not folds:
        return TrainingPlan({}, {}, [(tuned.FULL, [*kept, *(probe.pair for probe in probes)])])
    assignment = assign_source_folds(kept, folds, seed) if probes else assign_folds(kept, folds, seed)
    by_sentence = {source_sentence(item.source): assignment[item.key] for item in kept}
    probe_folds: dict[str, int] = {}
    for probe in probes:
        sentence = source_sentence(probe.pair.source)
        fold = by_sentence.get(sentence)
        if fold is None:
            digest = hashlib.sha256(sentence.encode()).digest()
            fold = int.from_bytes(digest[:4], "big") % folds
        probe_folds[probe.pair.key] = fold
    everything = [*kept, *(probe.pair for probe in probes)]
    every_fold = {**assignment, **probe_folds}
    adapters: list[tuple[str, list[LabelledPair]]] = [(tuned.FULL, everything)]
    for fold in range(folds):
        adapters.append((tuned.fold_adapter(fold), [item for item in everything if every_fold[item.key] != fold]))
    return TrainingPlan(assignment, probe_folds, adapters)


def distinct_probes(probes: Sequence[TrainingProbe], taken: set[str]) -> tuple[list[TrainingProbe], int]:
    """The probes whose texts are neither a labelled pair's nor an earlier probe's; and how many were not."""
    seen = set(taken)
    kept = []
    for probe in probes:
        if probe.pair.key not in seen:
            seen.add(probe.pair.key)
            kept.append(probe)
    return kept, len(probes) - len(kept)


def distinct_pairs(pairs: Sequence[LabelledPair], max_pairs: int, seed: int) -> tuple[list[LabelledPair], int]:
    """The pairs with distinct texts (the first of each kept), at most ``max_pairs`` of them
    (a seeded sample, in their order); also how many duplicates were dropped."""
    seen: dict[str, LabelledPair] = {}
    for pair in pairs:
        seen.setdefault(pair.key, pair)
    kept = list(seen.values())
    duplicates = len(pairs) - len(kept)
    if max_pairs and len(kept) > max_pairs:
        chosen = sorted(random.Random(seed).sample(range(len(kept)), max_pairs))
        kept = [kept[index] for index in chosen]
    return kept, duplicates


# --- The model side ---------------------------------------------------------------------------


def check_template(template: PromptTemplate) -> None:
    if template.kind is TemplateKind.INDIRECT:
        raise TuningError(
            f"template {template.name!r} generates an explanation first (INDIRECT): tune with a question "
            "template such as direct or fs_direct"
        )


def answer_ids(lm: CausalLM, template: PromptTemplate) -> tuple[int, int]:
    """The one-token "yes" and "no" the score is read from (as the fast path reads them)."""
    answers = find_answer_tokens(lm, template)
    if not answers.single:
        raise TuningError(
            f"{lm.label}: the answers {answers.yes!r}/{answers.no!r} of template {template.name!r} are several tokens; "
            "tuning reads one-token answers"
        )
    return answers.yes_id, answers.no_id


def prompt_ids(lm: CausalLM, template: PromptTemplate, pair: LabelledPair) -> list[int]:
    """The pair's prompt tokens, rendered exactly as ParaPLUIE scores it."""
    return encode(lm, render(lm, template.question(pair.source, pair.hypothesis)))


def batch_scores(lm: CausalLM, model: Any, batch: Sequence[Sequence[int]], yes_id: int, no_id: int) -> Any:
    """logit(yes) - logit(no) at each prompt's last position (left padding, true positions)."""
    import torch

    device = next(model.parameters()).device
    width = max(len(ids) for ids in batch)
    input_ids = torch.full((len(batch), width), lm.pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    positions = torch.zeros((len(batch), width), dtype=torch.long)
    for row, ids in enumerate(batch):
        pad = width - len(ids)
        input_ids[row, pad:] = torch.tensor(list(ids), dtype=torch.long)
        mask[row, pad:] = 1
        positions[row, pad:] = torch.arange(len(ids))
    output = model(
        input_ids=input_ids.to(device),
        attention_mask=mask.to(device),
        position_ids=positions.to(device),
        use_cache=False,
        logits_to_keep=1,
    )
    logits = output.logits[:, -1, :].float()
    return logits[:, yes_id] - logits[:, no_id]


def evaluate(
    lm: CausalLM, model: Any, examples: Sequence[_Example], yes_id: int, no_id: int, batch_size: int
) -> tuple[float | None, float | None, list[float]]:
    """(logistic loss, AUC, scores) of ``examples`` (no gradients, dropout off)."""
    import torch
    import torch.nn.functional as functional

    if not examples:
        return None, None, []
    was_training = model.training
    model.eval()
    scores: list[float] = []
    order = sorted(range(len(examples)), key=lambda index: len(examples[index].ids))
    by_index: dict[int, float] = {}
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            values = batch_scores(lm, model, [examples[index].ids for index in chunk], yes_id, no_id).cpu().tolist()
            by_index.update(zip(chunk, values, strict=True))
    scores = [by_index[index] for index in range(len(examples))]
    labels = [example.label for example in examples]
    loss = float(
        functional.binary_cross_entropy_with_logits(
            torch.tensor(scores, dtype=torch.float64), torch.tensor(labels, dtype=torch.float64)
        )
    )
    if was_training:
        model.train()
    return loss, roc_auc(scores, labels), scores


def _better(auc: float | None, loss: float | None, best: tuple[float, float] | None) -> bool:
    key = (auc if auc is not None else -1.0, -(loss if loss is not None else math.inf))
    return best is None or key > best


def train_adapter(
    lm: CausalLM,
    peft_model: Any,
    adapter: str,
    train: Sequence[_Example],
    validation: Sequence[_Example],
    options: TuningOptions,
    answers: tuple[int, int],
    *,
    position: tuple[int, int] = (0, 1),
    progress: ProgressCallback | None = None,
    from_start: bool = False,
) -> AdapterResult:
    """Train the (already added, active) adapter ``adapter``; keep its best validation state.

    ``from_start``: the adapter holds a tuned judge's weights (``start_from``), so its state
    before training is a candidate too (further training on few pairs may only make it worse)."""
    import torch
    import torch.nn.functional as functional

    yes_id, no_id = answers
    model = peft_model
    parameters = [
        (name, parameter) for name, parameter in model.named_parameters() if f".{adapter}." in name and "lora_" in name
    ]
    for name, parameter in model.named_parameters():
        parameter.requires_grad_(any(name == own for own, _ in parameters))
    trainable = [parameter for _, parameter in parameters]
    if not trainable:
        raise TuningError(f"no LoRA weights named for adapter {adapter!r}: do the targets {options.targets} exist?")
    optimizer = torch.optim.AdamW(trainable, lr=options.learning_rate, weight_decay=0.0)
    per_epoch = math.ceil(len(train) / options.batch_size)
    steps = per_epoch * options.epochs
    warmup = max(1, round(0.06 * steps))

    def schedule(step: int) -> float:  # linear warm-up, then linear decay to zero
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (steps - step) / max(1, steps - warmup))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    rng = random.Random(options.seed * 1000 + position[0])
    started = time.perf_counter()
    result = AdapterResult(adapter, len(train), len(validation), 0, 0, 0.0, None, None, 0, False)
    best_key: tuple[float, float] | None = None
    best_state = [parameter.detach().clone() for parameter in trainable]
    since: list[float] = []
    bad = 0

    def report(event: str, epoch: int, loss: float | None = None, vloss: float | None = None) -> None:
        result.seconds = time.perf_counter() - started
        last_auc = result.history[-1]["validation_auc"] if result.history else None
        if progress is not None:
            progress(
                Progress(
                    event=event,
                    adapter=adapter,
                    adapter_index=position[0],
                    adapters=position[1],
                    step=result.steps,
                    steps=steps,
                    epoch=epoch,
                    examples=len(train) if event == "start" else result.examples,
                    seconds=result.seconds,
                    loss=loss,
                    validation_loss=vloss,
                    validation_auc=last_auc if event != "start" else None,
                    best_auc=result.best_validation_auc,
                    stopped_early=result.stopped_early,
                )
            )

    def check_point(epoch: int) -> bool:
        """Evaluate; keep the state if best; True when patience ran out."""
        nonlocal best_key, bad, since
        vloss, vauc, _ = evaluate(lm, model, validation, yes_id, no_id, options.batch_size * 2)
        loss = sum(since) / len(since) if since else None
        since = []
        result.history.append(
            {"step": result.steps, "epoch": epoch, "loss": loss, "validation_loss": vloss, "validation_auc": vauc}
        )
        if result.steps == 0 and not from_start:
            pass  # the untuned model's figures, for comparison: never "the best adapter"
        elif _better(vauc, vloss, best_key):
            best_key = (vauc if vauc is not None else -1.0, -(vloss if vloss is not None else math.inf))
            best_state[:] = [parameter.detach().clone() for parameter in trainable]
            result.best_validation_auc, result.best_validation_loss, result.best_step = vauc, vloss, result.steps
            bad = 0
        else:
            bad += 1
        result.stopped_early = bad >= options.patience
        if result.steps == 0:  # before this training: the base model's, or the starting judge's
            result.base_validation_auc, result.base_validation_loss = vauc, vloss
        report("eval", epoch, loss, vloss)
        return result.stopped_early

    report("start", 0)
    model.train()
    stop = check_point(0) if validation else False
    for epoch in range(1, options.epochs + 1):
        if stop:
            break
        order = list(range(len(train)))
        rng.shuffle(order)
        for start in range(0, len(order), options.batch_size):
            chunk = [train[index] for index in order[start : start + options.batch_size]]
            scores = batch_scores(lm, model, [example.ids for example in chunk], yes_id, no_id)
            labels = torch.tensor([example.label for example in chunk], dtype=scores.dtype, device=scores.device)
            loss = functional.binary_cross_entropy_with_logits(scores, labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()  # type: ignore[no-untyped-call]
            torch.nn.utils.clip_grad_norm_(trainable, 1.0)
            optimizer.step()
            scheduler.step()
            since.append(float(loss.detach()))
            result.steps += 1
            result.examples += len(chunk)
            last = start + options.batch_size >= len(order)
            if (result.steps % options.eval_every == 0 or last) and check_point(epoch):
                stop = True
                break
    if not validation:
        best_state[:] = [parameter.detach().clone() for parameter in trainable]
        result.best_step = result.steps
    with torch.no_grad():
        for parameter, kept in zip(trainable, best_state, strict=True):
            parameter.copy_(kept)
    model.eval()
    result.seconds = time.perf_counter() - started
    report("done", options.epochs)
    return result


def _save_adapter(peft_model: Any, adapter: str, folder: Path) -> None:
    from peft import get_peft_model_state_dict
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    state = get_peft_model_state_dict(peft_model, adapter_name=adapter)
    save_file(
        {name: tensor.detach().to("cpu").contiguous() for name, tensor in sorted(state.items())},
        str(folder / "adapter_model.safetensors"),
        metadata={"format": "pt"},
    )
    peft_model.peft_config[adapter].save_pretrained(str(folder))


def start_state(start: Path, options: TuningOptions, base_identity: dict[str, Any], keys: set[str]) -> dict[str, Any]:
    """The full adapter's weights of the tuned judge ``start`` (a bundle folder) to start from,
    after checking that it can be: the judge ``options.start_from`` names, tuned from this base
    model, with adapters of the same shape, and never trained on any of these pairs (``keys``):
    its adapter would carry them into every fold, and cross-fitting would no longer be honest."""
    from safetensors.torch import load_file

    manifest = tuned.read_manifest(start)
    where = f"cannot start from the tuned judge {options.start_from!r} ({start})"
    if manifest.name != options.start_from and safe_name(manifest.name) != options.start_from:
        raise TuningError(f"{where}: that folder holds {manifest.name!r}")
    if manifest.base_identity != base_identity:
        raise TuningError(
            f"{where}: it was tuned from another base model ({manifest.base_label or manifest.base_spec})"
        )
    problems = options.start_mismatches(manifest.settings)
    if problems:
        raise TuningError(f"{where}: its adapters have another shape ({'; '.join(problems)})")
    seen = keys & tuned.read_trained(start)
    if seen:
        raise TuningError(
            f"{where}: it was trained on {len(seen)} of these pairs, so every fold would start from an adapter that "
            "saw them; start from a judge tuned on other data"
        )
    return load_file(str(start / tuned.FULL / "adapter_model.safetensors"))


def _load_start(peft_model: Any, adapter: str, state: dict[str, Any]) -> None:
    from peft import set_peft_model_state_dict

    loaded: Any = set_peft_model_state_dict(peft_model, state, adapter_name=adapter)  # torch's _IncompatibleKeys
    unexpected = [key for key in loaded.unexpected_keys if "lora_" in key]
    if unexpected:
        raise TuningError(f"the starting adapter has weights this model lacks: {', '.join(unexpected[:3])}")


def _lora_config(options: TuningOptions) -> Any:
    from peft import LoraConfig

    return LoraConfig(
        r=options.rank,
        lora_alpha=options.alpha,
        lora_dropout=options.dropout,
        target_modules=list(options.targets),
        bias="none",
        task_type="CAUSAL_LM",
    )


def tune(
    lm: CausalLM,
    pairs: Sequence[LabelledPair],
    options: TuningOptions,
    template: PromptTemplate,
    output_root: str | Path,
    *,
    base_spec: str,
    base_name: str,
    trained_on: dict[str, Any] | None = None,
    progress: ProgressCallback | None = None,
    start: Path | None = None,
    probes: Sequence[TrainingProbe] = (),
) -> TuneResult:
    """Tune ``lm`` (a fresh copy: adapters go into its layers) on ``pairs``; write the bundle.

    ``base_spec`` is how a worker loads the base model again (``embedded``, a folder);
    ``base_name`` names the tuned judge (``<base_name>-tuned-<hash>``). With
    ``options.start_from``, ``start`` is that tuned judge's folder: every adapter starts from its
    full adapter (:func:`start_state` says when it cannot). ``probes`` join the training mix
    (:func:`training_plan` deals their folds by source sentence; a prompt longer than
    ``max_tokens`` is left out and counted, like a pair's). Returns where the bundle
    is and how training went; :class:`TuningError` says what is wrong with the data or options.
    """
    import torch
    from peft import get_peft_model

    started = time.perf_counter()
    options.check()
    check_template(template)
    if template.name != options.template:
        raise TuningError(f"options name the template {options.template!r} but {template.name!r} was given")
    answers = answer_ids(lm, template)
    items, duplicates = distinct_pairs(pairs, options.max_pairs, options.seed)
    encoded: list[tuple[LabelledPair, list[int]]] = []
    too_long = 0
    for item in items:
        ids = prompt_ids(lm, template, item)
        if len(ids) > options.max_tokens:
            too_long += 1
            continue
        encoded.append((item, ids))
    kept = [item for item, _ in encoded]
    unique_probes, _ = distinct_probes(probes, {item.key for item in items})
    probes_too_long = 0
    kept_probes: list[TrainingProbe] = []
    for probe in unique_probes:
        ids = prompt_ids(lm, template, probe.pair)
        if len(ids) > options.max_tokens:
            probes_too_long += 1
            continue
        encoded.append((probe.pair, ids))
        kept_probes.append(probe)
    counts = (sum(1 for item in kept if item.label), sum(1 for item in kept if not item.label))
    minimum = max(4, 2 * options.folds)
    if min(counts) < 2 or len(kept) < minimum:
        raise TuningError(
            f"not enough labelled pairs to tune on: {counts[0]} paraphrases and {counts[1]} non-paraphrases "
            f"fit in {options.max_tokens} tokens ({too_long} longer, {duplicates} duplicates left out); "
            f"need at least 2 of each and {minimum} in all"
        )
    example = {item.key: _Example(ids, 1.0 if item.label else 0.0) for item, ids in encoded}
    if bool(options.start_from) != (start is not None):
        raise TuningError(
            "start_from names the tuned judge to start from and start is its folder: give both or neither"
        )
    base = describe_model(base_spec)
    initial = start_state(start, options, base.identity, set(example)) if start is not None else None
    training = training_plan(kept, kept_probes, options.folds, options.seed)
    folds = training.folds
    plan = training.adapters

    root = Path(output_root)
    root.mkdir(parents=True, exist_ok=True)
    work = root / f".tuning-{uuid.uuid4().hex[:12]}"
    work.mkdir()
    results: list[AdapterResult] = []
    try:
        peft_model = None
        for index, (adapter, members) in enumerate(plan):
            torch.manual_seed(options.seed * 1000 + index)  # each adapter's initial weights
            if peft_model is None:
                peft_model = get_peft_model(lm.model, _lora_config(options), adapter_name=adapter)
            else:
                peft_model.add_adapter(adapter, _lora_config(options))
            peft_model.set_adapter(adapter)
            if initial is not None:
                _load_start(peft_model, adapter, initial)
            train_index, validation_index = stratified_split(members, options.validation_share, options.seed + index)
            result = train_adapter(
                lm,
                peft_model,
                adapter,
                [example[members[i].key] for i in train_index],
                [example[members[i].key] for i in validation_index],
                options,
                answers,
                position=(index, len(plan)),
                progress=progress,
                from_start=initial is not None,
            )
            results.append(result)
            _save_adapter(peft_model, adapter, work / adapter)
        manifest = tuned.Manifest(
            name="",
            base_spec=base_spec,
            base_name=base_name,
            base_identity=base.identity,
            base_label=base.label,
            template=template.name,
            template_sha256=template.text_hash,
            settings=options.identity(),
            folds=options.folds,
            trained_on={
                **(trained_on or {}),
                "pairs": len(kept),
                "too_long": too_long,
                "duplicates": duplicates,
                **({"probes": len(kept_probes), "probes_too_long": probes_too_long} if probes else {}),
            },
        )
        # A probe is routed like a pair: scored (in a probe set) by the adapter of its source's fold.
        tuned.write_folds(
            work,
            [
                {"key": item.key, "fold": folds[item.key], **({"id": item.id} if item.id is not None else {})}
                for item in kept
            ]
            + [{"key": key, "fold": fold, "probe": True} for key, fold in training.probe_folds.items()]
            if folds
            else [],
        )
        tuned.write_trained(work, [item.key for item in kept] + [probe.pair.key for probe in kept_probes])
        digest = tuned.identity_digest(tuned.bundle_identity(work, manifest, base.identity))
        name = tuned.tuned_name(base_name, digest)
        manifest = replace(manifest, name=name)
        manifest.write(work)
        elapsed = time.perf_counter() - started
        outcome = TuneResult(
            folder=root / name,
            name=name,
            label=tuned.tuned_label(base.label, digest),
            pairs=len(kept),
            too_long=too_long,
            duplicates=duplicates,
            adapters=results,
            seconds=elapsed,
            folds=folds,
            probe_folds=training.probe_folds,
            probes=len(kept_probes),
            probes_too_long=probes_too_long,
        )
        (work / tuned.TRAINING_FILE).write_text(json.dumps(outcome.summary(), indent=2) + "\n", encoding="utf-8")
        if outcome.folder.exists():
            shutil.rmtree(work)  # the same judge, tuned again with the same data and settings: keep the first
        else:
            work.rename(outcome.folder)
        return outcome
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
