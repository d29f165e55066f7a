"""ParaPLUIE through a real OpenAI-compatible server: llama-cpp-python's, serving the embedded SmolLM2.

No mock anywhere: the server is started on a free loopback port (tests/served_support.py), the
in-process judge is the project's own, and the database is the test PostgreSQL database.

Measured here (76 demo pairs, DIRECT, top-20, 2 CPU cores), what the assertions bound:

* the float32 GGUF written from the de-quantised weights (the weights the in-process judge
  computes with): median |served - in-process| 0.0006, max 0.0025 (llama.cpp's float32 kernels
  against torch's: rounding); asserted max 0.01, and the same ROC AUC against the gold labels
  to 3 decimals;
* the Q4_1 file itself (what a user of the quantised file sees): median |delta| 0.085, max 0.28,
  from llama.cpp computing in its quantised arithmetic; asserted median 0.15, max 0.5.
"""

from __future__ import annotations

import html
import itertools
import json
import math
import statistics
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse
from sklearn.metrics import roc_auc_score

from annotate.importers.demo import DEMO_FILE
from scoring.metrics.base import MetricUnavailable, Pair
from scoring.metrics.judges import parse_models
from scoring.metrics.parapluie import ParaPluie
from scoring.metrics.served import ServedParaPluie, forget_connections
from scoring.models import QueuedScore, Score
from scoring.pipeline import runner
from tests.builders import make_campaign, make_pair, make_staff
from tests.served_support import LlamaServer, embedded_model, require_llama_server, write_float32_gguf

pytestmark = [pytest.mark.served, pytest.mark.model]

ROOT = Path(__file__).resolve().parent.parent


def demo_pairs() -> tuple[list[Pair], list[bool | None]]:
    rows = [json.loads(line) for line in DEMO_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(row["source"], row["hypothesis"]) for row in rows], [row.get("gold_label") for row in rows]


def served(url: str, *, template: str = "direct", **options: object) -> ServedParaPluie:
    """A served judge of ``url`` with the embedded model's chat template (probed afresh)."""
    extra = "".join(f",{key}={value}" for key, value in options.items())
    forget_connections()
    judge = parse_models(f"served[server={url},chat_template=embedded{extra}]")[0]
    return ServedParaPluie(template, judge)


@pytest.fixture(scope="module")
def q4_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    require_llama_server()
    server = LlamaServer(embedded_model(), tmp_path_factory.mktemp("q4")).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def f32_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    require_llama_server()
    folder = tmp_path_factory.mktemp("f32")
    server = LlamaServer(write_float32_gguf(folder / "smollm2-f32.gguf"), folder).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def in_process() -> list[float]:
    """The in-process judge's DIRECT scores of the demo pairs (the fast path, float32)."""
    pairs, _ = demo_pairs()
    return ParaPluie(template="direct", model="embedded", batch_size=8).score_batch(pairs)


def _deltas(outcomes: list, reference: list[float]) -> list[float]:
    assert [outcome.error for outcome in outcomes if not outcome.ok] == []
    return [abs(outcome.value - value) for outcome, value in zip(outcomes, reference, strict=True)]


def test_float32_weights_served_give_the_in_process_scores_pair_by_pair(
    f32_server: LlamaServer, in_process: list[float]
) -> None:
    pairs, gold = demo_pairs()
    metric = served(f32_server.url)
    assert metric.served.plan.mode == "top-20 + exact"
    outcomes = metric.score_many(pairs)
    deltas = _deltas(outcomes, in_process)
    assert max(deltas) <= 0.01, f"median {statistics.median(deltas):.5f}, max {max(deltas):.5f}"
    # The same ranking against the gold labels: the ROC AUC agrees to 3 decimals.
    labelled = [index for index, label in enumerate(gold) if label is not None]
    truth = [bool(gold[index]) for index in labelled]
    served_auc = roc_auc_score(truth, [outcomes[index].value for index in labelled])
    local_auc = roc_auc_score(truth, [in_process[index] for index in labelled])
    assert round(served_auc, 3) == round(local_auc, 3)


