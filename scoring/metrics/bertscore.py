"""BERTScore F1 (Zhang et al. 2020) through the ``bert-score`` package, on a cached model.

``bert_score.score`` reloads the model on every call; this calls its lower-level
``bert_cos_score_idf`` (greedy cosine matching, the same numbers) with the model that
:func:`scoring.metrics.encoders.load_bert` keeps for the process. The pitfalls of the package
are handled here:

* idf: ``bert_score`` computes idf weights over the references of each call (with a
  ``multiprocessing.Pool``, which Celery prefork workers forbid, and all weights 0 for a single
  reference). Here idf is off by default; ``idf_corpus`` names a text file (one sentence per
  line) whose idf weights are computed once, in-process (``nthreads=0``), so a pair's score never
  depends on the batch it came in.
* rescaling: the baseline file is looked up by model name; a local model has none. Rescaling
  needs ``baseline_path`` or a model with a baseline shipped by bert-score (bert-base-uncased…),
  and otherwise reports itself unavailable instead of silently not rescaling.
"""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Sequence
from functools import cache, lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any, ClassVar

from scoring.metrics.base import Metric, MetricUnavailable, Pair
from scoring.metrics.encoders import (
    ModelRef,
    check_model,
    load_bert,
    model_num_layers,
    resolve_model,
)
from scoring.metrics.tokenize import package_version

# Pairs per call of bert_cos_score_idf: it keeps every sentence's token embeddings of a call in memory.
_CHUNK = 512


@cache
def _file_sha256(path: str, mtime_ns: int, size: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: str) -> str:
    """SHA-256 of a file, cached while its size and modification time stay the same."""
    stat = Path(path).stat()
    return _file_sha256(path, stat.st_mtime_ns, stat.st_size)


def bundled_baseline(name: str, lang: str) -> Path | None:
    """bert-score's own rescaling baseline for a model name (e.g. ``bert-base-uncased``), if shipped."""
    spec = find_spec("bert_score")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / "rescale_baseline" / lang / f"{name}.tsv"
        if candidate.is_file():
            return candidate
    return None


