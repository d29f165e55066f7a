"""Which scores are missing, and which of those are already queued: queries shared by web and worker.

The web side (dispatch, status) and the worker (runner) both ask these questions; they live
here so that web code never imports the worker's runner (nor, through it, the metrics). Only
Django models are imported.

A score is *missing* when a scorable pair has no :class:`Score` row for the configuration
(done or failed). It is *queued* when a :class:`QueuedScore` marker says a message carrying it
was sent and the worker has not stored it yet.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from annotate.models import Campaign, Pair
from scoring.models import QueuedScore, Score

# Ids per query when filtering on a list of ids (SQLite limits the number of parameters).
ID_CHUNK = 500
# Marker rows per INSERT.
MARKER_BATCH = 2000


def chunked(items: Sequence[int], size: int) -> Iterator[list[int]]:
    """``items`` in consecutive lists of at most ``size``."""
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def scorable_pairs(language: str = "") -> QuerySet[Pair]:
    """Pairs that get metric scores: every pair but the training trial's; with ``language``,
    only those of campaigns in that language (a ParaPLUIE template's language)."""
    pairs = Pair.objects.filter(is_training=False)
    return pairs.filter(campaign__language=language) if language else pairs


def applies(config_language: str, campaign_language: str) -> bool:
    """Whether a configuration for ``config_language`` ("" for any) scores a campaign's pairs."""
    return not config_language or config_language == campaign_language


def lacking_score(config_id: int) -> Any:
    """A filter on :class:`Pair` rows: true when the pair has no score for configuration ``config_id``."""
    return ~Exists(Score.objects.filter(pair=OuterRef("pk"), metric_config_id=config_id))


def queued(config_id: int, *, before: datetime | None = None) -> Exists:
    """A filter on :class:`Pair` rows: the pair has a marker for ``config_id`` (older than ``before``)."""
    markers = QueuedScore.objects.filter(pair_id=OuterRef("pk"), config_id=config_id)
    if before is not None:
        markers = markers.filter(queued_at__lt=before)
    return Exists(markers)


def missing_pair_ids(
    config_id: int,
    *,
    pair_ids: Iterable[int] | None = None,
    campaign: Campaign | None = None,
    language: str = "",
) -> list[int]:
    """Ids (ascending) of the scorable pairs in scope (of campaigns in ``language``, if given)
    that have no score for ``config_id``."""
    base = scorable_pairs(language).filter(lacking_score(config_id))
    if campaign is not None:
        base = base.filter(campaign=campaign)
    if pair_ids is None:
        return list(base.order_by("id").values_list("id", flat=True))
    wanted = sorted(set(pair_ids))
    found: list[int] = []
    for chunk in chunked(wanted, ID_CHUNK):
        found.extend(base.filter(id__in=chunk).values_list("id", flat=True))
    return sorted(found)


def _placeholders(count: int) -> str:
    return ", ".join(["%s"] * count)


def scorable_with_scores(
    pair_ids: Sequence[int], config_ids: Sequence[int], *, include_queued: bool = False
) -> list[tuple[int, str, frozenset[int]]]:
    """(pair id, its campaign's language, the configurations of ``config_ids`` it has a score for,
    or a marker unless ``include_queued``) for each scorable pair of ``pair_ids``: one statement.

    At most :data:`ID_CHUNK` pairs (their ids appear three times among the parameters). Written
    in SQL, not with querysets: for an answer's single pair, compiling three querysets cost more
    CPU than the database spent answering them.
    """
    if not pair_ids or not config_ids:
        return []
    quote = connection.ops.quote_name
    pairs, configs = _placeholders(len(pair_ids)), _placeholders(len(config_ids))
    have = f"SELECT pair_id, metric_config_id AS config_id FROM {quote(Score._meta.db_table)}"
    have += f" WHERE pair_id IN ({pairs}) AND metric_config_id IN ({configs})"
    params: list[int] = [*pair_ids, *config_ids]
    if not include_queued:
        have += f" UNION ALL SELECT pair_id, config_id FROM {quote(QueuedScore._meta.db_table)}"
        have += f" WHERE pair_id IN ({pairs}) AND config_id IN ({configs})"
        params += [*pair_ids, *config_ids]
    sql = (
        f"SELECT p.id, c.language, have.config_id FROM {quote(Pair._meta.db_table)} p"
        f" JOIN {quote(Campaign._meta.db_table)} c ON c.id = p.campaign_id"
        f" LEFT JOIN ({have}) have ON have.pair_id = p.id"
        f" WHERE p.id IN ({pairs}) AND NOT p.is_training"
    )
    found: dict[int, tuple[str, set[int]]] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, *pair_ids])
        for pair_id, language, config_id in cursor.fetchall():
            entry = found.setdefault(pair_id, (language, set()))
            if config_id is not None:
                entry[1].add(config_id)
    return [(pair_id, language, frozenset(held)) for pair_id, (language, held) in sorted(found.items())]


