"""``manage.py tune_judge``: tune a judge model on a campaign's labels (LoRA), then score with it.

Trains in this process by default, printing the loss and the validation AUC as it goes; with
``--queue`` the training goes to the base judge's worker queue (a GPU worker's). Either way the
result is a tuned judge, a judge model of its own, whose scores on the campaign are cross-fitted.
``--list`` shows the tunings and where each one is.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from annotate.models import Campaign
from scoring.metrics.judge_training_options import TuningOptions
from scoring.models import TunedJudge
from scoring.tuning import service as judge_tuning

DEFAULTS = TuningOptions()


class Command(BaseCommand):
    help = "Tune a judge model's ParaPLUIE score on a campaign's labels (LoRA adapters), then score the campaign."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", help="Slug of the campaign whose labelled pairs train the judge.")
        parser.add_argument(
            "--reference",
            choices=judge_tuning.REFERENCES,
            default="volunteers",
            help="The labels: the volunteers' majority (excluded volunteers left out) or the imported gold labels.",
        )
        parser.add_argument("--judge", help="The judge model to tune (a PARAPLUIE_MODELS name; default: the first).")
        parser.add_argument("--template", default=DEFAULTS.template, help="ParaPLUIE template (default direct).")
        parser.add_argument("--folds", type=int, default=5, help="Cross-fitting folds on the campaign (default 5).")
        parser.add_argument("--epochs", type=int, default=DEFAULTS.epochs, help="Passes over the pairs (default 1).")
        parser.add_argument("--max-pairs", type=int, default=0, help="Train on at most this many pairs (0: all).")
        parser.add_argument(
            "--max-tokens",
            type=int,
            default=DEFAULTS.max_tokens,
            help=f"Leave out pairs whose prompt is longer (default {DEFAULTS.max_tokens}; nothing is truncated).",
        )
        parser.add_argument("--rank", type=int, default=DEFAULTS.rank, help="LoRA rank (default 16).")
        parser.add_argument("--alpha", type=int, default=DEFAULTS.alpha, help="LoRA alpha (default 32).")
        parser.add_argument("--learning-rate", type=float, default=DEFAULTS.learning_rate, help="Default 2e-4.")
        parser.add_argument("--batch-size", type=int, default=DEFAULTS.batch_size, help="Pairs per step (default 8).")
        parser.add_argument(
            "--validation-share", type=float, default=DEFAULTS.validation_share, help="Held out for early stopping."
        )
        parser.add_argument("--eval-every", type=int, default=DEFAULTS.eval_every, help="Steps between validations.")
        parser.add_argument("--patience", type=int, default=DEFAULTS.patience, help="Validations without progress.")
        parser.add_argument(
            "--start-from",
            metavar="TUNED_JUDGE",
            help="Start every adapter from this tuned judge's (one tuned on other data from the same base model).",
        )
        parser.add_argument(
            "--probe-share",
            type=float,
            help="Share of probe pairs in the training mix, in [0, 1): word swaps and number, date and negation "
            "changes as non-paraphrases, meaning-keeping rewrites as paraphrases, cross-fitted by source sentence "
            "(default PARAEVAL_TUNING_PROBE_SHARE).",
        )
        parser.add_argument("--seed", type=int, help="Seed of the splits and initial weights (default PARAEVAL_SEED).")
        parser.add_argument("--threads", type=int, default=0, help="CPU threads for torch here (0: its default).")
        parser.add_argument("--queue", action="store_true", help="Send it to the judge's worker queue instead.")
        parser.add_argument("--list", action="store_true", help="List the tunings and their progress.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["list"]:
            self._list()
            return
        if not options["campaign"]:
            raise CommandError("--campaign is required (or --list)")
        campaign = Campaign.objects.filter(slug=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign {options['campaign']!r}")
        tuning = judge_tuning.default_options(
            template=options["template"],
            folds=options["folds"],
            epochs=options["epochs"],
            max_pairs=options["max_pairs"],
            max_tokens=options["max_tokens"],
            rank=options["rank"],
            alpha=options["alpha"],
            learning_rate=options["learning_rate"],
            batch_size=options["batch_size"],
            validation_share=options["validation_share"],
            eval_every=options["eval_every"],
            patience=options["patience"],
            seed=options["seed"],
            start_from=options["start_from"],
            probe_share=options["probe_share"],
        )
        try:
            with transaction.atomic():
                row = judge_tuning.request(
                    campaign, judge=options["judge"], reference=options["reference"], options=tuning
                )
                if options["queue"]:
                    judge_tuning.send(row)
        except judge_tuning.TuningRequestError as error:
            raise CommandError(str(error)) from None
        if options["queue"]:
            self.stdout.write(f"tuning {row.pk} of {row.base_judge} queued on {judge_tuning.queue_of(row)}")
            return
        self._run_here(row, options["threads"])

    def _run_here(self, row: TunedJudge, threads: int) -> None:
        if threads > 0:
            import torch

            torch.set_num_threads(threads)
        from scoring.tuning.run import run  # loads torch and the model: only here, on demand

        self.stdout.write(f"tuning {row.pk}: {row.base_judge}, template {row.template}, {row.options['folds']} folds")
        run(row.pk, echo=lambda line: self.stdout.write(line))
        row.refresh_from_db()
        if row.status != TunedJudge.Status.DONE:
            raise CommandError(f"tuning {row.pk} failed: {row.error}")

    def _list(self) -> None:
        rows = TunedJudge.objects.select_related("campaign", "metric_config")[:50]
        if not rows:
            self.stdout.write("no tunings yet")
            return
        for row in rows:
            progress = row.progress or {}
            where = ""
            if row.status == TunedJudge.Status.RUNNING and progress:
                where = f" ({progress.get('adapter')} step {progress.get('step')}/{progress.get('steps')})"
            auc = progress.get("best_auc")
            best = f"best validation AUC {auc:.3f}" if isinstance(auc, float) else ""
            campaign = row.campaign.slug if row.campaign else "-"
            fields = [str(row.pk), f"{row.status}{where}", row.label or row.base_judge, campaign, row.reference, best]
            self.stdout.write("\t".join(fields).rstrip())
