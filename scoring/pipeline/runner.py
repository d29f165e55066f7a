"""Score the pairs that lack a score for one metric configuration, and store each score once.

This is the heart of scoring; the Celery task and ``manage.py score_pairs`` are thin wrappers.

How a run stays correct when it is interrupted, repeated or raced by another worker:

* what is missing is computed from the database (a pair lacks a :class:`Score` row for the
  configuration), again just before each batch, so a re-run or a duplicated task skips
  what is already there and an interrupted run resumes where it stopped;
* model inference happens outside any transaction; the batch's rows are then inserted in one
  short transaction with ``bulk_create(ignore_conflicts=True)`` on the unique
  (pair, metric configuration) constraint, so a concurrent insert of the same score is
  dropped, never doubled;
* a pair deleted while its batch is computed is skipped at the store, the batch's other scores
  kept (a deletion committed after the store read the live pairs makes the commit fail on the
  foreign key: the store reads again, once);
* a pair the metric cannot score (``score_many`` returns an error for it) is stored as
  ``failed`` with the error text, so it is visible and can be retried from the admin;
* when the metric cannot run at all (:class:`MetricUnavailable`: no WordNet, no model file),
  the batch's pairs are stored as ``failed`` with the reason too. Leaving them pending would
  make the sweep queue them again every minute without ever saying why; a failed score says
  why, and staff retry it from the admin once the cause is fixed;
* a metric has a time limit per batch and a crash budget (:mod:`scoring.pipeline.limits`): a
  batch past its limit is stored as failed with the reason, and a batch whose computation
  killed its worker process ``PARAEVAL_METRIC_CRASH_BUDGET`` times (counted in the database by
  :mod:`scoring.pipeline.attempts`) is stored as failed instead of being tried again. Within a
  task, the metrics that killed a worker before go last, so a crashing plug-in does not take
  the other metrics of the same pairs down with it again;
* a plug-in metric no longer in the worker's ``PARAEVAL_METRICS`` is not computed: its queued
  work is dropped (and queued again by the sweep if the metric comes back).

Training pairs are never scored.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotate.models import Campaign, Pair
from scoring.metrics.base import Metric, MetricUnavailable, ScoreOutcome
from scoring.models import EXTERNAL_QUEUE, MetricConfig, Score
from scoring.pipeline import attempts as attempt_rows
from scoring.pipeline import configs, limits, pending

logger = logging.getLogger(__name__)

# Longest error text stored with a failed score (a traceback-sized message is not useful).
MAX_ERROR_LENGTH = 2000


@dataclass
class RunSummary:
    """What one run did, for one metric configuration (also its progress while it runs)."""

    metric: str
    label: str
    config_hash: str
    total: int = 0  # pairs lacking a score when the run started
    processed: int = 0  # of those, how many the run went through
    scored: int = 0  # new scores stored with a value
    failed: int = 0  # new scores stored as failed
    already_scored: int = 0  # scored meanwhile by someone else (or deleted): nothing to do
    batches: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)  # a few distinct error texts, for the log

    @property
    def pairs_per_second(self) -> float:
        return self.processed / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "pairs_per_second": round(self.pairs_per_second, 3)}


ProgressCallback = Callable[[RunSummary], None]


def missing_pair_ids(
    config: MetricConfig, *, pair_ids: Iterable[int] | None = None, campaign: Campaign | None = None
) -> list[int]:
    """Ids (ascending) of the scorable pairs in scope that have no score for ``config``."""
    return pending.missing_pair_ids(config.pk, pair_ids=pair_ids, campaign=campaign, language=config.language)


def score_missing(
    metric: Metric,
    *,
    pair_ids: Iterable[int] | None = None,
    campaign: Campaign | None = None,
    batch_size: int | None = None,
    progress: ProgressCallback | None = None,
    attempts: int = 1,
) -> RunSummary:
    """Score, in batches, every pair in scope that lacks a score for ``metric``'s configuration.

    The scope is ``pair_ids`` or a ``campaign`` (or both: their intersection). Returns what was
    done. Safe to run again and concurrently with other runs: nothing is scored or stored twice.
    """
    if pair_ids is None and campaign is None:
        raise ValueError("score_missing needs pair_ids or a campaign")
    size = batch_size or settings.PARAEVAL_SCORING_BATCH_SIZE
    if size < 1:
        raise ValueError(f"batch_size must be at least 1, got {size}")
    config = configs.ensure_metric_config(metric)
    ids = missing_pair_ids(config, pair_ids=pair_ids, campaign=campaign)
    summary = RunSummary(metric=metric.name, label=config.label, config_hash=config.config_hash, total=len(ids))
    started = time.perf_counter()
    if progress:
        progress(summary)
    for chunk in pending.chunked(ids, size):
        _run_batch(metric, config, chunk, summary, attempts)
        summary.seconds = time.perf_counter() - started
        if progress:
            progress(summary)
    summary.seconds = time.perf_counter() - started
    return summary


def _run_batch(metric: Metric, config: MetricConfig, chunk: list[int], summary: RunSummary, attempts: int) -> None:
    # Look again: another worker may have scored some of these since the run started.
    rows = list(
        pending.scorable_pairs()
        .filter(id__in=chunk)
        .filter(pending.lacking_score(config.pk))
        .order_by("id")
        .values_list("id", "source", "hypothesis")
    )
    summary.batches += 1
    summary.processed += len(chunk)
    summary.already_scored += len(chunk) - len(rows)
    if not rows:
        pending.clear_queued(config.pk, chunk)
        return
    # Written (and committed) before the computation: if it kills this process, the next
    # attempt finds these rows and counts a death.
    started = [pair_id for pair_id, _, _ in rows]
    deaths = attempt_rows.begin(config.pk, started)
    try:
        budget = limits.crash_budget()
        spent = {pair_id for pair_id in started if deaths.get(pair_id, 0) >= budget}
        if spent:
            reason = limits.crashed_reason(metric.name, max(deaths[pair_id] for pair_id in spent))
            logger.error("%s: %s; %d scores stored as failed", config.label, reason, len(spent))
            given_up = [ScoreOutcome(None, reason)] * len(spent)
            _count(summary, given_up, store_outcomes(config, sorted(spent), given_up, attempts=attempts))
            rows = [row for row in rows if row[0] not in spent]
        if rows:
            texts = [(source, hypothesis) for _, source, hypothesis in rows]
            outcomes = compute(metric, texts, time_limit=limits.time_limit(metric.name))
            ids = [pair_id for pair_id, _, _ in rows]
            _count(summary, outcomes, store_outcomes(config, ids, outcomes, attempts=attempts))
    except Exception:
        # This process survived (a database error, retried by the task): not a death.
        with contextlib.suppress(Exception):
            attempt_rows.undo(config.pk, started)
        raise


def _count(summary: RunSummary, outcomes: Sequence[ScoreOutcome], stored: Stored) -> None:
    summary.scored += stored.scored
    summary.failed += stored.failed
    summary.already_scored += stored.skipped
    for outcome in outcomes:
        if outcome.error and outcome.error not in summary.errors and len(summary.errors) < 5:
            summary.errors.append(outcome.error)


def compute(metric: Metric, texts: list[tuple[str, str]], *, time_limit: int | None = None) -> list[ScoreOutcome]:
    """Run the metric on a batch (no database access, no transaction): one outcome per pair.

    ``time_limit``: seconds the batch may take (:func:`scoring.pipeline.limits.deadline`); past
    it every pair of the batch fails with the reason.
    """
    try:
        if time_limit is None:
            return metric.score_many(texts)
        with limits.deadline(time_limit):
            return metric.score_many(texts)
    except limits.MetricTimeLimitExceeded as exceeded:
        reason = limits.timed_out_reason(metric.name, exceeded.seconds)
        logger.error("%s on a batch of %d pairs: %s", metric.label, len(texts), reason)
        return [ScoreOutcome(None, reason) for _ in texts]
    except MetricUnavailable as error:
        reason = f"metric unavailable: {error}"
        logger.error("%s cannot run here: %s", metric.label, error)
        return [ScoreOutcome(None, reason) for _ in texts]
    except Exception as error:  # score_many re-raises a one-pair batch's error
        logger.exception("%s failed on a batch of %d pairs", metric.label, len(texts))
        return [ScoreOutcome(None, f"{type(error).__name__}: {error}") for _ in texts]


@dataclass(frozen=True)
class Stored:
    scored: int
    failed: int
    skipped: int  # already there (another run), or the pair was deleted meanwhile


def store_outcomes(
    config: MetricConfig, pair_ids: Sequence[int], outcomes: Sequence[ScoreOutcome], *, attempts: int = 1
) -> Stored:
    """Insert one score row per pair in a short transaction; existing rows are left alone."""
    if len(pair_ids) != len(outcomes):
        raise ValueError(f"{len(outcomes)} outcomes for {len(pair_ids)} pairs")
    try:
        rows = _insert_scores(config, pair_ids, outcomes, attempts)
    except IntegrityError:
        # A pair deleted on another connection after the read of the live pairs: PostgreSQL
        # checks the foreign key at commit and refuses the whole batch. Read again, once: the
        # deleted pair is skipped, the others stored.
        rows = _insert_scores(config, pair_ids, outcomes, attempts)
    scored = sum(1 for row in rows if row.status == Score.Status.DONE)
    return Stored(scored=scored, failed=len(rows) - scored, skipped=len(pair_ids) - len(rows))


def _insert_scores(
    config: MetricConfig, pair_ids: Sequence[int], outcomes: Sequence[ScoreOutcome], attempts: int
) -> list[Score]:
    now = timezone.now()
    with transaction.atomic():
        live = set(Pair.objects.filter(id__in=list(pair_ids)).values_list("id", flat=True))
        present = set(
            Score.objects.filter(metric_config=config, pair_id__in=list(pair_ids)).values_list("pair_id", flat=True)
        )
        rows = [
            Score(
                pair_id=pair_id,
                metric_config=config,
                value=outcome.value if outcome.ok else None,
                status=Score.Status.DONE if outcome.ok else Score.Status.FAILED,
                error="" if outcome.ok else _clip(outcome.error or "unknown error"),
                attempts=attempts,
                computed_at=now,
            )
            for pair_id, outcome in zip(pair_ids, outcomes, strict=True)
            if pair_id in live and pair_id not in present
        ]
        # The unique (pair, metric_config) constraint drops a row a concurrent run inserted
        # after our read: stored once, whatever the interleaving.
        Score.objects.bulk_create(rows, ignore_conflicts=True)
        # Stored (or stored by someone else, or the pair is gone): no longer outstanding.
        pending.clear_queued(config.pk, pair_ids)
        attempt_rows.finish(config.pk, pair_ids)
    return rows


def mark_failed(config: MetricConfig, pair_ids: Iterable[int], error: str, *, attempts: int = 1) -> Stored:
    """Store ``failed`` scores, with ``error``, for the pairs in scope that still lack one."""
    missing = missing_pair_ids(config, pair_ids=pair_ids)
    outcomes = [ScoreOutcome(None, error) for _ in missing]
    return store_outcomes(config, missing, outcomes, attempts=attempts)


def score_config_batch(
    config_id: int, pair_ids: Sequence[int], *, attempts: int = 1, take_along: int | None = 0
) -> RunSummary | None:
    """Score ``pair_ids`` for the stored configuration ``config_id`` (what a worker task does).

    ``take_along``: also score other queued pairs still missing this configuration (oldest
    first), up to that many pairs in all (``None``: :func:`take_along_size` of its queue): a
    model scores a batch of pairs in little more time than one, so the pairs of the tasks
    waiting behind this one are scored now, and their own tasks find them done.

    The worker builds the metric from its own settings; if that does not give the stored
    configuration (a worker started with another model or template than the web process),
    the pairs are stored as failed with an explanation instead of mixing configurations.
    Returns ``None`` when the configuration no longer exists.
    """
    config = MetricConfig.objects.filter(pk=config_id).first()
    if config is None:
        logger.warning("metric configuration %s no longer exists; %d pairs skipped", config_id, len(pair_ids))
        pending.clear_queued(config_id, pair_ids)
        return None
    if config.queue == EXTERNAL_QUEUE:
        # Imported scores (scoring.external.score_import): there is nothing to compute, ever.
        logger.warning("configuration %s holds imported scores; a worker never computes it", config.label)
        pending.clear_queued(config_id, pair_ids)
        return None
    if configs.is_dropped(config):
        # A plug-in removed from the settings (one that misbehaved, taken out): its queued work is
        # dropped, not computed, and comes back through the sweep if it is configured again.
        logger.warning(
            "%s is not in this worker's PARAEVAL_METRICS; %d queued scores dropped", config.label, len(pair_ids)
        )
        pending.clear_queued(config_id, pair_ids)
        attempt_rows.finish(config_id, pair_ids)
        return None
    try:
        metric = _metric_for(config)
    except Exception as error:  # noqa: BLE001 - an unbuildable metric fails its pairs, with the reason
        reason = f"metric unavailable: cannot build {config.metric!r} on this worker: {error}"
        return _fail_all(config, pair_ids, reason, attempts=attempts)
    if metric.config_hash != config.config_hash:
        message = (
            f"configuration mismatch: this worker's settings give {metric.label} with configuration "
            f"{metric.identity()} (hash {metric.config_hash[:12]}), but the task asks for {config.label} with "
            f"{config.config} (hash {config.config_hash[:12]}); start workers with the same metric settings "
            "as the web process"
        )
        logger.error(message)
        return _fail_all(config, pair_ids, message, attempts=attempts)
    limit = take_along_size(config.queue) if take_along is None else take_along
    if limit > len(pair_ids):
        more = pending.queued_pair_ids(
            config.pk, limit=limit - len(pair_ids), exclude=pair_ids, language=config.language
        )
        pair_ids = [*pair_ids, *more]
    return score_missing(metric, pair_ids=pair_ids, attempts=attempts)


def take_along_size(queue: str) -> int:
    """How many pairs in all a task on ``queue`` scores for one configuration, queued ones included.

    Every queue takes along: one worker serves several queues in turn, and a queue whose task
    scored only its own pair fell behind the others by the batch factor (measured under load:
    the lexical metrics at one pair per 12 s ParaPLUIE task, which scored eight, so few pairs
    ever had all their scores). The cheap ``cpu`` metrics take a whole batch
    (``PARAEVAL_SCORING_BATCH_SIZE``); the model queues ``PARAEVAL_SCORING_TAKE_ALONG``, which
    bounds a task's time. ``PARAEVAL_SCORING_TAKE_ALONG=0`` turns it off everywhere.
    """
    along = settings.PARAEVAL_SCORING_TAKE_ALONG
    if queue == "cpu" and along > 0:
        return max(along, settings.PARAEVAL_SCORING_BATCH_SIZE)
    return along


def score_configs(config_ids: Sequence[int], pair_ids: Sequence[int], *, attempts: int = 1) -> list[RunSummary]:
    """:func:`score_config_batch` for each configuration in turn (one ``score_pairs`` task), taking
    along queued pairs (:func:`take_along_size`)."""
    summaries = []
    # Metrics that killed a worker on these pairs before go last: the others are stored first.
    suspects = attempt_rows.unfinished_configs(config_ids, pair_ids)
    for config_id in sorted(config_ids, key=lambda config_id: config_id in suspects):
        summary = score_config_batch(config_id, pair_ids, attempts=attempts, take_along=None)
        if summary is not None:
            summaries.append(summary)
    return summaries


def _metric_for(config: MetricConfig) -> Metric:
    # The enabled metrics are built once per process and reused, with whatever they keep
    # between calls; a configuration no longer enabled is built afresh.
    enabled, _ = configs.build_enabled()
    for metric in enabled:
        if metric.config_hash == config.config_hash:
            return metric
    # Its spec (e.g. parapluie_fs_direct[model=mistral], bleu[lowercase=false]) rebuilds it.
    return configs.build(config.spec or config.metric)


def _fail_all(config: MetricConfig, pair_ids: Sequence[int], error: str, *, attempts: int = 1) -> RunSummary:
    stored = mark_failed(config, pair_ids, error, attempts=attempts)
    return RunSummary(
        metric=config.metric,
        label=config.label,
        config_hash=config.config_hash,
        total=len(pair_ids),
        processed=len(pair_ids),
        failed=stored.failed,
        already_scored=stored.skipped,
        errors=[error],
    )


def _clip(text: str) -> str:
    return text if len(text) <= MAX_ERROR_LENGTH else text[: MAX_ERROR_LENGTH - 1] + "…"
