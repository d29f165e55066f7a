"""Reproduce the MRPC column of Table 1 of the ParaPLUIE paper with our metrics, and time them.

    .venv/bin/python benchmarks/reproduce_table1_mrpc.py [--tokenisers] [--no-models] [--limit N]

Scores all 5,801 MRPC pairs (train + test, ``../shared/data/mrpc/``; sentence 1 is the source,
sentence 2 the hypothesis) and prints mean ± standard deviation (population) per class next to
the paper's values. The paper scored the Hugging Face ``glue/mrpc`` copy, whose sentences are
Moses-tokenised; our copy is the raw text. Each metric is therefore run on two texts:

* "GLUE text": the raw sentences through the Moses tokeniser (sacremoses), which gives the
  GLUE copy's text (``doesn 't``, ``$ 2.5``, ``4.4 %``), i.e. what the paper scored;
* "raw text": the sentences as stored, which is what the application scores.

The paper's values: LEV 0.38 ± 0.16 / 0.51 ± 0.13, BLEU 0.40 ± 0.21 / 0.28 ± 0.18,
METEOR 0.69 ± 0.14 / 0.56 ± 0.15 (WER 0.51 ± 0.20 / 0.67 ± 0.19 from the TALN 2024 version).
A mean further than 0.02 from the paper is flagged. BERTScore and ParaScore.Free run on the
embedded all-MiniLM-L6-v2, not the paper's bert-base-uncased: their rows are for information.
Throughput is pairs per second of ``score_batch`` on the raw text, model already loaded.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "paraeval.settings")
os.environ.setdefault("SECRET_KEY", "benchmark-only-not-a-secret")
os.environ.setdefault("NLTK_DATA", str(ROOT / "data" / "nltk_data"))

import django  # noqa: E402

django.setup()

from scoring.metrics.base import Metric  # noqa: E402
from scoring.metrics.bertscore import BertScore  # noqa: E402
from scoring.metrics.bleu import TorchtextBleu, torchtext_bleu  # noqa: E402
from scoring.metrics.lexical import Levenshtein, WordEditRate  # noqa: E402
from scoring.metrics.meteor import Meteor  # noqa: E402
from scoring.metrics.parascore import ParaScoreFree  # noqa: E402
from scoring.metrics.tokenize import TOKENISERS, clear_caches, moses  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "mrpc"
FILES = ("msr_paraphrase_train.txt", "msr_paraphrase_test.txt")
TOLERANCE = 0.02


@dataclass(frozen=True)
class Row:
    label: int  # 1 = paraphrase
    source: str
    hypothesis: str


@dataclass(frozen=True)
class PaperValue:
    mean_yes: float
    std_yes: float
    mean_no: float
    std_no: float


@dataclass(frozen=True)
class Line:
    """One table line: a metric, the paper's values, and how to build our metric for each text."""

    title: str
    paper: PaperValue
    # None: not run on the GLUE text (the embedding metrics, to save time: WordPiece splits the
    # punctuation that Moses separates anyway, so both texts give nearly the same numbers).
    glue: Callable[[], Metric] | None
    raw: Callable[[], Metric]
    note: str = ""


def load_mrpc(data: Path = DATA) -> list[Row]:
    """Every MRPC pair, train then test, read as plain tab-separated text (quotes are not quoting)."""
    rows: list[Row] = []
    for name in FILES:
        with (data / name).open(encoding="utf-8-sig") as handle:
            next(handle)  # header
            for line in handle:
                quality, _, _, first, second = line.rstrip("\n").split("\t")
                rows.append(Row(int(quality), first, second))
    return rows


def glue_text(rows: Sequence[Row]) -> list[Row]:
    """The rows as the GLUE copy has them: Moses tokens joined by single spaces."""
    return [Row(row.label, " ".join(moses(row.source)), " ".join(moses(row.hypothesis))) for row in rows]


def by_class(rows: Sequence[Row], values: Sequence[float]) -> tuple[float, float, float, float]:
    yes = [value for row, value in zip(rows, values, strict=True) if row.label == 1]
    no = [value for row, value in zip(rows, values, strict=True) if row.label == 0]
    return statistics.fmean(yes), statistics.pstdev(yes), statistics.fmean(no), statistics.pstdev(no)


def score(metric: Metric, rows: Sequence[Row]) -> tuple[list[float], float]:
    """Scores and pairs per second (a first small batch loads any model outside the timing)."""
    pairs = [(row.source, row.hypothesis) for row in rows]
    metric.check_available()
    metric.score_batch(pairs[:2])
    clear_caches()  # time tokenisation too, not tokens cached by an earlier run
    started = time.perf_counter()
    values = metric.score_batch(pairs)
    return values, len(pairs) / (time.perf_counter() - started)


