"""How fast the dashboard's analyses run on 10,000 pairs x 10 metrics, against scikit-learn.

Builds a synthetic campaign in memory (no database): 10,000 pairs in 3 corpora, 3
judgements per pair from 200 volunteers (30,000 judgements, some Don't know), 10 metric
configurations (3 lower-is-closer, one with heavy ties, one with a natural threshold, a few
failed scores). Then times, best of ``--repeats`` runs:

- the reference: one ``sklearn.metrics.roc_auc_score`` pass per metric on all pairs;
- the human labels alone (``annotate.aggregation.verdict`` per pair);
- the whole report without bootstrap intervals;
- the whole report with the default number of resamples (what the live page computes), and
  with 2,000 resamples.

With ``--scaling 10000,30000,100000`` it measures how the bootstrap grows with the pairs
(``--metrics 11``): per size, the CPU time of the intervals alone (``report_intervals``) and of
the report without them, the time per pair relative to the smallest size (1.0 = linear), and
the memory: tracemalloc's peak during the intervals (NumPy reports its buffers to it) and
the growth of the process's peak RSS. The counts are drawn in chunks of ``CHUNK_ROWS``
resamples, so the peak grows with the pairs only, not with pairs x resamples.

It also times the intervals alone, the pairs-only bootstrap against the two-way (pairs and
volunteers) one of :mod:`scoring.analysis.rater_bootstrap`, and prints their ratio. With
``--two-way`` it does only that, in CPU time with the runs interleaved (best of ``--repeats``
each: robust to a machine shared with other work), and adds the two-way interval of the paired
Delta AUC, Pearson, Spearman, Kendall and cross-validated accuracy of every two metrics (the
meta-evaluation's).

Every report covers Tables 1-5, AUC, correlations, top-k curves, chart data, agreement and
the volunteer table, for each corpus and for all pairs. Prints times and ratios; no assertion.

With ``--database`` it also stores the same campaign in a throw-away database (``bench_<name>``
on PostgreSQL, created and dropped here; in memory on SQLite) and times what the live page
pays: the version check of an unchanged campaign (one query) and a full ``campaign_report``
(loading pairs, judgements and scores, then the analyses).

    .venv/bin/python benchmarks/analysis_speed.py [--pairs 10000] [--metrics 10] [--repeats 3]
    .venv/bin/python benchmarks/analysis_speed.py --metrics 11 --scaling 10000,30000,100000
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/paraeval .venv/bin/python benchmarks/analysis_speed.py --database
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sklearn.metrics import roc_auc_score

from scoring.analysis.binary import rank
from scoring.analysis.bootstrap import CHUNK_ROWS, DEFAULT_RESAMPLES, Resampler, bootstrap_many
from scoring.analysis.labels import volunteer_labels
from scoring.analysis.rater_bootstrap import RaterInput, paired_auc_intervals, paired_intervals, rater_intervals
from scoring.analysis.report import (
    AnalysisInput,
    JudgementRows,
    MetricInfo,
    ReportOptions,
    VolunteerInfo,
    build_report,
    report_intervals,
    subsets,
)
from scoring.analysis.thresholds import DEFAULT_FOLDS, cross_validated


def synthetic_campaign(pairs: int, metrics: int, judges: int = 3, seed: int = 0) -> AnalysisInput:
    """A campaign whose metrics agree with people to different degrees."""
    rng = np.random.default_rng(seed)
    origins = rng.choice(["mrpc", "paws", "llm"], size=pairs).tolist()
    meaning = rng.normal(size=pairs)  # how close the two sentences really are
    edit = np.clip(rng.beta(2, 3, size=pairs) - 0.1 * meaning, 0, 1)
    rows = pairs * judges
    pair_index = np.repeat(np.arange(pairs), judges)
    yes = rng.random(rows) < 1 / (1 + np.exp(-2 * meaning[pair_index]))
    code = np.where(yes, rng.integers(2, 4, rows), rng.integers(0, 2, rows))
    code = np.where(rng.random(rows) < 0.03, 4, code)  # Don't know
    judgements = JudgementRows(
        pair_index=pair_index,
        volunteer=rng.integers(1, 201, rows),
        code=code,
        answered_at=np.arange(rows, dtype=np.float64),
        response_seconds=rng.gamma(3, 3, rows),
    )
    infos = [
        MetricInfo(
            id=index + 1,
            name=f"metric{index}",
            label=f"Metric {index}",
            higher_is_closer=index % 4 != 1,
            natural_threshold=0.0 if index == metrics - 1 else None,
        )
        for index in range(metrics)
    ]
    scores = np.empty((metrics, pairs))
    for index, info in enumerate(infos):
        value = meaning * rng.uniform(0.2, 1.5) - edit * rng.uniform(0, 2) + rng.normal(size=pairs)
        scores[index] = value if info.higher_is_closer else -value
    scores[2] = np.round(scores[2], 1)  # a metric with many tied scores (like BLEU's zeros)
    failed = np.zeros_like(scores, dtype=bool)
    failed[4, rng.choice(pairs, 25, replace=False)] = True
    scores[failed] = np.nan
    return AnalysisInput(
        pair_ids=np.arange(pairs),
        origins=origins,
        edit_distance=edit,
        gold_label=(meaning > 0).astype(np.float64),
        gold_score=np.full(pairs, np.nan),
        judgements=judgements,
        volunteers=[VolunteerInfo(v, "good", 5, 4) for v in range(1, 201)],
        metrics=infos,
        scores=scores,
        failed=failed,
    )


def best_of(repeats: int, function: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def database_timings(data: AnalysisInput, repeats: int) -> None:
    """Store ``data`` as a campaign in a throw-away database and time the live page's work."""
    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    import django

    django.setup()
    from datetime import timedelta

    from django.db import connection
    from django.utils import timezone

    from annotate.labels import LABEL_ORDER
    from annotate.models import Campaign, Judgement, Pair, Volunteer
    from scoring.models import MetricConfig, Score
    from scoring.reports.dataset import data_state
    from scoring.reports.service import campaign_report

    if connection.vendor == "postgresql":
        connection.settings_dict["TEST"]["NAME"] = f"bench_{connection.settings_dict['NAME']}"
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        campaign = Campaign.objects.create(slug="bench", name="bench", judges_per_pair=3)
        pairs = Pair.objects.bulk_create(
            Pair(
                campaign=campaign,
                external_id=f"p{index}",
                origin=origin,
                source=f"The committee approved budget number {index} after a debate.",
                hypothesis=f"After a debate the committee approved budget {index}.",
                gold_label=bool(gold),
            )
            for index, (origin, gold) in enumerate(zip(data.origins, data.gold_label.tolist(), strict=True))
        )
        volunteers = Volunteer.objects.bulk_create(
            Volunteer(campaign=campaign, english_level="good", token=f"bench-{v.id}") for v in data.volunteers
        )
        by_id = {info.id: volunteer for info, volunteer in zip(data.volunteers, volunteers, strict=True)}
        now = timezone.now()
        seen: set[tuple[int, int]] = set()
        rows = []
        for pair, volunteer, code in zip(
            data.judgements.pair_index.tolist(),
            data.judgements.volunteer.tolist(),
            data.judgements.code.tolist(),
            strict=True,
        ):
            if (pair, volunteer) in seen:  # one judgement per volunteer and pair
                continue
            seen.add((pair, volunteer))
            rows.append(
                Judgement(
                    volunteer=by_id[volunteer],
                    pair=pairs[pair],
                    label=LABEL_ORDER[code].value,
                    source_on_top=True,
                    shown_at=now - timedelta(seconds=9),
                    answered_at=now,
                )
            )
        Judgement.objects.bulk_create(rows, batch_size=5000)
        configs = MetricConfig.objects.bulk_create(
            MetricConfig(
                metric=info.name,
                config_hash=f"bench-{info.id}",
                label=info.label,
                higher_is_closer=info.higher_is_closer,
                natural_threshold=info.natural_threshold,
            )
            for info in data.metrics
        )
        Score.objects.bulk_create(
            (
                Score(pair=pairs[column], metric_config=config, value=None, status=Score.Status.FAILED, error="bench")
                if data.failed[row, column]
                else Score(pair=pairs[column], metric_config=config, value=float(data.scores[row, column]))
                for row, config in enumerate(configs)
                for column in range(len(pairs))
            ),
            batch_size=10_000,
        )
        print(
            f"database ({connection.vendor}): {len(pairs):,} pairs, {len(rows):,} judgements, "
            f"{Score.objects.count():,} scores"
        )
        from django.core.cache import cache

        def first_check() -> None:
            cache.clear()
            data_state(campaign.pk)

        fingerprint = best_of(repeats, first_check)
        unchanged = best_of(repeats, lambda: data_state(campaign.pk))
        full = best_of(repeats, lambda: campaign_report(campaign.pk, use_cache=False))
        print(f"version check, campaign fingerprint (6 queries)  {fingerprint:8.3f} s")
        print(f"version check, nothing changed (1 query)         {unchanged:8.3f} s")
        print(f"campaign_report: load + analyses, uncached       {full:8.3f} s")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def scaling(sizes: list[int], metrics: int, resamples: int) -> None:
    """CPU time and memory of the bootstrap intervals at several sizes (one run each)."""
    print(
        f"bootstrap scaling: {metrics} metrics, {resamples} resamples, 3 corpora + global "
        f"(counts drawn {CHUNK_ROWS} resamples at a time); CPU seconds of this process"
    )
    print(
        f"{'pairs':>8} {'intervals':>10} {'per pair':>9} {'no-CI report':>13} "
        f"{'tracemalloc peak':>17} {'RSS peak +':>11}"
    )
    base = None
    for pairs in sizes:
        data = synthetic_campaign(pairs, metrics)
        options = ReportOptions(resamples=resamples)
        start = time.process_time()
        build_report(data, ReportOptions(resamples=0))
        points = time.process_time() - start
        rss_before = _peak_rss_mb()
        start = time.process_time()
        report_intervals(data, options)
        cpu = time.process_time() - start
        rss_growth = _peak_rss_mb() - rss_before
        tracemalloc.start()
        report_intervals(data, options)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        per_pair = cpu / pairs
        base = base or per_pair
        print(
            f"{pairs:>8,} {cpu:>9.2f}s {per_pair / base:>8.2f}x {points:>12.2f}s "
            f"{peak / 2**20:>14.1f} MB {rss_growth:>8.1f} MB"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--metrics", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--database", action="store_true", help="also time campaign_report on a database")
    parser.add_argument("--scaling", help="comma-separated pair counts: bootstrap time and memory at each")
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES, help="resamples of --scaling")
    parser.add_argument(
        "--two-way", action="store_true", help="only the two-way intervals against the pairs-only ones (CPU time)"
    )
    args = parser.parse_args()
    if args.two_way:
        two_way_only(synthetic_campaign(args.pairs, args.metrics), args.repeats)
        return
    if args.scaling:
        scaling([int(size) for size in args.scaling.split(",")], args.metrics, args.resamples)
        return

    data = synthetic_campaign(args.pairs, args.metrics)
    labels = volunteer_labels(args.pairs, data.judgements.pair_index, data.judgements.code)
    truth = labels.binary == 1
    keep = labels.binary >= 0

    def reference() -> None:
        for row in data.scores:
            valid = keep & np.isfinite(row)
            roc_auc_score(truth[valid], row[valid])

    reference_time = best_of(args.repeats, reference)
    print(
        f"{args.pairs:,} pairs x {args.metrics} metrics, {len(data.judgements):,} judgements, "
        f"3 corpora + global; best of {args.repeats} runs"
    )
    print(f"reference: roc_auc_score once per metric        {reference_time:8.3f} s   1.0x")
    rows = [
        (
            "human labels (verdict per answer combination)",
            lambda: volunteer_labels(args.pairs, data.judgements.pair_index, data.judgements.code),
        ),
        ("full report, no bootstrap", lambda: build_report(data, ReportOptions(resamples=0))),
        (f"full report, {DEFAULT_RESAMPLES} resamples (default)", lambda: build_report(data, ReportOptions())),
        ("full report, 2000 resamples", lambda: build_report(data, ReportOptions(resamples=2000))),
    ]
    for name, function in rows:
        elapsed = best_of(args.repeats, function)
        print(f"{name:<47} {elapsed:8.3f} s {elapsed / reference_time:6.1f}x")
    two_way_ratio(data, args.repeats)
    if args.database:
        database_timings(data, args.repeats)