def test_the_quantised_file_served_differs_by_llama_cpp_arithmetic_within_the_stated_bounds(
    q4_server: LlamaServer, in_process: list[float]
) -> None:
    pairs, _ = demo_pairs()
    deltas = _deltas(served(q4_server.url).score_many(pairs), in_process)
    assert statistics.median(deltas) <= 0.15 and max(deltas) <= 0.5, (statistics.median(deltas), max(deltas))


def test_the_prompt_sent_is_the_in_process_judges_byte_for_byte(q4_server: LlamaServer) -> None:
    from scoring.metrics.lm import load_tokenizer
    from scoring.metrics.parapluie_engine import render
    from scoring.metrics.templates import get_template

    pairs, _ = demo_pairs()
    tokenizer = load_tokenizer("embedded")
    for template in ("direct", "fs_direct"):
        metric = served(q4_server.url, template=template)
        for pair in pairs[:10]:
            assert metric.prompt(pair) == render(tokenizer, get_template(template).question(*pair))


def test_an_answer_outside_the_top_k_is_a_failed_score_with_its_reason_and_exact_mode_fills_it(
    q4_server: LlamaServer, in_process: list[float]
) -> None:
    pairs, _ = demo_pairs()
    chosen = [0, 1, 2, 3]
    reference = served(q4_server.url).score_many([pairs[index] for index in chosen])
    # Top-1: only the model's first choice comes back, so the other answer is never there.
    top_one = served(q4_server.url, top_logprobs=1, mode="top-k")
    assert top_one.served.plan.mode == "top-1"
    outcomes = top_one.score_many([pairs[index] for index in chosen])
    for outcome, value in zip(outcomes, reference, strict=True):
        missing = "Yes" if value.value < 0 else "No"  # the model leans to the other answer
        assert (outcome.value, outcome.error) == (None, f"'{missing}' is not among the server's top 1")
    # Stored as such: a failed row with the reason, never a 0.
    # (auto: the pairs top-1 cannot score are scored from the echoed prompt log-probabilities.)
    filled = served(q4_server.url, top_logprobs=1).score_many([pairs[index] for index in chosen[:2]])
    for outcome, value in zip(filled, reference[:2], strict=True):
        assert outcome.ok and math.isclose(outcome.value, value.value, abs_tol=1e-3)


def test_the_request_rate_spaces_the_requests_the_server_receives(q4_server: LlamaServer) -> None:
    pairs, _ = demo_pairs()
    metric = served(q4_server.url, rate=5, concurrency=4, mode="top-k")  # one request per pair
    received_before = q4_server.log().count('"POST /v1/completions HTTP/1.1" 200')
    outcomes = metric.score_many(pairs[:10])
    assert all(outcome.ok for outcome in outcomes)
    # The limiter handed out one start per request, 1/5 s apart, although 4 threads asked at once.
    sends = list(metric.served.client.limiter.sends)
    assert len(sends) == 10
    assert min(later - earlier for earlier, later in itertools.pairwise(sends)) >= 0.2 * (1 - 1e-9)
    # And the server received exactly those requests (its own access log).
    assert q4_server.log().count('"POST /v1/completions HTTP/1.1" 200') - received_before == 10


