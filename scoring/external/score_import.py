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
import heapq
import io
import json
import math
import re
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotate.models import Campaign, Pair
from paraeval.textcheck import TOO_DEEP, find_in_data, first_invalid, loads_bounded
from scoring.metrics.base import config_hash
from scoring.models import EXTERNAL_QUEUE, MetricConfig, Score

# How many problems a refusal lists in full (the rest are counted): a file wrong on each of its
# three million lines must not become a three-million-item answer (or list in memory).
MAX_PROBLEMS = 50
# Most pair ids or external ids a query names (beyond, the campaign's are read).
LOOKUP_CHUNK = 10_000
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
    """The file was refused (nothing was stored); ``problems`` are the first :data:`MAX_PROBLEMS`
    problems by line, ``total`` how many were found in all."""

    def __init__(self, problems: list[Problem], total: int | None = None) -> None:
        self.problems = problems[:MAX_PROBLEMS]
        self.total = len(problems) if total is None else total
        shown = [str(problem) for problem in self.problems]
        more = self.total - len(shown)
        super().__init__("; ".join(shown) + (f"; and {more} more" if more > 0 else ""))

    @property
    def more(self) -> int:
        """Problems found but not listed."""
        return self.total - len(self.problems)


class _Problems:
    """The problems of one file: the :data:`MAX_PROBLEMS` of the earliest lines, and a count.

    A pair id outside the campaign is named lazily (``add_outside``): which campaign holds it is
    looked up only for the problems that are listed, not for millions of lines.
    """

    def __init__(self) -> None:
        # A max-heap on (line, order) of the kept problems, by negated keys.
        self._kept: list[tuple[int, int, Problem | None, int]] = []
        self.total = 0

    def add(self, problem: Problem) -> None:
        self._keep(problem.line, problem, 0)

    def add_outside(self, line: int, pair_id: int) -> None:
        self._keep(line, None, pair_id)

    def _keep(self, line: int, problem: Problem | None, pair_id: int) -> None:
        self.total += 1
        entry = (-line, -self.total, problem, pair_id)
        if len(self._kept) < MAX_PROBLEMS:
            heapq.heappush(self._kept, entry)
        elif entry[:2] > self._kept[0][:2]:
            heapq.heapreplace(self._kept, entry)

    def error(self, campaign_slug: str, describe_outside: Callable[[set[int]], dict[int, str]]) -> ScoreImportError:
        """The refusal: the kept problems in line order, outside pair ids described."""
        entries = sorted(self._kept, key=lambda entry: (-entry[0], -entry[1]))
        slugs = describe_outside({pair_id for _, _, problem, pair_id in entries if problem is None})
        problems = []
        for negative_line, _, problem, pair_id in entries:
            if problem is None:
                slug = slugs.get(pair_id)
                message = (
                    f"unknown pair: no pair has id {pair_id}"
                    if slug is None
                    else f"pair {pair_id} belongs to campaign {slug!r}, not {campaign_slug!r}"
                )
                problem = Problem(-negative_line, message)
            problems.append(problem)
        return ScoreImportError(problems, self.total)


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
        # Bounded depth: options nested 1,000 deep would end in a RecursionError here, or later
        # when the signature is hashed or stored.
        value = loads_bounded(text)
    except json.JSONDecodeError as error:
        raise ValueError(f'options must be a JSON object, e.g. {{"model": "x"}}: not JSON ({error})') from None
    except ValueError:
        raise ValueError(f'options must be a JSON object, e.g. {{"model": "x"}}: {TOO_DEEP}') from None
    if not isinstance(value, dict):
        raise ValueError(f'options must be a JSON object, e.g. {{"model": "x"}}, got {type(value).__name__}')
    invalid = find_in_data(value)  # PostgreSQL's jsonb refuses \u0000
    if invalid is not None:
        raise ValueError(f"options: {invalid.message[0].lower()}{invalid.message[1:]}")
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
    elif first_invalid(metric.version) is not None:
        problems.append(Problem(0, f"metric version {metric.version!r}: {_unstorable(first_invalid(metric.version))}"))
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
                # Bounded depth: a line nested 1,000 deep is a problem of that line, not a
                # RecursionError (a 500); score lines are flat objects.
                record = loads_bounded(line)
            except json.JSONDecodeError as error:
                yield number, {"__problem__": f"not JSON: {error.msg}"}
                continue
            except ValueError:
                yield number, {"__problem__": f"not JSON: {TOO_DEEP}"}
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


def _unstorable(character: str | None) -> str:
    what = "a NUL character (U+0000)" if character == "\x00" else "a lone surrogate, which is not valid Unicode text"
    return f"contains {what}: remove it from the file and send it again"