def _interval_inputs(
    data: AnalysisInput,
) -> tuple[ReportOptions, list[tuple[str, Any]], list[Any], Resampler, RaterInput]:
    """What both interval timings share: the options, the subsets, the pairs-only bootstrap's jobs
    (each metric's labelled ranks per subset), its resampler and the two-way bootstrap's input."""
    options = ReportOptions()
    labels = volunteer_labels(len(data.pair_ids), data.judgements.pair_index, data.judgements.code)
    oriented = np.array([row if m.higher_is_closer else -row for m, row in zip(data.metrics, data.scores, strict=True)])
    groups = [(group.key, group.mask) for group in subsets(data.origins)]
    jobs = []
    for index in range(len(data.metrics)):
        for _, mask in groups:
            labelled = mask & labels.labelled
            valid = labelled & np.isfinite(oriented[index])
            jobs.append((rank(oriented[index][valid], labels.binary[valid] == 1), int(np.count_nonzero(labelled))))
    resampler = Resampler(options.resamples, options.seed)
    rater_input = RaterInput(
        data.judgements.pair_index,
        data.judgements.volunteer,
        data.judgements.code,
        [m.id for m in data.metrics],
        oriented,
    )
    return options, groups, jobs, resampler, rater_input


def two_way_ratio(data: AnalysisInput, repeats: int) -> None:
    """The pairs-only intervals (accuracy, AUC, EER) against the two-way ones (the same three plus
    Pearson and Spearman, and the correlations' pairs-only intervals), same resamples, same run."""
    options, groups, jobs, resampler, rater_input = _interval_inputs(data)
    pairs_only = best_of(repeats, lambda: bootstrap_many(jobs, resampler))
    two_way = best_of(repeats, lambda: rater_intervals(rater_input, groups, options.resamples, options.seed))
    print(f"intervals alone, pairs only ({options.resamples} resamples)    {pairs_only:8.3f} s   1.0x")
    print(f"intervals alone, pairs and volunteers (two-way) {two_way:8.3f} s {two_way / pairs_only:6.1f}x")


