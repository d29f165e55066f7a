"""What an import reports: the problems that refuse a file, and the summary of a stored one."""

from __future__ import annotations

from dataclasses import dataclass, field

# A broken file can have thousands of problems; people read the first ones and fix the cause.
MAX_PROBLEMS_SHOWN = 50
# Problems kept in memory for a refusal (the rest are counted): a 200 MB file of broken lines
# would otherwise need more memory for its problems than for its rows.
MAX_PROBLEMS_KEPT = 10_000


@dataclass(frozen=True)
class ImportProblem:
    """One reason to refuse a file: where (line and field, when known) and what is wrong.

    ``line`` is the physical line of the file where the record starts (1 is the header of a
    tabular file); for :func:`annotate.importers.import_records` it is the 1-based position of
    the record in the iterable.
    """

    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line is not None else self.message


def format_problems(problems: list[ImportProblem], limit: int = MAX_PROBLEMS_SHOWN, *, total: int | None = None) -> str:
    """The first ``limit`` problems, one a line, and how many more were left out (of ``total``,
    when more problems were found than kept)."""
    total = len(problems) if total is None else total
    lines = [str(problem) for problem in problems[:limit]]
    shown = min(limit, len(problems))
    if total > shown:
        lines.append(f"... and {total - shown:,} more")
    return "\n".join(lines)


class ImportRefused(Exception):
    """The file (or the records) had problems; nothing from it was stored.

    ``problems`` are the first :data:`MAX_PROBLEMS_KEPT` found (in line order); ``count`` is
    how many were found in all.
    """

    def __init__(self, problems: list[ImportProblem], *, count: int | None = None) -> None:
        if not problems:
            raise ValueError("ImportRefused needs at least one problem")
        self.problems = list(problems)
        self.count = len(self.problems) if count is None else max(count, len(self.problems))
        super().__init__(format_problems(self.problems, total=self.count))

    def __str__(self) -> str:
        return format_problems(self.problems, total=self.count)


@dataclass(frozen=True)
class ImportReport:
    """What a successful import stored.

    ``format`` is the format that was read (``mrpc``, ``paws``, ``stsb``, ``csv``, ``tsv``,
    ``jsonl`` or the ``format_name`` given to ``import_records``); ``ignored_columns`` lists
    the columns (or JSON keys) that were present but are not pair fields; ``pair_ids`` are the
    new pairs in file order (empty for a dry run).
    """

    created: int
    format: str
    training: int
    ignored_columns: list[str]
    pair_ids: list[int]
    paraeval_export: bool = False  # the file was a ParaEval pair-level export (cells restored)
    dry_run: bool = False  # validated only: nothing was stored
    notes: list[str] = field(default_factory=list)  # things worth saying that are not problems
    # Label-like columns that were present and not read (a refusal instead with a strict import).
    warnings: list[str] = field(default_factory=list)
    gold_paraphrases: int = 0  # pairs stored with the gold label paraphrase
    gold_non_paraphrases: int = 0  # ... with the gold label non-paraphrase
    gold_scores: int = 0  # ... with a graded gold score
    checks: int = 0  # attention-check pairs among ``created``
    systems: dict[str, int] = field(default_factory=dict)  # pairs per named system

    def gold_summary(self) -> str:
        """The gold the stored pairs carry, in words."""
        labelled = self.gold_paraphrases + self.gold_non_paraphrases
        return (
            f"{labelled:,} labelled ({self.gold_paraphrases:,} paraphrase, "
            f"{self.gold_non_paraphrases:,} non-paraphrase), {self.gold_scores:,} with a graded score"
        )

    def describe(self, campaign: str) -> list[str]:
        """Lines that tell a person what was imported (printed by the commands)."""
        kind = f"{self.format} (a ParaEval pair-level export)" if self.paraeval_export else self.format
        verb = "Would import" if self.dry_run else "Imported"
        lines = [
            f"{verb} {self.created:,} pair{'s' if self.created != 1 else ''} into campaign {campaign!r}.",
            f"  format: {kind}",
            f"  training pairs: {self.training:,}",
            f"  check pairs: {self.checks:,}",
            f"  ignored columns: {', '.join(self.ignored_columns) if self.ignored_columns else 'none'}",
        ]
        lines.append(f"  gold: {self.gold_summary()}")
        lines.extend(f"  note: {note}" for note in self.notes)
        lines.extend(f"  warning: {warning}" for warning in self.warnings)
        return lines
