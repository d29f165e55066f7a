"""The rows of the two exports, read from the database in chunks (no writer knows the models).

Judgement level: one row per non-training judgement. Pair level: one row per non-training
pair, with the judges' summary (:func:`annotate.aggregation.verdict`) and one column per metric
configuration. Rows are plain dicts of JSON-compatible values (str, int, float, bool, None,
list of str); the writers decide how each becomes a CSV cell or a JSON value.

Reads stay bounded: pairs are read in chunks by id (:func:`by_id_chunks`), judgements streamed with
``.iterator(chunk_size=...)``, and
the label counts and scores are fetched per chunk of pairs, two queries per chunk
whatever the number of judges or metrics, and two more for the exclusion verdicts of the judges
a chunk meets first (:class:`ExclusionVerdicts`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from itertools import chain, islice, repeat
from typing import Any

from django.db.models import QuerySet

from annotate.aggregation import PairVerdict, verdict
from annotate.exports.scores import score_source
from annotate.labels import LABEL_ORDER, Label, is_paraphrase
from annotate.models import Campaign, Judgement, Pair
from annotate.pseudonyms import volunteer_pseudonym
from annotate.quality import VolunteerQuality, rule_verdicts

Row = dict[str, Any]

DEFAULT_CHUNK_SIZE = 1000

JUDGEMENT_COLUMNS: tuple[str, ...] = (
    "campaign",
    "judgement_id",
    "pair_id",
    "external_id",
    "origin",
    "source",
    "hypothesis",
    "top_sentence",
    "position",
    "label",
    "binary_label",
    "volunteer",
    "participant",
    "english_level",
    "excluded",
    "exclusion_reason",
    "shown_at",
    "answered_at",
    "response_seconds",
)

# Label count columns, in the order of the answer buttons.
COUNT_COLUMNS: dict[Label, str] = {label: f"n_{label.value}" for label in LABEL_ORDER}

# Never call a column "label" or "id" here: the importer reads those as a gold label and an
# external id, and a re-imported pair-level export must only bring back what it exported.
PAIR_COLUMNS: tuple[str, ...] = (
    "campaign",
    "pair_id",
    "external_id",
    "origin",
    "system",
    "source",
    "hypothesis",
    "gold_label",
    "gold_score",
    "judgements",
    "excluded_judgements",
    *COUNT_COLUMNS.values(),
    "majority_label",
    "label_tie",
    "binary_label",
    "binary_tie",
    "mean_ordinal",
)
FAILED_SCORES_COLUMN = "failed_scores"


def by_id_chunks(rows: QuerySet[Any, tuple[Any, ...]], size: int) -> Iterator[list[tuple[Any, ...]]]:
    """``rows`` (a ``values_list`` whose first value is the id, in id order) ``size`` at a time,
    each chunk one statement that starts after the last id of the one before (an index range).

    Not ``.iterator()``: on PostgreSQL outside a transaction that is a ``WITH HOLD`` cursor, which
    the server materialises whole before the first row comes back (a million pairs' texts
    before the first line of the download)."""
    after = None
    while True:
        chunk = list((rows if after is None else rows.filter(id__gt=after))[:size])
        if not chunk:
            return
        yield chunk
        after = chunk[-1][0]


def _timestamp(value: datetime) -> str:
    return value.isoformat()


def _finite(value: float | None) -> float | None:
    """A number, or None for a missing or non-finite one (JSON has no NaN)."""
    if value is None or not math.isfinite(value):
        return None
    return value


class ExclusionVerdicts:
    """Who the campaign's exclusion rule (or staff) leaves out, found as the export meets each
    volunteer.

    Whether a volunteer is excluded reads only that volunteer's own judgements and record
    (:func:`annotate.quality.rule_verdicts`; it never reads the agreement with others), so each
    chunk asks only for the judges it holds that earlier chunks did not: an export's first rows
    wait for their own judges, not for a pass over the whole campaign, and every verdict is that
    of the data as the export reads it. A caller that already holds the campaign's verdicts
    passes them as ``known``.
    """

    def __init__(self, campaign: Campaign, known: Sequence[VolunteerQuality] | None = None) -> None:
        self.campaign = campaign
        self.found: dict[int, VolunteerQuality] = {verdict.volunteer_id: verdict for verdict in known or ()}
        self.complete = known is not None

    def of(self, volunteer_ids: Iterable[int]) -> dict[int, VolunteerQuality]:
        """The verdicts of ``volunteer_ids`` (two indexed statements for those not met before)."""
        wanted = set(volunteer_ids)
        missing = set() if self.complete else wanted - self.found.keys()
        if missing:
            self.found.update(rule_verdicts(self.campaign, missing))
        return {volunteer_id: self.found[volunteer_id] for volunteer_id in wanted if volunteer_id in self.found}


# --- Judgement level -------------------------------------------------------------------------


def judgement_rows(
    campaign: Campaign, *, chunk_size: int = DEFAULT_CHUNK_SIZE, verdicts: Sequence[VolunteerQuality] | None = None
) -> Iterator[Row]:
    """One row per corpus judgement of ``campaign`` (no training, no check), in the order stored.

    The volunteer appears as a pseudonym (:func:`volunteer_pseudonym`), never as the token; a
    crowd-platform participant id likewise. ``excluded`` and ``exclusion_reason`` say whether
    the campaign's exclusion rule (or staff) leaves the volunteer out (:mod:`annotate.quality`):
    from ``verdicts`` when the caller has every one of them, else from each chunk's judges' own
    judgements (:class:`ExclusionVerdicts`).
    """
    exclusions = ExclusionVerdicts(campaign, verdicts)
    judgements = (
        Judgement.objects.filter(pair__campaign=campaign, is_training=False, is_check=False)
        .filter(pair__is_training=False, pair__is_check=False)
        .order_by("id")
        .values_list(
            "id",
            "pair_id",
            "pair__external_id",
            "pair__origin",
            "pair__source",
            "pair__hypothesis",
            "source_on_top",
            "position",
            "label",
            "volunteer_id",
            "volunteer__token",
            "volunteer__participant_id",
            "volunteer__english_level",
            "shown_at",
            "answered_at",
        )
    )
    pseudonyms: dict[int, str] = {}  # one hash per volunteer, not per judgement
    rows = judgements.iterator(chunk_size=chunk_size)
    for chunk in iter(lambda: list(islice(rows, chunk_size)), []):  # lists of chunk_size rows
        yield from _judgement_chunk(campaign, chunk, exclusions.of(row[9] for row in chunk), pseudonyms)


def _judgement_chunk(
    campaign: Campaign,
    chunk: list[tuple[Any, ...]],
    by_volunteer: dict[int, VolunteerQuality],
    pseudonyms: dict[int, str],
) -> Iterator[Row]:
    for (
        judgement_id,
        pair_id,
        external_id,
        origin,
        source,
        hypothesis,
        source_on_top,
        position,
        label,
        volunteer_id,
        token,
        participant_id,
        english_level,
        shown_at,
        answered_at,
    ) in chunk:
        pseudonym = pseudonyms.get(volunteer_id)
        if pseudonym is None:
            pseudonym = pseudonyms[volunteer_id] = volunteer_pseudonym(token)
        verdict = by_volunteer.get(volunteer_id)
        yield {
            "campaign": campaign.slug,
            "judgement_id": judgement_id,
            "pair_id": pair_id,
            "external_id": external_id,
            "origin": origin,
            "source": source,
            "hypothesis": hypothesis,
            "top_sentence": "source" if source_on_top else "hypothesis",
            "position": position,
            "label": label,
            "binary_label": is_paraphrase(label),
            "volunteer": pseudonym,
            "participant": volunteer_pseudonym(participant_id) if participant_id else "",
            "english_level": english_level,
            "excluded": verdict.excluded if verdict else False,
            "exclusion_reason": verdict.exclusion_reason if verdict else "",
            "shown_at": _timestamp(shown_at),
            "answered_at": _timestamp(answered_at),
            "response_seconds": round((answered_at - shown_at).total_seconds(), 3),
        }


# --- Pair level ------------------------------------------------------------------------------


@dataclass(frozen=True)
class MetricColumn:
    """One metric configuration as a column of the pair-level export."""

    config_id: int
    name: str
    metric: str
    config_hash: str


def metric_columns(campaign: Campaign) -> list[MetricColumn]:
    """The metric configurations that scored at least one pair of ``campaign``, one column each.

    The header is the configuration's display label (``parapluie_fs_direct[SmolLM2-135M-Instruct]``);
    when two configurations share a label, or a label is already a column name, the start of the
    configuration hash (all of it if needed) is appended so every header stays unique.
    """
    configs = [
        (config.config_id, config.label, config.metric, config.config_hash)
        for config in score_source().configurations(campaign)
    ]
    label_counts: dict[str, int] = defaultdict(int)
    for _, label, _, _ in configs:
        label_counts[label] += 1
    taken = {*PAIR_COLUMNS, FAILED_SCORES_COLUMN}
    columns = []
    for config_id, label, metric, config_hash in configs:
        name = label or metric
        if label_counts[label] > 1 or name in taken:
            short = f"{name}#{config_hash[:8]}"
            name = short if short not in taken else f"{name}#{config_hash}"  # config_hash is unique
        taken.add(name)
        columns.append(MetricColumn(config_id=config_id, name=name, metric=metric, config_hash=config_hash))
    return columns


def pair_columns(metrics: Sequence[MetricColumn]) -> tuple[str, ...]:
    """Header of the pair-level export: fixed columns, one per metric, then the failures."""
    return (*PAIR_COLUMNS, *(column.name for column in metrics), FAILED_SCORES_COLUMN)


def _in_chunk(campaign: Campaign, first: int, last: int) -> dict[str, Any]:
    """Filter of the rows (judgements, scores) of the campaign's pairs with ids in ``[first, last]``.

    The id range lets PostgreSQL read the ``pair_id`` index of the judgements or scores; the
    subquery keeps only the campaign's non-training pairs. No ``IN (<1000 parameters>)`` to
    build per chunk, and no scan of the whole campaign.
    """
    pairs = Pair.objects.filter(campaign=campaign, is_training=False, is_check=False, id__gte=first, id__lte=last)
    return {"pair_id__gte": first, "pair_id__lte": last, "pair_id__in": pairs.values("id")}


def _label_counts(
    campaign: Campaign, first: int, last: int, exclusions: ExclusionVerdicts
) -> tuple[dict[int, dict[str, int]], dict[int, int]]:
    """Label counts of the pairs of one chunk, without the answers of the volunteers the rule
    excludes, and how many answers of theirs each pair had: one query for the chunk's judgements
    (a few judges per pair), the verdicts of the judges met here first."""
    counts: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    left_out: dict[int, int] = defaultdict(int)
    rows = list(
        Judgement.objects.filter(is_training=False, is_check=False, **_in_chunk(campaign, first, last))
        .order_by()
        .values_list("pair_id", "label", "volunteer_id")
    )
    verdicts = exclusions.of(volunteer_id for _, _, volunteer_id in rows)
    for pair_id, label, volunteer_id in rows:
        verdict = verdicts.get(volunteer_id)
        if verdict is not None and verdict.excluded:
            left_out[pair_id] += 1
        else:
            counts[pair_id][label] += 1
    return counts, left_out


def _scores(
    campaign: Campaign, first: int, last: int, metrics: Sequence[MetricColumn]
) -> dict[int, list[tuple[int, float | None, bool]]]:
    """Scores (config id, value, done) of the pairs of one chunk under ``metrics``: one query."""
    scores: dict[int, list[tuple[int, float | None, bool]]] = defaultdict(list)
    if not metrics:
        return scores
    rows = score_source().scores(_in_chunk(campaign, first, last), [m.config_id for m in metrics])
    for score in rows:
        scores[score.pair_id].append((score.config_id, score.value, score.done))
    return scores


@lru_cache(maxsize=4096)
def _summary(counts: tuple[int, ...]) -> PairVerdict:
    """:func:`verdict` of one pair from its label counts (in ``LABEL_ORDER``).

    Pure and memoised: a corpus has few distinct count vectors, so 100,000 pairs cost a few
    hundred verdicts.
    """
    return verdict(chain.from_iterable(repeat(label, n) for label, n in zip(LABEL_ORDER, counts, strict=True)))


def pair_rows(
    campaign: Campaign,
    metrics: Sequence[MetricColumn],
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    verdicts: Sequence[VolunteerQuality] | None = None,
) -> Iterator[Row]:
    """One row per non-training pair of ``campaign`` (by id), judged or not.

    Label counts, majority and binary labels and the mean ordinal score come from the pair's
    non-training judgements through :func:`annotate.aggregation.verdict`, leaving out the
    volunteers the campaign's exclusion rule (or staff) exclude (:mod:`annotate.quality`);
    ``excluded_judgements`` says how many answers that left out (they stay in the
    judgement-level export, marked ``excluded``; who is excluded comes from ``verdicts`` as in
    :func:`judgement_rows`). A metric column holds
    the score, or is empty when the score is missing (not computed yet) or failed; the failed
    configurations of the pair are listed in ``failed_scores``.
    """
    names = {metric.config_id: metric.name for metric in metrics}
    positions = {metric.name: index for index, metric in enumerate(metrics)}
    pairs = (
        Pair.objects.filter(campaign=campaign, is_training=False, is_check=False)
        .order_by("id")
        .values_list("id", "external_id", "origin", "system", "source", "hypothesis", "gold_label", "gold_score")
    )
    exclusions = ExclusionVerdicts(campaign, verdicts)
    no_judgements: dict[str, int] = {}
    for chunk in by_id_chunks(pairs, chunk_size):
        first, last = chunk[0][0], chunk[-1][0]
        counts, left_out = _label_counts(campaign, first, last, exclusions)
        scores = _scores(campaign, first, last, metrics)
        for pair_id, external_id, origin, system, source, hypothesis, gold_label, gold_score in chunk:
            pair_counts = counts.get(pair_id, no_judgements)
            summary = _summary(tuple(pair_counts.get(label.value, 0) for label in LABEL_ORDER))
            row: Row = {
                "campaign": campaign.slug,
                "pair_id": pair_id,
                "external_id": external_id,
                "origin": origin,
                "system": system,
                "source": source,
                "hypothesis": hypothesis,
                "gold_label": gold_label,
                "gold_score": _finite(gold_score),
                "judgements": summary.judgements,
                "excluded_judgements": left_out.get(pair_id, 0),
                **{column: summary.counts[label] for label, column in COUNT_COLUMNS.items()},
                "majority_label": summary.majority_label.value if summary.majority_label else None,
                "label_tie": summary.label_tie,
                "binary_label": summary.is_paraphrase,
                "binary_tie": summary.binary_tie,
                "mean_ordinal": summary.mean_ordinal,
            }
            row.update(dict.fromkeys(names.values()))
            failed = []
            for config_id, value, done in scores.get(pair_id, ()):
                if done:
                    row[names[config_id]] = _finite(value)
                else:
                    failed.append(names[config_id])
            row[FAILED_SCORES_COLUMN] = sorted(failed, key=positions.__getitem__)
            yield row
