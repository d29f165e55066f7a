"""The PARAPHRASUS objectives of a campaign: stored per corpus (origin), read, computed, tabulated.

Shared by ``manage.py evaluate_metrics --paraphrasus``, ``manage.py corpus_objective``, the API
and the dashboard, so all of them show the same figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from django.db import transaction

from annotate.models import Campaign, CorpusObjective, Pair
from scoring.analysis.labels import Reference
from scoring.analysis.paraphrasus import OBJECTIVE_ORDER, Corpus, Objective, ParaphrasusResult, paraphrasus
from scoring.analysis.rater_bootstrap import OBJECTIVES_SENTENCE
from scoring.reports import dataset
from scoring.reports.tables import Cell, Row, Table, fmt, mark_best


class ObjectiveError(ValueError):
    """A corpus objective that cannot be set or used; the message names what is wrong.

    ``unknown`` is True when the only problem is a corpus or metric the campaign does not have
    (the API answers 404 then, 400 otherwise).
    """

    def __init__(self, message: str, *, unknown: bool = False) -> None:
        super().__init__(message)
        self.unknown = unknown


def campaign_origins(campaign: Campaign) -> list[str]:
    """The corpora of a campaign: the distinct origins of its pairs (training and check pairs aside)."""
    return dataset.origins(campaign)


def objectives(campaign: Campaign) -> dict[str, Objective]:
    """The stored objective of each corpus of the campaign."""
    rows = CorpusObjective.objects.filter(campaign=campaign).values_list("origin", "objective")
    return {origin: Objective(objective) for origin, objective in rows}


def set_objectives(campaign: Campaign, wanted: dict[str, str | None]) -> dict[str, Objective]:
    """Store (or, with None, remove) the objective of each named corpus, all or nothing.

    Refuses an origin the campaign has no pairs of and an unknown objective, naming them.
    Returns every stored objective of the campaign afterwards.
    """
    known = set(
        Pair.objects.filter(campaign=campaign, is_training=False, is_check=False)
        .values_list("origin", flat=True)
        .distinct()
    )
    problems = []
    missing = False
    for origin, objective in wanted.items():
        if origin not in known:
            missing = True
            shown = ", ".join(repr(name) for name in sorted(known)) or "none"
            problems.append(f"campaign {campaign.slug!r} has no pairs with origin {origin!r} (origins: {shown})")
        if objective is not None and objective not in {value.value for value in Objective}:
            problems.append(f"{objective!r} is not an objective for {origin!r}; choose classify, minimise or maximise")
    if problems:
        raise ObjectiveError("; ".join(problems), unknown=missing and len(problems) == 1)
    with transaction.atomic():
        for origin, objective in wanted.items():
            if objective is None:
                CorpusObjective.objects.filter(campaign=campaign, origin=origin).delete()
            else:
                CorpusObjective.objects.update_or_create(
                    campaign=campaign, origin=origin, defaults={"objective": objective}
                )
    return objectives(campaign)


@dataclass(frozen=True)
class ParaphrasusReport:
    """The PARAPHRASUS table of a campaign and the corpora it leaves out (no objective stored)."""

    result: ParaphrasusResult
    without_objective: list[str] = field(default_factory=list)


def campaign_paraphrasus(
    campaign: Campaign, *, fit_on: str | None = None, metrics: Sequence[str] = ()
) -> ParaphrasusReport:
    """Every metric of the campaign judged on its corpora's objectives.

    ``fit_on`` names the corpus that fits the threshold of metrics without a natural one
    (default: the classify corpus with the most labelled pairs). ``metrics`` keeps only these
    configuration labels or metric names. Raises :class:`ObjectiveError` for an unknown
    ``fit_on`` or metric.
    """
    stored = objectives(campaign)
    data = dataset.load(campaign, dataset.Filters(reference=Reference.GOLD))
    keep = list(range(len(data.metrics)))
    if metrics:
        known = {name for metric in data.metrics for name in (metric.label, metric.name)}
        unknown = [name for name in metrics if name not in known]
        if unknown:
            raise ObjectiveError(
                f"no metric configuration {', '.join(map(repr, unknown))} here "
                f"(known: {', '.join(sorted(known)) or 'none'})",
                unknown=True,
            )
        keep = [i for i, metric in enumerate(data.metrics) if metric.label in metrics or metric.name in metrics]
    infos = [data.metrics[i] for i in keep]
    origins = np.array(data.origins, dtype=object)
    corpora: list[Corpus] = []
    for origin in sorted(stored, key=lambda name: (OBJECTIVE_ORDER.index(stored[name]), name)):
        mask = origins == origin
        if not np.any(mask):
            continue
        corpora.append(Corpus(origin, stored[origin], data.gold_label[mask], data.scores[keep][:, mask]))
    if fit_on is not None and fit_on not in {corpus.name for corpus in corpora}:
        raise ObjectiveError(
            f"cannot fit on {fit_on!r}: it is not a corpus with an objective here "
            f"(corpora with one: {', '.join(corpus.name for corpus in corpora) or 'none'})",
            unknown=True,
        )
    result = paraphrasus(corpora, infos, fit_on=fit_on)
    without = sorted(set(data.origins) - set(stored))
    return ParaphrasusReport(result, without)


def paraphrasus_table(report: ParaphrasusReport) -> Table:
    """One row per metric: threshold, error (%) per corpus, per objective and overall."""
    result = report.result
    corpus_columns = [f"{name} ({objective.value}, n={count})" for name, objective, count in result.corpora]
    columns = ["threshold", *corpus_columns, *(f"{objective.value} mean" for objective in OBJECTIVE_ORDER), "overall"]
    rows = []
    for row in result.metrics:
        threshold = (
            Cell(DASH_TEXT, note=row.note)
            if row.threshold is None
            else Cell(f"{row.threshold:.4g} ({row.threshold_source})", note=row.rule)
        )
        cells = [threshold]
        for error in row.corpora:
            note = f"{error.wrong} wrong of {error.pairs}" + (
                f"; {error.missing} without a score" if error.missing else ""
            )
            cells.append(_rate(error.error, note))
        if not row.corpora:
            cells.extend(Cell(DASH_TEXT, note=row.note) for _ in result.corpora)
        cells.extend(_rate(row.objective_means.get(objective)) for objective in OBJECTIVE_ORDER)
        cells.append(_rate(row.overall, row.note))
        rows.append(Row(row.metric.label, "error %", cells))
    mark_best(rows, "error %", "min")
    for row_ in rows:  # the threshold column is text, never "best"
        row_.cells[0].best = False
    fit = f"fitted on {result.fit_on}" if result.fit_on else "no corpus to fit on"
    notes = []
    if result.missing_objectives:
        notes.append(
            "no corpus with the objective "
            + ", ".join(objective.value for objective in result.missing_objectives)
            + ": no overall mean"
        )
    if report.without_objective:
        notes.append("corpora without an objective (not counted): " + ", ".join(report.without_objective))
    return Table(
        key="paraphrasus",
        title="PARAPHRASUS objectives: error rate (%) of each metric as a paraphrase detector",
        caption=(
            "One threshold per metric on every corpus (natural where the metric has one, else "
            f"{fit}). Error = wrong decisions / decisions: classify corpora against their gold labels, "
            "minimise corpora where no pair should be called a paraphrase, maximise corpora where every pair "
            "should. Objective means average their corpora; overall averages the three objectives "
            "(objectives weigh equally, not corpora). Lower is better. " + OBJECTIVES_SENTENCE
        ),
        row_header=["metric"],
        columns=columns,
        rows=rows,
        note="; ".join(notes),
        text_columns=[0],
    )


DASH_TEXT = fmt(None)


def _rate(value: float | None, note: str = "") -> Cell:
    if value is None:
        return Cell(DASH_TEXT, note=note)
    return Cell(fmt(100 * value, 1), 100 * value, note=note, digits=1)


def report_dict(report: ParaphrasusReport) -> dict[str, object]:
    """The report as JSON-ready data (the API's answer and the dashboard's section)."""
    result = report.result
    return {
        "corpora": [
            {"origin": name, "objective": objective.value, "pairs": count} for name, objective, count in result.corpora
        ],
        "fit_on": result.fit_on,
        "missing_objectives": [objective.value for objective in result.missing_objectives],
        "without_objective": list(report.without_objective),
        "metrics": [
            {
                "label": row.metric.label,
                "name": row.metric.name,
                "higher_is_closer": row.metric.higher_is_closer,
                "threshold": row.threshold,
                "threshold_source": row.threshold_source,
                "rule": row.rule,
                "corpora": [
                    {
                        "origin": error.corpus,
                        "objective": error.objective.value,
                        "pairs": error.pairs,
                        "wrong": error.wrong,
                        "missing": error.missing,
                        "error": error.error,
                    }
                    for error in row.corpora
                ],
                "objectives": {objective.value: value for objective, value in row.objective_means.items()},
                "overall": row.overall,
                "note": row.note,
            }
            for row in result.metrics
        ],
        "table": paraphrasus_table(report).as_dict(),
    }