def read_baseline_f1(path: str, num_layers: int) -> float:
    """The F baseline of ``num_layers`` in a bert-score baseline file (``LAYER,P,R,F`` rows)."""
    with open(path, encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            if int(row["LAYER"]) == num_layers:
                return float(row["F"])
    raise MetricUnavailable(f"baseline file {path} has no row for layer {num_layers}")


@lru_cache(maxsize=4)
def _idf_weights(corpus: str, corpus_sha256: str, location: str, num_layers: int, device: str, local: bool) -> Any:
    from bert_score.utils import get_idf_dict

    tokenizer, _ = load_bert(location, num_layers, device, local)
    with open(corpus, encoding="utf-8") as handle:
        sentences = [line.strip() for line in handle if line.strip()]
    if len(sentences) < 2:
        raise MetricUnavailable(f"idf corpus {corpus} needs many sentences (it has {len(sentences)})")
    # nthreads=0: no multiprocessing.Pool (daemonic Celery workers cannot start one).
    return get_idf_dict(sentences, tokenizer, nthreads=0)


class BertScore(Metric):
    """BERTScore F1 of the hypothesis against the source (symmetric), from ``num_layers``' embeddings."""

    name: ClassVar[str] = "bertscore"
    queue = "llm"
    description = "BERTScore F1 (bert-score package, greedy cosine matching of contextual token embeddings)."
    # Which setting names the model, for the messages that say how to fix a missing one.
    model_setting: ClassVar[str] = "BERTSCORE_MODEL"

    def __init__(
        self,
        model: str = "embedded",
        num_layers: int = 6,
        device: str = "cpu",
        idf_corpus: str | None = None,
        rescale_with_baseline: bool = False,
        baseline_path: str | None = None,
        lang: str = "en",
        batch_size: int = 64,
    ) -> None:
        if num_layers < 1:
            raise ValueError("num_layers must be at least 1")
        if baseline_path and not rescale_with_baseline:
            raise ValueError("baseline_path is only used with rescale_with_baseline=True")
        self.model = model
        self.num_layers = num_layers
        self.device = device
        self.idf_corpus = str(Path(idf_corpus).resolve()) if idf_corpus else None
        self.rescale_with_baseline = rescale_with_baseline
        self.baseline_path = str(Path(baseline_path).resolve()) if baseline_path else None
        self.lang = lang
        self.batch_size = batch_size

    @property
    def model_ref(self) -> ModelRef:
        return resolve_model(self.model)

    def _baseline_file(self) -> str | None:
        if not self.rescale_with_baseline:
            return None
        if self.baseline_path:
            return self.baseline_path
        found = bundled_baseline(self.model_ref.name, self.lang)
        return str(found) if found else None

    def bertscore_config(self) -> dict[str, Any]:
        """What changes a BERTScore number (shared by the metrics built on it)."""
        config: dict[str, Any] = {
            **self.model_ref.identity,
            "num_layers": self.num_layers,
            "score": "F1",
            "bert_score": package_version("bert-score"),
            "transformers": package_version("transformers"),
            "tokenizer": "slow (bert_score default)",
            "idf": False,
            "rescale_with_baseline": False,
        }
        if self.idf_corpus:
            config["idf"] = {"corpus_sha256": self._sha256_or_missing(self.idf_corpus)}
        if self.rescale_with_baseline:
            baseline = self._baseline_file()
            config["rescale_with_baseline"] = {
                "lang": self.lang,
                "baseline_sha256": self._sha256_or_missing(baseline) if baseline else "missing",
            }
        return config

    @staticmethod
    def _sha256_or_missing(path: str) -> str:
        try:
            return file_sha256(path)
        except OSError:
            return "missing"

    def config(self) -> dict[str, Any]:
        return self.bertscore_config()

    def model_label(self) -> str:
        parts = [self.model_ref.name, f"L{self.num_layers}"]
        if self.idf_corpus:
            parts.append("idf")
        if self.rescale_with_baseline:
            parts.append("rescaled")
        return " ".join(parts)

    @property
    def label(self) -> str:
        return f"{self.name}[{self.model_label()}]"

    def check_available(self) -> None:
        """Cheap: the model files, layer count, idf corpus and baseline file are there (no torch)."""
        ref = self.model_ref
        check_model(ref, self.model_setting)
        layers = model_num_layers(ref)
        if layers is not None and self.num_layers > layers:
            raise MetricUnavailable(
                f"num_layers={self.num_layers}, but {ref.name} has {layers} layers "
                "(set BERTSCORE_NUM_LAYERS: 6 for all-MiniLM-L6-v2, 9 for bert-base-uncased)"
            )
        if self.idf_corpus and not Path(self.idf_corpus).is_file():
            raise MetricUnavailable(f"idf corpus {self.idf_corpus} not found")
        if self.rescale_with_baseline:
            baseline = self._baseline_file()
            if baseline is None:
                raise MetricUnavailable(
                    f"rescale_with_baseline: bert-score ships no baseline for {ref.name} ({self.lang}); "
                    "pass baseline_path= to a bert-score baseline file (LAYER,P,R,F rows) or turn rescaling off"
                )
            if not Path(baseline).is_file():
                raise MetricUnavailable(f"baseline file {baseline} not found")

    def _load(self) -> tuple[Any, Any]:
        ref = self.model_ref
        return load_bert(ref.location, self.num_layers, self.device, ref.local)

    def _idf_dict(self, tokenizer: Any) -> Any:
        if self.idf_corpus:
            ref = self.model_ref
            return _idf_weights(
                self.idf_corpus, file_sha256(self.idf_corpus), ref.location, self.num_layers, self.device, ref.local
            )
        from collections import defaultdict

        # bert_score.score with idf=False: weight 1 for every token but [CLS] and [SEP].
        weights: defaultdict[int, float] = defaultdict(lambda: 1.0)
        weights[tokenizer.sep_token_id] = 0.0
        weights[tokenizer.cls_token_id] = 0.0
        return weights

    def f1(self, candidates: Sequence[str], references: Sequence[str]) -> list[float]:
        """BERTScore F1 of each candidate against the matching reference, in batches."""
        from bert_score.utils import bert_cos_score_idf

        if len(candidates) != len(references):
            raise ValueError("as many candidates as references are needed")
        tokenizer, model = self._load()
        idf_dict = self._idf_dict(tokenizer)
        baseline = self._baseline_file()
        baseline_f1 = read_baseline_f1(baseline, self.num_layers) if baseline else None
        scores: list[float] = []
        for start in range(0, len(candidates), _CHUNK):
            predictions = bert_cos_score_idf(
                model,
                list(references[start : start + _CHUNK]),
                list(candidates[start : start + _CHUNK]),
                tokenizer,
                idf_dict,
                verbose=False,
                batch_size=self.batch_size,
                device=self.device,
            )
            f1 = predictions[:, 2]
            if baseline_f1 is not None:
                f1 = (f1 - baseline_f1) / (1 - baseline_f1)
            scores.extend(float(value) for value in f1.tolist())
        return scores

    def _score(self, pairs: list[Pair]) -> list[float]:
        return self.f1([hypothesis for _, hypothesis in pairs], [source for source, _ in pairs])