def read_scores(campaign: Campaign, data: bytes, filename: str) -> dict[int, float]:
    """The file's scores by pair id, or :class:`ScoreImportError` naming the first bad lines.

    A line names its pair by ``pair_id`` (the pair's id) or ``external_id`` (its id in the
    imported pair file) and gives ``score``, a finite number. The file is read line by line
    into compact arrays and only the first :data:`MAX_PROBLEMS` problems are kept (the rest
    counted), so a file wrong on each of millions of lines costs seconds and little memory.
    """
    problems = _Problems()
    is_csv = not filename.lower().endswith((".jsonl", ".ndjson", ".json"))
    # What each good line gave: its number, its pair (an id, or -1 - the index of its external
    # id in ``externals``) and its score. Arrays, not tuples: a few bytes a line.
    lines, keys, values = array("q"), array("q"), array("d")
    externals: dict[str, int] = {}
    wanted_ids: set[int] = set()
    seen_any = False
    try:
        for line, record in _rows(data, filename):
            if is_csv and not seen_any:
                columns = set(record)
                if "score" not in columns or not columns & set(_ID_COLUMNS):
                    header = sorted(str(column) for column in columns)
                    message = f"the header must have a score column and pair_id or external_id; found {header}"
                    raise ScoreImportError([Problem(1, message)])
            seen_any = True
            problem = _read_line(record, line, lines, keys, values, externals, wanted_ids)
            if problem is not None:
                problems.add(problem)
    except UnicodeDecodeError:
        raise ScoreImportError([Problem(0, "the file is not UTF-8 text")]) from None
    except csv.Error as error:
        raise ScoreImportError([Problem(0, f"not a readable CSV file: {error}")]) from None
    if not seen_any:
        raise ScoreImportError([Problem(0, "the file has no scores")])
    in_campaign = _ids_in_campaign(campaign, wanted_ids)
    by_external = _external_ids(campaign, externals)
    external_names = list(externals)
    scores: dict[int, float] = {}
    first_line: dict[int, int] = {}
    # The key the file named each stored pair by (>= 0 a pair_id, < 0 an external_id's index).
    first_key: dict[int, int] = {}

    def named(key: int) -> str:
        # Named as the file names it (its external_id or pair_id), never by an id the file does not show.
        return f"pair_id {key}" if key >= 0 else f"external_id {external_names[-1 - key]!r}"

    for line, key, score in zip(lines, keys, values, strict=True):
        if key >= 0:
            if key not in in_campaign:
                problems.add_outside(line, key)
                continue
            pair_id = key
        else:
            external = external_names[-1 - key]
            found = by_external.get(external)
            if found is None:
                problems.add(Problem(line, f"unknown pair: campaign {campaign.slug!r} has no external id {external!r}"))
                continue
            pair_id = found
        if pair_id in scores:
            earlier = first_key[pair_id]
            first = f"line {first_line[pair_id]}" + (f" ({named(earlier)})" if earlier != key else "")
            problems.add(Problem(line, f"duplicate: {named(key)} already has a score on {first}"))
            continue
        scores[pair_id] = score
        first_line[pair_id] = line
        first_key[pair_id] = key
    if problems.total:
        raise problems.error(campaign.slug, _campaigns_of)
    return scores


def _read_line(
    record: dict[str, Any],
    line: int,
    lines: array[int],
    keys: array[int],
    values: array[float],
    externals: dict[str, int],
    wanted_ids: set[int],
) -> Problem | None:
    """Check one line and append what it gave to the arrays; its problem, if any."""
    if "__problem__" in record:
        return Problem(line, str(record["__problem__"]))
    raw_id, raw_external = record.get("pair_id"), record.get("external_id")
    if raw_id not in (None, ""):
        number = _number(raw_id)
        if number is None or not number.is_integer() or not 1 <= number < 2**63:
            return Problem(line, f"pair_id {raw_id!r} is not a pair id (a positive integer)")
        key = int(number)
        wanted_ids.add(key)
    elif raw_external not in (None, ""):
        external = str(raw_external).strip()
        # PostgreSQL refuses a NUL in any text it is asked to compare: name the line instead.
        invalid = first_invalid(external)
        if invalid is not None:
            return Problem(line, f"external_id {_unstorable(invalid)}")
        key = -1 - externals.setdefault(external, len(externals))
    else:
        return Problem(line, "no pair_id or external_id")
    raw_score = record.get("score")
    score = _number(raw_score)
    if score is None:
        return Problem(line, f"score {raw_score!r} is not a number")
    if not math.isfinite(score):
        return Problem(line, f"score {raw_score!r} is not finite")
    lines.append(line)
    keys.append(key)
    values.append(score)
    return None


def _ids_in_campaign(campaign: Campaign, wanted: set[int]) -> set[int]:
    """Which of the ``wanted`` pair ids are the campaign's, in one query.

    Beyond :data:`LOOKUP_CHUNK` ids the campaign's own ids are read instead: a query naming
    millions of ids took minutes, the campaign's ids a fraction of a second.
    """
    pairs = Pair.objects.filter(campaign=campaign)
    if len(wanted) > LOOKUP_CHUNK:
        return wanted & set(pairs.values_list("id", flat=True))
    return set(pairs.filter(id__in=wanted).values_list("id", flat=True))


def _external_ids(campaign: Campaign, wanted: dict[str, int]) -> dict[str, int]:
    """The campaign's pair id of each wanted external id it has, in one query (as above)."""
    pairs = Pair.objects.filter(campaign=campaign)
    if len(wanted) > LOOKUP_CHUNK:
        return {external: pair_id for external, pair_id in pairs.values_list("external_id", "id") if external in wanted}
    return dict(pairs.filter(external_id__in=list(wanted)).values_list("external_id", "id"))


def _campaigns_of(pair_ids: set[int]) -> dict[int, str]:
    """The campaign slug of each of these pair ids that exists (at most :data:`MAX_PROBLEMS` of them)."""
    return dict(Pair.objects.filter(id__in=pair_ids).values_list("id", "campaign__slug"))


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