@pytest.mark.django_db
def test_a_failed_answer_is_stored_as_failed_with_the_reason(q4_server: LlamaServer) -> None:
    campaign = make_campaign()
    pairs = [make_pair(campaign, source=s, hypothesis=h) for s, h in demo_pairs()[0][:3]]
    metric = served(q4_server.url, top_logprobs=1, mode="top-k")
    summary = runner.score_missing(metric, campaign=campaign)
    assert (summary.scored, summary.failed) == (0, 3)
    rows = Score.objects.filter(pair__in=pairs).order_by("pair_id")
    assert [(row.status, row.value) for row in rows] == [("failed", None)] * 3
    assert all(row.error.endswith("is not among the server's top 1") for row in rows)
    # The dashboard says how many pairs failed so, per reason, and links to them.
    client = Client()
    client.force_login(make_staff("staff", "pw-for-tests"))
    page = html.unescape(client.get(reverse("staff:dashboard") + f"?campaign={campaign.slug}").content.decode())
    reasons = Counter(row.error for row in rows)
    for reason, count in reasons.items():
        pairs_text = f"{count} pair{'s' if count > 1 else ''}"
        assert f"{pairs_text}</a> failed on <code>{metric.label}</code>: {reason}</li>" in page


def test_a_server_that_gives_no_log_probabilities_is_refused_naming_it_and_the_field(tmp_path: Path) -> None:
    require_llama_server()
    # llama-cpp-python's server started without --logits_all true answers every request that asks
    # for log-probabilities with an error (it keeps only the last position's logits).
    server = LlamaServer(embedded_model(), tmp_path, logits_all=False).start()
    try:
        with pytest.raises(MetricUnavailable) as refused:
            served(server.url)
    finally:
        server.stop()
    message = str(refused.value)
    assert message.startswith(f"the server at {server.url} (")
    assert "answers /v1/completions without the 'logprobs' field" in message
    assert "logprobs is not supported for models created with logits_all=False" in message


@pytest.mark.django_db(transaction=True)
def test_a_server_killed_and_restarted_during_a_batch_loses_and_doubles_nothing(tmp_path: Path) -> None:
    require_llama_server()
    server = LlamaServer(embedded_model(), tmp_path).start()
    try:
        campaign = make_campaign()
        texts = demo_pairs()[0][:24]
        pairs = [make_pair(campaign, source=s, hypothesis=h) for s, h in texts]
        metric = served(server.url, concurrency=4, retries=8)
        expected = metric.score_many(texts)
        requests_before = server.log().count("POST /v1/completions")
        done: dict[str, object] = {}
        thread = threading.Thread(
            target=lambda: done.update(summary=runner.score_missing(metric, campaign=campaign, batch_size=24))
        )
        thread.start()
        # Kill it once the batch's requests are flowing, then bring it back on the same port.
        deadline = 60.0
        waited = 0.0
        while server.log().count("POST /v1/completions") < requests_before + 4 and waited < deadline:
            threading.Event().wait(0.05)
            waited += 0.05
        answered_before_kill = server.log().count("POST /v1/completions") - requests_before
        server.kill()
        threading.Event().wait(1.5)
        server.start()
        thread.join(timeout=300)
        assert not thread.is_alive()
    finally:
        server.stop()
    assert 0 < answered_before_kill < 24
    summary = done["summary"]
    assert (summary.scored, summary.failed, summary.already_scored) == (24, 0, 0)  # type: ignore[attr-defined]
    rows = list(Score.objects.filter(pair__in=pairs).order_by("pair_id").values_list("pair_id", "status", "value"))
    assert [pair_id for pair_id, _, _ in rows] == [pair.pk for pair in pairs]  # each pair exactly once
    for (_, status, value), outcome in zip(rows, expected, strict=True):
        assert status == "done" and math.isclose(value, outcome.value, abs_tol=1e-4)
    assert not QueuedScore.objects.exists()


def test_a_served_judge_imports_no_model_library(q4_server: LlamaServer) -> None:
    """The served judge's worker needs neither torch nor transformers (nor gguf, nor numpy)."""
    script = (
        "import sys\n"
        "from scoring.metrics.judges import parse_models\n"
        "from scoring.metrics.served import ServedParaPluie\n"
        f"judge = parse_models('s[server={q4_server.url},chat_template=embedded]')[0]\n"
        "outcome = ServedParaPluie('direct', judge).score_many([('A cat sat.', 'A cat was sitting.')])[0]\n"
        "assert outcome.ok, outcome\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'transformers', 'gguf', 'numpy'}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]"