def lines(with_models: bool) -> list[Line]:
    table = [
        Line("LEV ↓", PaperValue(0.38, 0.16, 0.51, 0.13), Levenshtein, Levenshtein),
        Line(
            "BLEU ↑",
            PaperValue(0.40, 0.21, 0.28, 0.18),
            # On GLUE text the paper's own pipeline: lowercase, split on whitespace.
            lambda: TorchtextBleu(tokeniser="whitespace_lower"),
            TorchtextBleu,
            "GLUE: whitespace_lower tokens; raw: moses_lower (the metric's default)",
        ),
        Line("METEOR ↑", PaperValue(0.69, 0.14, 0.56, 0.15), Meteor, Meteor),
        Line(
            "WER ↓ (TALN 2024)",
            PaperValue(0.51, 0.20, 0.67, 0.19),
            lambda: WordEditRate("hypothesis_length"),
            lambda: WordEditRate("hypothesis_length"),
            "normalised by the hypothesis' word count",
        ),
        Line(
            "WER ↓ (max length)",
            PaperValue(0.51, 0.20, 0.67, 0.19),
            WordEditRate,
            WordEditRate,
            "the definition in the TALN text: does not reproduce its table",
        ),
    ]
    if with_models:
        table += [
            Line(
                "BERTScore ↑ (MiniLM)",
                PaperValue(0.82, 0.07, 0.74, 0.08),
                None,
                BertScore,
                "all-MiniLM-L6-v2 L6, the paper used bert-base-uncased L9: not comparable",
            ),
            Line(
                "ParaScore.Free ↑ (MiniLM)",
                PaperValue(0.83, 0.07, 0.76, 0.09),
                None,
                ParaScoreFree,
                "all-MiniLM-L6-v2 L6, the paper used bert-base-uncased L9: not comparable",
            ),
        ]
    return table


def cell(mean: float, std: float) -> str:
    return f"{mean:.3f}±{std:.3f}"


def stat_cells(stats: tuple[float, float, float, float] | None, index: int, paper_mean: float, comparable: bool) -> str:
    """ "mean±std  difference flag" for one class, or a dash when the text was not scored."""
    if stats is None:
        return f"{'-':12} {'':10}"
    difference = stats[index] - paper_mean
    flag = "" if not comparable else (" ok" if abs(difference) <= TOLERANCE else " OFF")
    return f"{cell(stats[index], stats[index + 1]):12} {f'{difference:+.3f}{flag}':10}"


def reproduce(rows: Sequence[Row], glue_rows: Sequence[Row], with_models: bool) -> None:
    yes = sum(row.label for row in rows)
    print(f"MRPC train + test: {len(rows)} pairs, {yes} paraphrases, {len(rows) - yes} non-paraphrases")
    columns = ("metric", 26), ("class", 5), ("paper", 10), ("GLUE text", 12), ("diff", 10), ("raw text", 12)
    header = " ".join(f"{title:{width}}" for title, width in columns) + f" {'diff':10} {'pairs/s':>8}"
    print(header)
    print("-" * len(header))
    notes = []
    for line in lines(with_models):
        comparable = "not comparable" not in line.note
        glue_stats = by_class(glue_rows, score(line.glue(), glue_rows)[0]) if line.glue else None
        raw_values, rate = score(line.raw(), rows)
        raw_stats = by_class(rows, raw_values)
        paper = (line.paper.mean_yes, line.paper.std_yes, line.paper.mean_no, line.paper.std_no)
        for index, name in ((0, "yes"), (2, "no")):
            print(
                (
                    f"{line.title if index == 0 else '':26} {name:5} {paper[index]:.2f}±{paper[index + 1]:.2f}  "
                    f"{stat_cells(glue_stats, index, paper[index], comparable)} "
                    f"{stat_cells(raw_stats, index, paper[index], comparable)} "
                    f"{f'{rate:8.0f}' if index == 0 else ''}"
                ).rstrip()
            )
        if line.note:
            notes.append(f"{line.title}: {line.note}")
    print()
    print(f"diff = ours - paper (means); ok / OFF: within / beyond {TOLERANCE} of the paper's mean.")
    for note in notes:
        print(f"  {note}")


def tokeniser_search(rows: Sequence[Row], glue_rows: Sequence[Row]) -> None:
    """BLEU over MRPC with every tokeniser, on both texts: which one gives the paper's column."""
    print("BLEU (torchtext definition) by tokeniser; paper: yes 0.40±0.21, no 0.28±0.18")
    print(f"{'tokeniser':18} {'text':5} {'yes':12} {'no':12} {'max |diff|':>10}")
    paper = (0.40, 0.21, 0.28, 0.18)
    for name, spec in TOKENISERS.items():
        for text, data in (("GLUE", glue_rows), ("raw", rows)):
            tokenise = spec.function
            values = [torchtext_bleu(tokenise(row.hypothesis), [tokenise(row.source)]) for row in data]
            stats = by_class(data, values)
            worst = max(abs(ours - theirs) for ours, theirs in zip(stats, paper, strict=True))
            print(f"{name:18} {text:5} {cell(stats[0], stats[1]):12} {cell(stats[2], stats[3]):12} {worst:10.3f}")
    print()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="score only the first N pairs (quick check)")
    parser.add_argument("--no-models", action="store_true", help="skip BERTScore and ParaScore.Free")
    parser.add_argument("--tokenisers", action="store_true", help="also print BLEU for every tokeniser")
    args = parser.parse_args(argv)
    rows = load_mrpc()[: args.limit]
    glue_rows = glue_text(rows)
    if args.tokenisers:
        tokeniser_search(rows, glue_rows)
    reproduce(rows, glue_rows, with_models=not args.no_models)


if __name__ == "__main__":
    main()