def mark_queued(pairs_by_config: dict[int, list[int]]) -> None:
    """Record that these (configuration -> pairs) scores were queued (existing markers are kept)."""
    now = timezone.now()
    rows = [
        QueuedScore(pair_id=pair_id, config_id=config_id, queued_at=now)
        for config_id, pair_ids in pairs_by_config.items()
        for pair_id in pair_ids
    ]
    QueuedScore.objects.bulk_create(rows, batch_size=MARKER_BATCH, ignore_conflicts=True)


def refresh_queued(pairs_by_config: dict[int, list[int]]) -> None:
    """Mark these scores queued *now*, whether they had a marker or not (the sweep re-sent stale
    markers; an answer re-sent its pair's scores in front of a backlog).

    One ``INSERT … ON CONFLICT DO UPDATE`` per batch of markers: an answer re-queues its pair
    for every metric, and an ``UPDATE`` per configuration cost eleven statements per answer.
    """
    wanted = sorted({(pair_id, config_id) for config_id, pair_ids in pairs_by_config.items() for pair_id in pair_ids})
    # Each (pair, configuration) once: PostgreSQL refuses to update one row twice in a statement.
    # Plain SQL: building and compiling eleven model instances was most of an answer's marker cost.
    table = connection.ops.quote_name(QueuedScore._meta.db_table)
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        for start in range(0, len(wanted), MARKER_BATCH):
            batch = wanted[start : start + MARKER_BATCH]
            cursor.execute(
                f"INSERT INTO {table} (pair_id, config_id, queued_at) VALUES {', '.join(['(%s, %s, %s)'] * len(batch))}"
                " ON CONFLICT (pair_id, config_id) DO UPDATE SET queued_at = excluded.queued_at",
                [value for pair_id, config_id in batch for value in (pair_id, config_id, now)],
            )


def clear_queued(config_id: int, pair_ids: Iterable[int]) -> None:
    """Forget the markers of these scores (stored, given up on, or never sent)."""
    for chunk in chunked(sorted(set(pair_ids)), ID_CHUNK):
        QueuedScore.objects.filter(config_id=config_id, pair_id__in=chunk).delete()


def clear_queued_many(pairs_by_config: dict[int, list[int]]) -> None:
    """:func:`clear_queued` for several configurations."""
    for config_id, pair_ids in pairs_by_config.items():
        clear_queued(config_id, pair_ids)


def drop_settled_markers() -> int:
    """Delete the markers whose score is there or whose pair is gone; returns how many."""
    settled = QueuedScore.objects.filter(
        Exists(Score.objects.filter(pair_id=OuterRef("pair_id"), metric_config_id=OuterRef("config_id")))
        | ~Exists(Pair.objects.filter(pk=OuterRef("pair_id")))
    )
    deleted, _ = settled.delete()
    return deleted


def drop_markers_except(config_ids: Iterable[int]) -> int:
    """Delete the markers of configurations not in ``config_ids`` (metrics taken out of the
    settings: their queued work is dropped, not computed); returns how many."""
    deleted, _ = QueuedScore.objects.exclude(config_id__in=list(config_ids)).delete()
    return deleted


def queued_pair_ids(config_id: int, *, limit: int, exclude: Iterable[int] = (), language: str = "") -> list[int]:
    """Oldest queued, still missing, scorable pairs of ``config_id`` (for a worker to take along)."""
    skip = set(exclude)
    rows = (
        scorable_pairs(language)
        .filter(queued(config_id), lacking_score(config_id))
        .order_by("id")
        .values_list("id", flat=True)[: limit + len(skip)]
    )
    return [pair_id for pair_id in rows if pair_id not in skip][:limit]