def _cv_folds(data: AnalysisInput, oriented: np.ndarray) -> np.ndarray:
    """Metrics x pairs: the fold of every labelled pair in each metric's cross-validation (-1: none),
    as the meta-evaluation computes it."""
    labels = volunteer_labels(len(data.pair_ids), data.judgements.pair_index, data.judgements.code)
    fold = np.full(oriented.shape, -1, dtype=np.int64)
    for row, scores in enumerate(oriented):
        valid = np.flatnonzero(labels.labelled & np.isfinite(scores))
        result = cross_validated(scores[valid], labels.binary[valid] == 1, DEFAULT_FOLDS, ReportOptions().seed)
        if result is not None:
            fold[row, valid] = result.fold
    return fold


def two_way_only(data: AnalysisInput, repeats: int) -> None:
    """The two-way intervals against the pairs-only ones in CPU time, the runs interleaved and the
    best of each kept (a machine shared with other work slows both alike), and the paired Delta AUC
    of every two metrics under the two-way draws (and their Pearson and Spearman differences)."""
    options, groups, jobs, resampler, rater_input = _interval_inputs(data)
    metric_pairs = [(a, b) for a in range(len(data.metrics)) for b in range(a + 1, len(data.metrics))]
    cv_input = dataclasses.replace(rater_input, cv_fold=_cv_folds(data, rater_input.oriented))
    runs: dict[str, Callable[[], object]] = {
        "pairs only: accuracy, AUC, EER": lambda: bootstrap_many(jobs, resampler),
        "two-way: the same + Pearson, Spearman (+ their pairs-only)": lambda: rater_intervals(
            rater_input, groups, options.resamples, options.seed
        ),
        f"two-way Delta AUC, {len(metric_pairs)} metric pairs": lambda: paired_auc_intervals(
            rater_input, metric_pairs, options.resamples, options.seed
        ),
        f"two-way Delta Pearson and Delta Spearman, {len(metric_pairs)} metric pairs": lambda: paired_intervals(
            rater_input,
            [(kind, a, b) for kind in ("pearson", "spearman") for a, b in metric_pairs],
            options.resamples,
            options.seed,
        ),
        f"two-way Delta Kendall tau_b, {len(metric_pairs)} metric pairs": lambda: paired_intervals(
            rater_input, [("kendall", a, b) for a, b in metric_pairs], options.resamples, options.seed
        ),
        f"two-way Delta CV accuracy (refitted), {len(metric_pairs)} metric pairs": lambda: paired_intervals(
            cv_input, [("accuracy_cv", a, b) for a, b in metric_pairs], options.resamples, options.seed
        ),
    }
    best = dict.fromkeys(runs, math.inf)
    for _ in range(repeats):
        for name, function in runs.items():
            start = time.process_time()
            function()
            best[name] = min(best[name], time.process_time() - start)
    reference = best["pairs only: accuracy, AUC, EER"]
    print(
        f"{len(data.pair_ids):,} pairs x {len(data.metrics)} metrics, {len(data.judgements):,} judgements, "
        f"3 corpora + global, {options.resamples} resamples; CPU time, best of {repeats} interleaved runs"
    )
    for name, elapsed in best.items():
        print(f"{name:<60} {elapsed:8.3f} s {elapsed / reference:6.1f}x")


if __name__ == "__main__":
    main()
