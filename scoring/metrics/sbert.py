"""SBERT: cosine similarity of sentence embeddings (the sentence-encoder baseline of Peng et al.).

The embedding is the one the model itself defines in its sentence-transformers modules
(all-MiniLM-L6-v2: mean pooling over tokens, then L2 normalisation), so the cosine is a dot
product of unit vectors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from scoring.metrics.base import Metric, Pair
from scoring.metrics.encoders import ModelRef, check_model, load_sentence_encoder, read_json, resolve_model
from scoring.metrics.tokenize import package_version


def _pooling(ref: ModelRef) -> dict[str, Any]:
    """The model's pooling and length settings, read from its files (no torch)."""
    if not ref.local or ref.problem:
        return {}
    directory = Path(ref.location)
    pooling = read_json(directory / "1_Pooling" / "config.json")
    modes = sorted(
        key.removeprefix("pooling_mode_") for key, value in pooling.items() if key.startswith("pooling_mode") and value
    )
    config: dict[str, Any] = {"pooling": modes or "sentence-transformers default"}
    max_length = read_json(directory / "sentence_bert_config.json").get("max_seq_length")
    if max_length:
        config["max_seq_length"] = max_length
    return config


class SbertCosine(Metric):
    """Cosine similarity of the two sentences' embeddings (sentence-transformers)."""

    name: ClassVar[str] = "sbert"
    queue = "llm"
    description = "Cosine similarity of sentence-transformers embeddings (all-MiniLM-L6-v2: mean pooling, normalised)."

    def __init__(self, model: str = "embedded", device: str = "cpu", batch_size: int = 64) -> None:
        self.model = model
        self.device = device
        self.batch_size = batch_size

    @property
    def model_ref(self) -> ModelRef:
        return resolve_model(self.model)

    def config(self) -> dict[str, Any]:
        ref = self.model_ref
        return {
            **ref.identity,
            **_pooling(ref),
            "similarity": "cosine",
            "normalize_embeddings": True,
            "sentence_transformers": package_version("sentence-transformers"),
            "transformers": package_version("transformers"),
        }

    @property
    def label(self) -> str:
        return f"{self.name}[{self.model_ref.name}]"

    def check_available(self) -> None:
        check_model(self.model_ref, "SBERT_MODEL")

    def _score(self, pairs: list[Pair]) -> list[float]:
        ref = self.model_ref
        encoder = load_sentence_encoder(ref.location, self.device, ref.local)
        # Each distinct sentence once, longest first so padded batches waste little.
        sentences = sorted({text for pair in pairs for text in pair}, key=len, reverse=True)
        embeddings = encoder.encode(
            sentences,
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        row = {sentence: index for index, sentence in enumerate(sentences)}
        return [float(embeddings[row[source]] @ embeddings[row[hypothesis]]) for source, hypothesis in pairs]
