"""Bring your own metric's scores: a file of precomputed scores becomes an external configuration.

A researcher who computed a metric elsewhere uploads one file per metric version (CSV or
JSONL): each line names a pair of the campaign, by its id or its external id, and gives its
score. The metric's name, version, direction (higher or lower is closer) and natural
threshold are given once for the file. Everything is checked before anything is stored: one
bad line and nothing is stored, and every problem is named with its line.

Each file becomes an *external* :class:`~scoring.models.MetricConfig` (queue
:data:`EXTERNAL_QUEUE`, no spec): its signature, hashed into ``config_hash``, is the name, the
version, the options and a SHA-256 of the (pair id, score) list, so the same file twice is
the same configuration (nothing changes the second time) and another version, or other
scores, is another configuration. The analyses read every configuration that has scores in a
campaign, so an imported one appears beside the computed ones on the dashboard, in the paired
tests, the clusters, the system view, the exports and the API. No worker ever computes it:
dispatch only queues the enabled metrics of ``PARAEVAL_METRICS``, and a worker handed an
external configuration refuses it (:func:`scoring.pipeline.runner.score_config_batch`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotate.models import Campaign, Pair
from scoring.metrics.base import config_hash
from scoring.models import EXTERNAL_QUEUE, MetricConfig, Score

# How many problems a refusal lists in full (the rest are counted).
MAX_PROBLEMS = 50
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
_ID_COLUMNS = ("pair_id", "external_id")
DIRECTIONS = {"higher": True, "↑": True, "up": True, "lower": False, "↓": False, "down": False}


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the file: its line (0: the file as a whole) and what is wrong."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


class ScoreImportError(ValueError):
    """The file was refused; ``problems`` names every problem found (nothing was stored)."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        shown = [str(problem) for problem in problems[:MAX_PROBLEMS]]
        more = len(problems) - len(shown)
        super().__init__("; ".join(shown) + (f"; and {more} more" if more > 0 else ""))


@dataclass(frozen=True)
class ScoreFileMetric:
    """What is given once for the file: the metric's identity and how to read its scores."""

    name: str
    version: str
    higher_is_closer: bool = True
    natural_threshold: float | None = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ScoreImportResult:
    """The configuration the file became; ``created`` is False when the same file was imported before."""

    config: MetricConfig
    created: bool
    scores: int

    def as_dict(self) -> dict[str, object]:
        return {
            "metric_config": self.config.pk,
            "config_hash": self.config.config_hash,
            "metric": self.config.metric,
            "label": self.config.label,
            "created": self.created,
            "scores": self.scores,
        }


def parse_direction(text: str) -> bool:
    """``higher``/``↑`` -> True (higher is closer), ``lower``/``↓`` -> False; ValueError otherwise."""
    key = text.strip().lower()
    if key not in DIRECTIONS:
        raise ValueError(f"direction must be higher (↑) or lower (↓), got {text!r}")
    return DIRECTIONS[key]


def parse_options(text: str) -> dict[str, Any]:
    """The metric's settings from their JSON text (empty: none); ValueError naming what is wrong."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as error:
        raise ValueError(f'options must be a JSON object, e.g. {{"model": "x"}}: not JSON ({error})') from None
    if not isinstance(value, dict):
        raise ValueError(f'options must be a JSON object, e.g. {{"model": "x"}}, got {type(value).__name__}')
    return value


def check_metric(metric: ScoreFileMetric) -> list[Problem]:
    """Problems with the file's metric description (name, version, threshold)."""
    from scoring.pipeline.configs import known_metric_names

    problems = []
    if not _NAME.match(metric.name):
        problems.append(
            Problem(0, f"metric name {metric.name!r}: use letters, digits, _ . - (at most 64, a letter first)")
        )
    elif metric.name in known_metric_names():
        problems.append(Problem(0, f"metric name {metric.name!r} is a built-in metric's; choose another name"))
    if not metric.version.strip() or len(metric.version) > 64:
        problems.append(Problem(0, "metric version is required (at most 64 characters), e.g. 1.0 or 2024-05-01"))
    if metric.natural_threshold is not None and not math.isfinite(metric.natural_threshold):
        problems.append(Problem(0, f"natural threshold must be a finite number, got {metric.natural_threshold}"))
    return problems


