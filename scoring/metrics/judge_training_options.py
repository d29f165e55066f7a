"""What a judge tuning takes and reports: the labelled pairs, the options, the progress.

The light half of :mod:`scoring.metrics.judge_training` (which imports torch and peft when it trains):
the command and the web side build requests and read progress with these, without a model
library. Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from scoring.metrics import tuned
from scoring.metrics.base import MetricError

# Every attention and MLP projection of Llama / Mistral / Qwen2 / Gemma 3.
DEFAULT_TARGETS: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


class TuningError(MetricError, ValueError):
    """Tuning cannot run with these options or data; the message says what to change."""


@dataclass(frozen=True)
class LabelledPair:
    """One training pair: its two texts and the human label (True: a paraphrase)."""

    source: str
    hypothesis: str
    label: bool
    id: int | None = None  # the caller's id for it (a pair's primary key), kept in folds.json

    @property
    def key(self) -> str:
        return tuned.pair_key(self.source, self.hypothesis)


@dataclass(frozen=True)
class TrainingProbe:
    """A probe pair in the training mix, with ``group``: the key of the labelled pair it was built
    from. Its fold is its source sentence's, so no adapter is trained on a probe of a sentence it scores."""

    group: str
    pair: LabelledPair


@dataclass(frozen=True)
class TuningOptions:
    """Everything that changes the adapters (all of it is part of the tuned judge's identity)."""

    template: str = "direct"
    rank: int = 16
    alpha: int = 32
    dropout: float = 0.05
    learning_rate: float = 2e-4
    epochs: int = 1
    batch_size: int = 8
    max_tokens: int = 192
    max_pairs: int = 0  # 0: every pair
    validation_share: float = 0.1
    eval_every: int = 50
    patience: int = 3
    folds: int = 0  # 0: no cross-fitting adapters; else at least 2
    seed: int = 0
    targets: tuple[str, ...] = DEFAULT_TARGETS
    # A tuned judge (its name) whose full adapter every new adapter starts from instead of LoRA's
    # zero update: tuning on a campaign's labels from a judge tuned on other data. "": from scratch.
    start_from: str = ""
    # The share of probe pairs (word swaps, number, date and negation changes as non-paraphrases;
    # meaning-keeping rewrites as paraphrases) in the training mix: probes / (probes + pairs).
    probe_share: float = 0.0

    def check(self) -> None:
        """Refuse a bad value, naming the option."""
        problems = []
        for name in ("rank", "alpha", "epochs", "batch_size", "max_tokens", "eval_every", "patience"):
            if int(getattr(self, name)) < 1:
                problems.append(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.max_pairs < 0:
            problems.append(f"max_pairs must be 0 (all) or more, got {self.max_pairs}")
        if not 0 <= self.dropout < 1:
            problems.append(f"dropout must be in [0, 1), got {self.dropout}")
        if not 0 < self.learning_rate < 1:
            problems.append(f"learning_rate must be in (0, 1), got {self.learning_rate}")
        if not 0 < self.validation_share < 0.5:
            problems.append(f"validation_share must be in (0, 0.5), got {self.validation_share}")
        if self.folds == 1 or self.folds < 0 or self.folds > 20:
            problems.append(f"folds must be 0 (no cross-fitting) or 2 to 20, got {self.folds}")
        if not 0 <= self.probe_share < 1:
            problems.append(
                f"probe_share must be in [0, 1) (the probes' share of the training pairs), got {self.probe_share}"
            )
        if not self.targets:
            problems.append("targets: name at least one projection (q_proj, ...)")
        if problems:
            raise TuningError("; ".join(problems))

    def identity(self) -> dict[str, Any]:
        data = asdict(self)
        data["targets"] = list(self.targets)
        if not self.start_from:
            del data["start_from"]  # judges tuned from scratch keep the identity they had before the option
        if not self.probe_share:
            del data["probe_share"]  # likewise judges tuned without probes
        return data

    @classmethod
    def from_identity(cls, data: dict[str, Any]) -> TuningOptions:
        """The options an :meth:`identity` (a row's ``options``, a ``judge.json``'s ``settings``) describes."""
        values = dict(data)
        values["targets"] = tuple(values.get("targets") or DEFAULT_TARGETS)
        return cls(**values)

    def start_mismatches(self, start_settings: dict[str, Any]) -> list[str]:
        """What differs between these options' adapter shape and the settings of the judge to start
        from (its ``judge.json``): the adapters must have the same rank, alpha and projections."""
        problems = []
        for name in ("rank", "alpha"):
            theirs = start_settings.get(name)
            if theirs != getattr(self, name):
                problems.append(f"{name} {getattr(self, name)} here, {theirs} in {self.start_from}")
        theirs_targets = sorted(start_settings.get("targets") or [])
        if theirs_targets != sorted(self.targets):
            problems.append(
                f"targets {','.join(sorted(self.targets))} here, {','.join(theirs_targets)} in {self.start_from}"
            )
        return problems


@dataclass
class Progress:
    """Where a tuning run is: what the command prints and the service stores as it goes."""

    event: str  # "start", "eval", "done"
    adapter: str
    adapter_index: int
    adapters: int
    step: int
    steps: int
    epoch: int
    examples: int
    seconds: float
    loss: float | None = None  # mean training loss since the previous evaluation
    validation_loss: float | None = None
    validation_auc: float | None = None
    best_auc: float | None = None
    stopped_early: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        """One line for a terminal."""

        def number(value: float | None) -> str:
            return "-" if value is None else f"{value:.3f}"

        head = f"[{self.adapter} {self.adapter_index + 1}/{self.adapters}] step {self.step}/{self.steps}"
        if self.event == "start":
            return f"{head}: training on {self.examples} pairs"
        tail = " (stopped early)" if self.stopped_early else ""
        return (
            f"{head} epoch {self.epoch}: loss {number(self.loss)}, validation loss {number(self.validation_loss)}, "
            f"validation AUC {number(self.validation_auc)} (best {number(self.best_auc)}), "
            f"{self.seconds:.0f} s{tail}"
        )


ProgressCallback = Callable[[Progress], None]
