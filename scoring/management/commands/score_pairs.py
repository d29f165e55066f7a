"""``manage.py score_pairs``: score a campaign's pairs in this process, no broker needed.

Every pair without a score for the chosen metric configurations is scored in batches, with a
progress bar and an ETA on stderr. Interrupt it (Ctrl+C) at any time: the batches already
stored stay, and the same command resumes with the pairs still missing.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from annotate.models import Campaign, Pair
from scoring.metrics import environment
from scoring.metrics.base import Metric
from scoring.metrics.registry import InvalidSpec, UnknownMetric
from scoring.metrics.specs import split_list
from scoring.pipeline import configs, runner


class Command(BaseCommand):
    help = "Score every pair of a campaign that lacks a score for the given metrics (resumable)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="Campaign slug.")
        parser.add_argument(
            "--metrics",
            default="",
            help="Comma-separated metric specs, e.g. parapluie_fs,bertscore[layers=5],lev or "
            "bleu[tokenize=moses,lowercase=false],parapluie_fs_direct[model=mistral] "
            "(default: PARAEVAL_METRICS). `manage.py list_metrics` lists them.",
        )
        parser.add_argument(
            "--batch-size",
            type=int,
            default=None,
            help=f"Pairs per batch (default: PARAEVAL_SCORING_BATCH_SIZE = {settings.PARAEVAL_SCORING_BATCH_SIZE}).",
        )
        parser.add_argument("--no-progress", action="store_true", help="No progress bar (logs, CI).")
        parser.add_argument("--origin", help="Only the pairs of this corpus / origin.")
        parser.add_argument("--ids", default="", help="Only these pair ids (comma-separated), e.g. 12,13,40.")
        parser.add_argument("--limit", type=int, default=None, help="At most this many pairs (the lowest ids first).")

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = Campaign.objects.filter(slug=options["campaign"]).first()
        if campaign is None:
            known = ", ".join(Campaign.objects.order_by("slug").values_list("slug", flat=True)[:20]) or "none"
            raise CommandError(f"no campaign {options['campaign']!r} (campaigns: {known})")
        batch_size = options["batch_size"]
        if batch_size is not None and batch_size < 1:
            raise CommandError(f"--batch-size must be at least 1, got {batch_size}")
        metrics = self._metrics(options["metrics"])
        pair_ids = self._subset(campaign, options["origin"], options["ids"], options["limit"])
        for metric in metrics:
            self._score(metric, campaign, batch_size, show_progress=not options["no_progress"], pair_ids=pair_ids)

    @staticmethod
    def _subset(campaign: Campaign, origin: str | None, ids: str, limit: int | None) -> list[int] | None:
        """The pair ids in scope (None: the whole campaign); refuses a subset that selects nothing."""
        if limit is not None and limit < 1:
            raise CommandError(f"--limit must be at least 1, got {limit}")
        if origin is None and not ids and limit is None:
            return None
        pairs = Pair.objects.filter(campaign=campaign).order_by("id")
        if origin is not None:
            pairs = pairs.filter(origin=origin)
        if ids:
            try:
                wanted = sorted({int(part) for part in ids.split(",") if part.strip()})
            except ValueError:
                raise CommandError(f"--ids: expected comma-separated integers, got {ids!r}") from None
            pairs = pairs.filter(id__in=wanted)
        selected = list(pairs.values_list("id", flat=True)[:limit] if limit else pairs.values_list("id", flat=True))
        if not selected:
            raise CommandError(f"no pair of campaign {campaign.slug!r} matches --origin/--ids")
        return selected

    def _metrics(self, spec: str) -> list[Metric]:
        # Specs: commas inside [...] belong to a spec (bleu[tokenize=moses,lowercase=false]).
        names = split_list(spec) or list(environment.current().metrics)
        try:
            canonical = list(dict.fromkeys(configs.canonical_name(name) for name in names))
        except (UnknownMetric, InvalidSpec) as error:
            raise CommandError(str(error)) from None
        metrics: dict[str, Metric] = {}
        for name in canonical:
            try:
                # ParaPLUIE without model= : one configuration per judge model of PARAPLUIE_MODELS.
                built = configs.build_all(name)
            except InvalidSpec as error:
                raise CommandError(str(error)) from None
            except Exception as error:  # re-raised with the metric's name
                raise CommandError(f"cannot build metric {name!r}: {type(error).__name__}: {error}") from error
            for metric in built:
                metrics.setdefault(metric.config_hash, metric)
        return list(metrics.values())

    def _score(
        self,
        metric: Metric,
        campaign: Campaign,
        batch_size: int | None,
        *,
        show_progress: bool,
        pair_ids: list[int] | None = None,
    ) -> None:
        bar: tqdm | None = None
        last: runner.RunSummary | None = None

        def progress(summary: runner.RunSummary) -> None:
            nonlocal bar, last
            last = summary
            if not show_progress or not summary.total:
                return
            if bar is None:
                bar = tqdm(total=summary.total, desc=summary.label, unit="pair", file=self.stderr._out, leave=True)
            bar.update(summary.processed - bar.n)
            bar.set_postfix(failed=summary.failed, refresh=False)

        try:
            summary = runner.score_missing(
                metric, campaign=campaign, pair_ids=pair_ids, batch_size=batch_size, progress=progress
            )
        except KeyboardInterrupt:
            stored = (last.scored + last.failed) if last else 0
            raise CommandError(
                f"interrupted: {stored} new {metric.label} scores were stored; "
                "run the same command again to score the rest",
                returncode=130,
            ) from None
        finally:
            if bar is not None:
                bar.close()
        if not summary.total:
            self.stdout.write(f"{summary.label}: every pair already has a score")
            return
        elsewhere = f", {summary.already_scored} scored meanwhile by another run" if summary.already_scored else ""
        self.stdout.write(
            f"{summary.label}: {summary.total} pairs lacked a score: {summary.scored} scored, "
            f"{summary.failed} failed{elsewhere} ({summary.pairs_per_second:.1f} pairs/s)"
        )
        for error in summary.errors:
            self.stderr.write(f"  {summary.label} failure: {error}")
