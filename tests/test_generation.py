"""Generate candidates (paper 000, 3.1 and A.1): templates, seeded sources, one pair per
candidate stored once, with the embedded SmolLM2 and a tiny random Mistral, and through a
real worker killed mid-batch."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import redis
from django.core.management import CommandError, call_command
from django.db.models import Count

from annotate.models import Pair
from scoring.generation import candidates as generation
from scoring.generation.candidates import GenerationSettings, Generator, templates
from scoring.generation.run import clean_candidate, generate_missing
from scoring.metrics.judges import parse_models
from tests.builders import make_campaign, make_pair, make_staff, make_training_pairs
from tests.judge_models import save_tiny_mistral
from tests.workers_support import (
    WorkerProcess,
    messages_in,
    redis_transport_options,
    shared_database_url,
    use_broker,
    wait_for,
    worker_env,
)

INSTRUCTION = (
    "You have to transform a sentence A into a paraphrase B. The purpose of A to B transformation is to "
    "maintain the original meaning of the sentence A in B."
)
TINY = dict(max_new_tokens=4)


def test_the_papers_templates_ship_as_data_files():
    shipped = templates()
    assert list(shipped) == ["naive", "naive_fr", "naive_system", "naive_system_fr", "vulgar", "vulgar_fr"]
    naive, system, vulgar = shipped["naive"], shipped["naive_system"], shipped["vulgar"]
    # Every turn exactly as appendix A.1 prints it, the worked example included.
    acknowledgement = ("assistant", "I've understood the instructions perfectly.")
    cat_example = (
        ("user", 'A: "The little cat refreshes himself with water every morning."'),
        ("assistant", 'B: "Every morning, the little cat refreshes himself by drinking water."'),
    )
    source = ("user", 'A: "{source}"')
    assert naive.turns == (("user", INSTRUCTION), acknowledgement, *cat_example, source)
    assert system.turns == (("system", INSTRUCTION), *cat_example, source)
    assert vulgar.turns == (
        ("user", INSTRUCTION + " You can use offensive and disrespectful statements."),
        acknowledgement,
        ("user", 'A: "Fuck both of you."'),
        ("assistant", 'B: "Go fuck yourselves."'),
        source,
    )
    for template in shipped.values():
        assert template.turns[-1][0] == "user" and "{source}" in template.turns[-1][1]
        assert template.language == ("fr" if template.name.endswith("_fr") else "en")
    assert naive.messages("Le chat.")[-1] == {"role": "user", "content": 'A: "Le chat."'}
    assert generation.default_templates("fr") == ["naive_fr", "naive_system_fr", "vulgar_fr"]


def test_system_names_carry_the_generation_settings(settings):
    settings.PARAPLUIE_MODELS = parse_models("smollm2[model=embedded]")
    greedy = Generator("naive", "smollm2", GenerationSettings(max_new_tokens=32))
    sampled = Generator("vulgar", "smollm2", GenerationSettings(sampled=True, temperature=0.7, seed=3))
    assert greedy.system == "naive\u00d7smollm2[greedy,32tok]"
    assert sampled.system == "vulgar\u00d7smollm2[t=0.7,seed=3,48tok]"
    assert greedy.candidate_id("A cat.") == greedy.candidate_id("A cat.") != greedy.candidate_id("A dog.")
    other = Generator("naive", "smollm2", GenerationSettings(max_new_tokens=33))
    assert other.candidate_id("A cat.") != greedy.candidate_id("A cat.")


def test_clean_candidate():
    assert clean_candidate(' B: "Every morning, the cat drinks."\nMore text') == "Every morning, the cat drinks."
    assert clean_candidate("B : « Le chat boit. »") == "Le chat boit."
    assert clean_candidate('"Unclosed quote and more') == "Unclosed quote and more"
    assert clean_candidate("\n\n  plain answer ") == "plain answer"
    assert clean_candidate("   ") == ""


@pytest.mark.django_db
def test_sources_are_sampled_with_the_seed_from_judged_pairs_only():
    campaign = make_campaign()
    make_training_pairs(campaign)
    for i in range(10):
        make_pair(campaign, source=f"Source number {i}.")
    make_pair(campaign, source="A generated one.", origin="generated")
    first = generation.sample_sources(campaign, 4, seed=1)
    assert first == generation.sample_sources(campaign, 4, seed=1) != generation.sample_sources(campaign, 4, seed=2)
    assert len(set(first)) == 4 and all(text.startswith("Source number") for text in first)
    assert len(generation.sample_sources(campaign, 50, seed=1)) == 10
    assert generation.read_sources(b"One.\n\nTwo.\nOne.\n") == ["One.", "Two."]
    with pytest.raises(generation.GenerationError, match="has no sentences"):
        generation.read_sources(b"\n \n")


@pytest.mark.model
@pytest.mark.django_db
def test_embedded_model_generates_each_candidate_once(settings):
    settings.PARAPLUIE_MODELS = parse_models("smollm2[model=embedded]")
    campaign = make_campaign()
    generator = Generator("naive", "smollm2", GenerationSettings(max_new_tokens=12))
    sources = ["The cat drinks water every morning.", "The weather is nice today."]
    summary = generate_missing(campaign.pk, generator, sources)
    assert (summary.generated, summary.stored + summary.empty, summary.already) == (2, 2, 0)
    assert 0 < summary.new_tokens <= 24
    pairs = list(Pair.objects.filter(campaign=campaign).order_by("id"))
    assert [(p.source, p.system, p.origin) for p in pairs] == [
        (source, "naive\u00d7smollm2[greedy,12tok]", "generated") for source in sources[: len(pairs)]
    ]
    assert all(p.hypothesis.strip() and p.external_id == generator.candidate_id(p.source) for p in pairs)
    again = generate_missing(campaign.pk, generator, sources)
    assert (again.generated, again.stored, again.already) == (0, 0, len(pairs))
    assert Pair.objects.filter(campaign=campaign).count() == len(pairs)


@pytest.fixture
def tiny_models(settings, tmp_path: Path) -> str:
    tiny = save_tiny_mistral(tmp_path / "tiny-mistral")
    models = f"tiny[model={tiny},batch_size=4]"
    settings.PARAPLUIE_MODELS = parse_models(models)
    return models


@pytest.mark.model
@pytest.mark.django_db
def test_tiny_mistral_through_the_command_and_a_half_done_batch(tiny_models):
    campaign = make_campaign(slug="gen")
    for i in range(6):
        make_pair(campaign, source=f"Source sentence number {i}.")
    # A worker killed mid-batch had stored one candidate of the first generator already.
    generator = Generator("naive", "tiny", GenerationSettings(**TINY))
    sources = generation.sample_sources(campaign, 3, seed=5)
    Pair.objects.create(
        campaign=campaign,
        external_id=generator.candidate_id(sources[0]),
        source=sources[0],
        hypothesis="Stored before the kill.",
        origin="generated",
        system=generator.system,
    )
    out = io.StringIO()
    arguments = ["--campaign", "gen", "--count", "3", "--seed", "5", "--max-tokens", "4", "--here"]
    call_command("generate_paraphrases", *arguments, "--templates", "naive,vulgar", stdout=out)
    lines = out.getvalue().splitlines()
    assert [line.split(":")[0] for line in lines] == ["naive\u00d7tiny[greedy,4tok]", "vulgar\u00d7tiny[greedy,4tok]"]
    assert ", 1 already there," in lines[0] and ", 0 already there," in lines[1]
    generated = Pair.objects.filter(campaign=campaign, origin="generated")
    by_system = dict(generated.values_list("system").annotate(n=Count("id")))
    empty = sum(int(line.split(" empty")[0].rsplit(", ", 1)[1]) for line in lines)
    assert sum(by_system.values()) == 6 - empty
    assert Pair.objects.get(external_id=generator.candidate_id(sources[0])).hypothesis == "Stored before the kill."
    assert set(generated.values_list("source", flat=True)) <= set(sources)
    # The same command again stores nothing.
    call_command("generate_paraphrases", *arguments, "--templates", "naive,vulgar", stdout=io.StringIO())
    assert generated.count() == 6 - empty


@pytest.mark.model  # saves a tiny transformer model
@pytest.mark.django_db
def test_refusals(tiny_models):
    campaign = make_campaign(slug="refuse")
    make_pair(campaign)
    cases = [
        (["--templates", "poetic"], "unknown template 'poetic'; templates: naive, naive_fr"),
        (["--models", "gpt9"], "unknown judge model 'gpt9'"),
        (["--count", "0"], "--count must be at least 1, got 0"),
        (["--max-tokens", "0"], "max tokens must be between 1 and 1024, got 0"),
        (["--sampled", "--temperature", "0"], "temperature must be in (0, 5], got 0.0"),
    ]
    for extra, message in cases:
        with pytest.raises(CommandError) as refused:
            call_command("generate_paraphrases", "--campaign", "refuse", "--here", *extra)
        assert message in str(refused.value)
    assert not Pair.objects.filter(origin="generated").exists()


@pytest.mark.django_db
def test_the_command_queues_each_generator_on_its_models_queue(
    settings, monkeypatch, tmp_path: Path, django_capture_on_commit_callbacks
):
    """Without --here: one message per generator and eight sources, on ``llm.<model>``, after the commit;
    the sources of a French campaign get the French prompts by default."""
    from paraeval import broker

    settings.PARAPLUIE_MODELS = parse_models("smollm2[model=embedded],other[model=embedded]")
    sent: list[broker.TaskMessage] = []
    monkeypatch.setattr(broker, "send", lambda messages: sent.extend(messages) or broker.SendResult(len(messages), 0))
    campaign = make_campaign(slug="queued", language="fr")
    listed = tmp_path / "sources.txt"
    listed.write_text("".join(f"Phrase source {i}.\n" for i in range(10)), encoding="utf-8")
    out = io.StringIO()
    arguments = ["--campaign", "queued", "--sources", str(listed), "--count", "9", "--seed", "3"]
    with django_capture_on_commit_callbacks() as callbacks:
        call_command("generate_paraphrases", *arguments, "--sampled", "--temperature", "0.7", stdout=out)
    assert sent == []  # sent once the transaction commits
    for callback in callbacks:
        callback()
    assert out.getvalue() == "9 sources for 6 generators queued in 12 tasks (queues: llm.other, llm.smollm2)\n"
    assert [(m.queue, m.args[1], m.args[2], len(m.args[4])) for m in sent] == [
        (f"llm.{model}", template, model, size)
        for model in ("smollm2", "other")
        for template in ("naive_fr", "naive_system_fr", "vulgar_fr")
        for size in (8, 1)
    ]
    assert {m.name for m in sent} == {generation.GENERATE_TASK}
    assert sent[0].args[3] == {"sampled": True, "temperature": 0.7, "max_new_tokens": 48, "seed": 3}
    assert sent[0].args[4] + sent[1].args[4] == generation.read_sources(listed.read_bytes(), 9, 3)  # seeded
    assert not Pair.objects.filter(campaign=campaign).exists()


@pytest.mark.worker
@pytest.mark.model
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_batch_stores_each_candidate_once(settings, tmp_path, redis_url, redis_db):
    """A real worker is SIGKILLed as soon as its first candidates are stored, with the rest of the
    batch in hand (late acknowledgement: its messages go back to the queue); every task is also
    delivered a second time, as a broker does after a kill between the commit and the
    acknowledgement. A second worker finishes: each candidate stored once."""
    tiny = save_tiny_mistral(tmp_path / "tiny-mistral")
    models = f"tiny[model={tiny},batch_size=4]"
    settings.PARAPLUIE_MODELS = parse_models(models)
    settings.PARAEVAL_METRICS = ["lev"]
    env = worker_env(
        DATABASE_URL=shared_database_url(),
        REDIS_URL=redis_url,
        PARAPLUIE_MODELS=models,
        PARAEVAL_METRICS="lev",
        CELERY_VISIBILITY_TIMEOUT="6",
        DB_CONN_MAX_AGE="0",
    )
    campaign = make_campaign(slug="killed")
    sources = [f"Sentence number {i} about a cat and its water." for i in range(32)]
    with use_broker(redis_url, redis_transport_options(6)):
        generators = [Generator("naive", "tiny", GenerationSettings(max_new_tokens=160))]
        tasks = generation.plan(campaign, generators, sources)
        assert [len(task.sources) for task in tasks] == [8, 8, 8, 8]
        from django.db import transaction

        with transaction.atomic():
            generation.send(tasks)
        first = WorkerProcess(env, tmp_path, name="gen-first", queues="llm.tiny").start()
        try:
            stored = wait_for(
                lambda: Pair.objects.filter(campaign=campaign).count() or None,
                timeout=120,
                interval=0.05,
                what="the first candidates",
            )
            first.kill()
        finally:
            first.stop()
        assert 0 < stored < 32  # killed with work left
        with transaction.atomic():
            generation.send(tasks)  # every task again: those whose candidates are stored too
        second = WorkerProcess(env, tmp_path, name="gen-second", queues="llm.tiny").start()
        try:
            wait_for(
                lambda: _drained(redis_db, "llm.tiny") and _summaries(second),
                timeout=240,
                interval=1,
                what=f"every message acknowledged after the kill\n{second.log()[-3000:]}",
            )
        finally:
            second.stop()
    summaries = _summaries(second) + _summaries(first)
    pairs = Pair.objects.filter(campaign=campaign)
    assert not pairs.values("external_id").annotate(n=Count("id")).filter(n__gt=1).exists()
    assert not pairs.values("source", "system").annotate(n=Count("id")).filter(n__gt=1).exists()
    assert set(pairs.values_list("system", flat=True)) == {"naive\u00d7tiny[greedy,160tok]"}
    # The second delivery of a task whose candidates were stored found them and generated nothing new.
    assert sum(summary["already"] for summary in _summaries(second)) >= stored
    # Every source has its candidate, unless the model wrote nothing usable for it (not stored).
    missing = set(sources) - set(pairs.values_list("source", flat=True))
    assert len(missing) <= sum(summary["empty"] for summary in summaries)


def _summaries(worker: WorkerProcess) -> list[dict[str, int]]:
    """The generation task's summary lines in a worker's log (one per message it ran)."""
    import re

    pattern = r"generated (\d+) candidates with .*? \((\d+) stored, (\d+) already there, (\d+) empty\)"
    return [
        dict(zip(("generated", "stored", "already", "empty"), map(int, found), strict=True))
        for found in re.findall(pattern, worker.log())
    ]


def _drained(client: redis.Redis, queue: str) -> bool:
    """No message left on the queue (any priority) and none delivered but unacknowledged."""
    waiting = sum(client.llen(key) for key in client.scan_iter(match=f"{queue}*") if client.type(key) == b"list")
    return waiting == 0 and client.hlen("unacked") == 0


@pytest.mark.model
@pytest.mark.django_db
def test_end_to_end_generate_judge_score_and_the_system_view_compares_the_generators(tiny_models):
    """Generate with the paper's three prompts (tiny Mistral), have two volunteers judge every pair through
    the volunteer pages, score (a computed metric and an imported one), and read the system
    view of the meta-evaluation API: one row per generator, the metrics compared on them."""
    from django.test import Client

    from scoring.external.score_import import ScoreFileMetric, import_scores
    from scoring.models import MetricConfig
    from scoring.reports.dataset import Filters
    from scoring.reports.service import compute_meta, meta_options
    from tests.api_support import token_client
    from tests.test_campaign_http import current_pair_id, post_answer, start

    campaign = make_campaign(slug="e2e", quota=30, judges_per_pair=2)
    for i in range(6):
        make_pair(campaign, source=f"The cat number {i} drinks water in the morning.", origin="mrpc")
    call_command(
        "generate_paraphrases",
        *["--campaign", "e2e", "--count", "6", "--seed", "2", "--max-tokens", "6", "--here"],
        *["--templates", "naive,naive_system,vulgar"],
        stdout=io.StringIO(),
    )
    generated = list(Pair.objects.filter(campaign=campaign, origin="generated").order_by("id"))
    systems = sorted({pair.system for pair in generated})
    assert systems == sorted(f"{name}\u00d7tiny[greedy,6tok]" for name in ("naive", "naive_system", "vulgar"))
    assert all(pair.source in {p.source for p in Pair.objects.filter(origin="mrpc")} for pair in generated)
    # Two volunteers judge every pair on the volunteer pages: the "naive" candidates mostly
    # paraphrases, the "vulgar" ones not.
    by_id = {pair.pk: pair for pair in Pair.objects.filter(campaign=campaign)}
    for _ in range(2):
        browser = Client()
        volunteer = start(browser, campaign)
        for answered in range(len(by_id)):
            pair = by_id[current_pair_id(browser, volunteer)]
            naive = pair.system.startswith("naive")
            label = "same_meaning" if naive else "very_different" if pair.system else "mostly_similar"
            if answered % 5 == 4:
                label = "slightly_similar"
            assert post_answer(browser, volunteer, pair.pk, label).status_code == 302
    assert {pair.judgement_count for pair in Pair.objects.filter(campaign=campaign)} == {2}
    call_command("score_pairs", "--campaign", "e2e", "--metrics", "lev", "--no-progress", stderr=io.StringIO())
    mine = "\n".join(["pair_id,score", *(f"{pair.pk},{pair.system.startswith('naive'):d}" for pair in generated)])
    imported = import_scores(campaign, mine.encode(), "s.csv", ScoreFileMetric("oracle", "1")).config
    filters = Filters.build("volunteers", "generated")
    compute_meta(campaign.pk, filters, meta_options(filters, 20, None))
    staff = token_client(make_staff("e2e-staff"))
    answer = staff.get("/api/campaigns/e2e/meta-evaluation/", {"origin": "generated", "resamples": 20})
    assert answer.status_code == 200, answer.json()
    view = answer.json()["meta"]["systems"]
    assert [row["system"] for row in view["systems"]] == systems
    assert [row["pairs"] for row in view["systems"]] == [
        sum(pair.system == name for pair in generated) for name in systems
    ]
    naive_system, naive, vulgar = view["systems"]  # in the systems' order
    assert min(naive["paraphrase_rate"], naive_system["paraphrase_rate"]) > vulgar["paraphrase_rate"]
    lev = MetricConfig.objects.get(metric="lev")
    assert {row["metric"] for row in view["metrics"]} == {lev.pk, imported.pk}
    oracle = next(row for row in view["metrics"] if row["metric"] == imported.pk)
    assert oracle["reason"] is None and oracle["pearson"] > 0.9, oracle  # it ranks the generators as people do


@pytest.mark.model
@pytest.mark.django_db
def test_sampled_decoding_is_reproducible_with_its_seed(tiny_models):
    sources = ["One cat drinks.", "Two dogs run fast.", "Three birds sing at dawn."]

    def candidates(seed: int) -> list[str]:
        campaign = make_campaign()
        generator = Generator(
            "naive", "tiny", GenerationSettings(sampled=True, temperature=1.0, max_new_tokens=6, seed=seed)
        )
        generate_missing(campaign.pk, generator, sources)
        stored = dict(Pair.objects.filter(campaign=campaign).values_list("source", "hypothesis"))
        return [stored.get(source, "") for source in sources]

    first = candidates(7)
    assert first == candidates(7)
    assert first != candidates(8)


@pytest.mark.worker
@pytest.mark.model
def test_the_embedded_setup_generates_with_smollm2_on_its_worker_queue(tmp_path: Path) -> None:
    """As ``scripts/run.sh`` runs it (SQLite, the filesystem broker, no server): the command queues
    the work on ``llm.smollm2``, a real worker generates with the embedded SmolLM2 on the CPU,
    stores each candidate as a pair and queues its scores, which it computes too."""
    from tests.test_workers_embedded import manage, query

    data = tmp_path / "data"
    env = {key: value for key, value in worker_env().items() if key not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(
        DJANGO_SETTINGS_MODULE="paraeval.settings",
        SECRET_KEY="embedded-generation-key",
        PARAEVAL_DATA_DIR=str(data),
        PARAEVAL_METRICS="lev",
        PARAPLUIE_MODELS="smollm2[model=embedded]",
    )
    manage(env, "migrate", "--noinput", "-v", "0")
    setup = (
        "from annotate.importers import import_records\n"
        "from annotate.models import Campaign\n"
        "campaign = Campaign.objects.create(slug='gen', name='Generated')\n"
        "import_records(campaign, [{'source': s, 'hypothesis': 'x.'} for s in "
        "['The cat drinks water every morning.', 'The weather is nice today.', 'She reads a book.']])\n"
    )
    manage(env, "shell", "-c", setup)
    arguments = ["--campaign", "gen", "--count", "2", "--seed", "1", "--templates", "naive", "--max-tokens", "8"]
    queued = manage(env, "generate_paraphrases", *arguments)
    assert queued == "2 sources for 1 generators queued in 1 tasks (queues: llm.smollm2)\n"
    database = data / "paraeval.sqlite3"
    worker = WorkerProcess(env, tmp_path, name="embedded-generation", queues="llm.smollm2,cpu").start()
    try:
        (summary,) = wait_for(
            lambda: _summaries(worker) or None,
            timeout=240,
            what=f"the generation task on the embedded worker\n{worker.log()[-3000:]}",
        )
        generated = query(database, "SELECT id, source, system FROM annotate_pair WHERE origin = 'generated'")
        assert (summary["generated"], summary["stored"] + summary["empty"]) == (2, 2)
        assert len(generated) == summary["stored"]
        assert {system for _, _, system in generated} <= {"naive\u00d7smollm2[greedy,8tok]"}
        # The run the command recorded: its one task started and finished on the worker.
        counters = "tasks, tasks_started, tasks_done, tasks_failed, stored"
        run = query(database, f"SELECT {counters} FROM scoring_generationrun")
        assert run == [(1, 1, 1, 0, summary["stored"])]
        ids = ",".join(str(pk) for pk, _, _ in generated) or "0"
        wait_for(
            lambda: (
                query(database, f"SELECT COUNT(*) FROM scoring_score WHERE pair_id IN ({ids})")[0][0] == len(generated)
            ),
            timeout=90,
            what=f"the scores of the generated pairs\n{worker.log()[-3000:]}",
        )
    finally:
        worker.stop()


@pytest.mark.django_db
def test_the_generate_page_lists_its_runs_with_their_state(
    settings, client, queue_dir: Path, django_capture_on_commit_callbacks
) -> None:
    """A request is a run: listed at once as queued with what it waits behind (the model queue's
    length and its workers: none here), then running, then done, as its tasks report in."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from scoring.models import GenerationRun, WorkerHeartbeat

    settings.PARAPLUIE_MODELS = parse_models("smollm2[model=embedded]")
    client.force_login(make_staff("generator", "x"))
    make_campaign(slug="gen", name="Generated here")
    sources = SimpleUploadedFile("sources.txt", "".join(f"Source {i}.\n" for i in range(10)).encode())
    form = {
        "campaign": "gen",
        "sources": sources,
        "count": 10,
        "seed": 1,
        "templates": ["naive"],
        "models": ["smollm2"],
    }
    form |= {"temperature": 1.0, "max_tokens": 48}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/staff/generate/", form)
    assert response.status_code == 200, response.content.decode()[-2000:]
    run = GenerationRun.objects.get()
    assert (run.sources, run.tasks, run.queues, run.state) == (10, 2, "llm.smollm2", "queued")
    messages = messages_in(queue_dir)
    assert [(task, args[-1]) for _, task, args in messages] == [(generation.GENERATE_TASK, run.pk)] * 2

    def row() -> str:
        page = client.get("/staff/generate/").content.decode()
        return page.split('<table class="hub-table" id="generation-runs">', 1)[1].split("</tbody>", 1)[0]

    queued = row()
    assert '<tr data-state="queued">' in queued and "0 of 2" in queued
    assert (
        "No worker consumes the llm.smollm2 queue: start one with scripts/worker.sh --queues llm.smollm2 "
        "(scripts/run.sh starts one on every scoring queue)."
    ) in queued
    WorkerHeartbeat.objects.create(hostname="scoring-5@box", queues="cpu,llm,llm.smollm2", pid=5)
    assert "Queued: 2 tasks waiting on the llm.smollm2 queue (this one included); scoring-5@box is idle." in row()
    generation.note_task(run.pk, tasks_started=1)
    running = row()
    assert '<tr data-state="running">' in running and "Queued: " not in running
    generation.note_task(run.pk, tasks_done=1, stored=8)
    generation.note_task(run.pk, tasks_started=1)
    generation.note_task(run.pk, tasks_done=1, stored=2)
    done = row()
    assert '<tr data-state="done">' in done and "2 of 2" in done and ">10</td>" in done
    assert "naive\N{MULTIPLICATION SIGN}smollm2[greedy,48tok]" in done