def _rows(data: bytes, filename: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) of a CSV (header line) or JSONL file; a bad line yields a Problem record."""
    text = data.decode("utf-8-sig")
    if filename.lower().endswith((".jsonl", ".ndjson", ".json")):
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                yield number, {"__problem__": f"not JSON: {error.msg}"}
                continue
            if not isinstance(record, dict):
                yield number, {"__problem__": 'expected a JSON object such as {"pair_id": 12, "score": 0.5}'}
                continue
            yield number, record
        return
    reader = csv.DictReader(io.StringIO(text, newline=""))
    for record in reader:
        if not any((value or "").strip() for value in record.values() if isinstance(value, str)):
            continue
        yield reader.line_num, record


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:  # an integer beyond any float
            return math.inf
    if isinstance(value, str) and value.strip():
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def read_scores(campaign: Campaign, data: bytes, filename: str) -> dict[int, float]:
    """The file's scores by pair id, or :class:`ScoreImportError` naming every bad line.

    A line names its pair by ``pair_id`` (the pair's id) or ``external_id`` (its id in the
    imported pair file) and gives ``score``, a finite number.
    """
    problems: list[Problem] = []
    try:
        rows = list(_rows(data, filename))
    except UnicodeDecodeError:
        raise ScoreImportError([Problem(0, "the file is not UTF-8 text")]) from None
    except csv.Error as error:
        raise ScoreImportError([Problem(0, f"not a readable CSV file: {error}")]) from None
    if not rows:
        raise ScoreImportError([Problem(0, "the file has no scores")])
    if not filename.lower().endswith((".jsonl", ".ndjson", ".json")):
        columns = set(rows[0][1])
        if "score" not in columns or not columns & set(_ID_COLUMNS):
            raise ScoreImportError(
                [Problem(1, f"the header must have a score column and pair_id or external_id; found {sorted(columns)}")]
            )
    wanted_ids: set[int] = set()
    wanted_external: set[str] = set()
    parsed: list[tuple[int, int | None, str | None, float]] = []
    for line, record in rows:
        if "__problem__" in record:
            problems.append(Problem(line, str(record["__problem__"])))
            continue
        raw_id, raw_external = record.get("pair_id"), record.get("external_id")
        pair_id: int | None = None
        external: str | None = None
        if raw_id not in (None, ""):
            number = _number(raw_id)
            if number is None or not number.is_integer() or not 1 <= number < 2**63:
                problems.append(Problem(line, f"pair_id {raw_id!r} is not a pair id (a positive integer)"))
                continue
            pair_id = int(number)
            wanted_ids.add(pair_id)
        elif raw_external not in (None, ""):
            external = str(raw_external).strip()
            wanted_external.add(external)
        else:
            problems.append(Problem(line, "no pair_id or external_id"))
            continue
        raw_score = record.get("score")
        score = _number(raw_score)
        if score is None:
            problems.append(Problem(line, f"score {raw_score!r} is not a number"))
            continue
        if not math.isfinite(score):
            problems.append(Problem(line, f"score {raw_score!r} is not finite"))
            continue
        parsed.append((line, pair_id, external, score))
    campaign_of = dict(Pair.objects.filter(id__in=wanted_ids).values_list("id", "campaign__slug"))
    by_external = dict(
        Pair.objects.filter(campaign=campaign, external_id__in=wanted_external).values_list("external_id", "id")
    )
    scores: dict[int, float] = {}
    first_line: dict[int, int] = {}
    first_named: dict[int, str] = {}
    for line, pair_id, external, score in parsed:
        if pair_id is not None:
            slug = campaign_of.get(pair_id)
            if slug is None:
                problems.append(Problem(line, f"unknown pair: no pair has id {pair_id}"))
                continue
            if slug != campaign.slug:
                problems.append(Problem(line, f"pair {pair_id} belongs to campaign {slug!r}, not {campaign.slug!r}"))
                continue
            key = pair_id
        else:
            assert external is not None
            found = by_external.get(external)
            if found is None:
                problems.append(
                    Problem(line, f"unknown pair: campaign {campaign.slug!r} has no external id {external!r}")
                )
                continue
            key = found
        # Named as the file names it (its external_id or pair_id), never by an id the file does not show.
        named = f"pair_id {pair_id}" if pair_id is not None else f"external_id {external!r}"
        if key in scores:
            first = f"line {first_line[key]}" + (f" ({first_named[key]})" if first_named[key] != named else "")
            problems.append(Problem(line, f"duplicate: {named} already has a score on {first}"))
            continue
        scores[key] = score
        first_line[key] = line
        first_named[key] = named
    if problems:
        raise ScoreImportError(sorted(problems, key=lambda problem: problem.line))
    return scores


def scores_hash(scores: dict[int, float]) -> str:
    """SHA-256 of the (pair id, score) list, in pair order, scores written exactly (``repr``)."""
    payload = "\n".join(f"{pair_id}\t{scores[pair_id]!r}" for pair_id in sorted(scores))
    return hashlib.sha256(payload.encode("ascii")).hexdigest()


def signature(metric: ScoreFileMetric, scores: dict[int, float]) -> dict[str, Any]:
    """The configuration stored for an imported file: what identifies it, hashed into ``config_hash``."""
    return {
        "external": True,
        "version": metric.version,
        "options": metric.options,
        "scores_sha256": scores_hash(scores),
        "scores": len(scores),
        "higher_is_closer": metric.higher_is_closer,
        "natural_threshold": metric.natural_threshold,
    }


def import_scores(campaign: Campaign, data: bytes, filename: str, metric: ScoreFileMetric) -> ScoreImportResult:
    """Check the whole file, then store its configuration and every score in one transaction.

    Raises :class:`ScoreImportError` with every problem (nothing stored). The same file twice
    returns the existing configuration with ``created=False`` and stores nothing.
    """
    problems = check_metric(metric)
    if problems:
        raise ScoreImportError(problems)
    scores = read_scores(campaign, data, filename)
    config = signature(metric, scores)
    digest = config_hash(metric.name, config)
    existing = MetricConfig.objects.filter(config_hash=digest).first()
    if existing is not None:
        return ScoreImportResult(existing, created=False, scores=0)
    label = f"{metric.name} {metric.version} (imported)"
    if MetricConfig.objects.filter(label=label).exists():
        label = f"{label[:-1]}, {digest[:8]})"
    now = timezone.now()
    with transaction.atomic():
        row, created = MetricConfig.objects.get_or_create(
            config_hash=digest,
            defaults={
                "metric": metric.name,
                "config": config,
                "label": label[:200],
                "higher_is_closer": metric.higher_is_closer,
                "natural_threshold": metric.natural_threshold,
                "queue": EXTERNAL_QUEUE,
                "spec": "",
                "language": "",
            },
        )
        if not created:  # a concurrent import of the same file won
            return ScoreImportResult(row, created=False, scores=0)
        Score.objects.bulk_create(
            [
                Score(pair_id=pair_id, metric_config=row, value=value, status=Score.Status.DONE, computed_at=now)
                for pair_id, value in scores.items()
            ],
            batch_size=2000,
        )
    return ScoreImportResult(row, created=True, scores=len(scores))


def is_external(config: MetricConfig) -> bool:
    """Whether ``config`` came from an imported score file (never computed by a worker)."""
    return config.queue == EXTERNAL_QUEUE
