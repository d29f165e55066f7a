"""Print the agreement tables of one campaign (the dashboard's tables) as Markdown, CSV or LaTeX."""

from __future__ import annotations

import datetime
import re
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotate.labels import EnglishLevel
from annotate.models import Campaign
from scoring.analysis.formats import FORMATS, render
from scoring.analysis.service import FilterError, campaign_report, default_resamples
from scoring.analysis.tables import all_tables


def _day(value: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"not a date (YYYY-MM-DD): {value!r}") from None


class Command(BaseCommand):
    help = (
        "Print the paper's agreement tables (Tables 1-5, ranking, agreement, volunteers) of a campaign. "
        "Example: manage.py evaluate_metrics --campaign demo --gold imported --format latex"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="Campaign slug (or numeric id).")
        parser.add_argument(
            "--gold",
            choices=["volunteers", "imported"],
            default="volunteers",
            help="Reference labels: the volunteers' majority (default) or the imported gold labels.",
        )
        parser.add_argument("--origin", help="Only the pairs of this corpus / origin.")
        parser.add_argument("--ids", default="", help="Only these pair ids (comma-separated), e.g. 12,13,40.")
        parser.add_argument(
            "--ids-file",
            type=Path,
            help="Only the pair ids listed in this file (one per line, or separated by commas or spaces; "
            "# starts a comment). With --ids: the ids of both.",
        )
        parser.add_argument(
            "--exclude-flagged",
            action="store_true",
            help="Leave out the volunteers the campaign's quality rule flags (unless staff kept them) and those "
            "staff excluded.",
        )
        parser.add_argument(
            "--english-level", choices=[level.value for level in EnglishLevel], help="Only these volunteers."
        )
        parser.add_argument("--from", dest="date_from", type=_day, help="Judgements answered on or after this day.")
        parser.add_argument("--to", dest="date_to", type=_day, help="Judgements answered on or before this day.")
        parser.add_argument("--format", choices=FORMATS, default="markdown")
        parser.add_argument(
            "--resamples",
            type=int,
            default=None,
            help=f"Bootstrap resamples for the 95%% intervals (default {default_resamples()}; 0: none).",
        )
        parser.add_argument("--seed", type=int, default=None, help="Seed of the bootstrap (fixed by default).")
        parser.add_argument(
            "--metrics",
            default="",
            help="Comma-separated metric configuration labels or metric names to keep (default: all).",
        )
        parser.add_argument(
            "--meta",
            action="store_true",
            help="Also print the meta-evaluation: paired tests with clusters and the p-value matrix, threshold "
            "honesty, ties, systems, human ceiling and calibration (computed here, may take seconds).",
        )

        parser.add_argument(
            "--paraphrasus",
            action="store_true",
            help="Print only the PARAPHRASUS table: each metric's error rate per corpus, per objective "
            "(classify, minimise, maximise) and overall, at one threshold. Set the corpora's objectives "
            "with manage.py corpus_objective.",
        )
        parser.add_argument(
            "--fit-on",
            default=None,
            help="With --paraphrasus: the corpus (origin) whose labels fit the threshold of metrics without a "
            "natural one (default: the classify corpus with the most labelled pairs).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = self._campaign(options["campaign"])
        if options["fit_on"] and not options["paraphrasus"]:
            raise CommandError("--fit-on is only used with --paraphrasus")
        if options["paraphrasus"]:
            self._paraphrasus(campaign, options)
            return
        pair_ids = self._pair_ids(campaign, options["ids"], options["ids_file"])
        try:
            report = campaign_report(
                campaign.pk,
                reference="gold" if options["gold"] == "imported" else "volunteers",
                origin=options["origin"],
                english_level=options["english_level"],
                date_from=options["date_from"],
                date_to=options["date_to"],
                exclude_flagged=options["exclude_flagged"],
                pair_ids=pair_ids,
                resamples=options["resamples"],
                seed=options["seed"],
                use_cache=False,
            )
        except FilterError as error:
            raise CommandError(str(error)) from None
        if pair_ids is not None and report["counts"]["pairs"] == 0:
            raise CommandError(f"no pair of campaign {campaign.slug!r} matches --ids/--ids-file and --origin")
        if options["origin"] and report["counts"]["pairs"] == 0:
            raise CommandError(f"campaign {campaign.slug!r} has no pairs with origin {options['origin']!r}")
        wanted = [name.strip() for name in options["metrics"].split(",") if name.strip()]
        if wanted:
            report = self._only(report, wanted)
        tables = all_tables(report)
        if options["meta"]:
            tables += self._meta_tables(campaign, report, options, wanted, pair_ids)
        self.stdout.write(render(tables, options["format"], self._preamble(report)), ending="")

    def _paraphrasus(self, campaign: Campaign, options: dict[str, Any]) -> None:
        from scoring.analysis.paraphrasus_service import ObjectiveError, campaign_paraphrasus, paraphrasus_table

        ignored = [
            name for name in ("origin", "ids", "ids_file", "english_level", "date_from", "date_to") if options[name]
        ]
        if ignored or options["meta"] or options["exclude_flagged"] or options["gold"] != "volunteers":
            raise CommandError(
                "--paraphrasus uses every pair of the corpora with an objective and their imported gold labels: "
                "it takes only --metrics, --fit-on and --format"
            )
        wanted = [name.strip() for name in options["metrics"].split(",") if name.strip()]
        try:
            report = campaign_paraphrasus(campaign, fit_on=options["fit_on"], metrics=wanted)
        except ObjectiveError as error:
            raise CommandError(str(error)) from None
        if not report.result.corpora:
            raise CommandError(
                f"no corpus of campaign {campaign.slug!r} has an objective: set them with "
                f"manage.py corpus_objective --campaign {campaign.slug} ORIGIN=classify|minimise|maximise ..."
            )
        preamble = f"# {campaign.name} ({campaign.slug}): PARAPHRASUS objectives\n"
        self.stdout.write(render([paraphrasus_table(report)], options["format"], preamble), ending="")

    @staticmethod
    def _only(report: dict[str, Any], wanted: list[str]) -> dict[str, Any]:
        known = {name for metric in report["metrics"] for name in (metric["label"], metric["name"])}
        unknown = [name for name in wanted if name not in known]
        if unknown:
            raise CommandError(
                f"--metrics: no metric configuration {', '.join(map(repr, unknown))} here "
                f"(known: {', '.join(sorted(known)) or 'none'})"
            )
        kept = [metric for metric in report["metrics"] if metric["label"] in wanted or metric["name"] in wanted]
        return {**report, "metrics": kept}

    @staticmethod
    def _meta_tables(
        campaign: Campaign,
        report: dict[str, Any],
        options: dict[str, Any],
        wanted: list[str],
        pair_ids: list[int] | None,
    ) -> list:
        from dataclasses import replace

        from scoring.analysis import dataset
        from scoring.analysis.meta import MetaOptions, meta_evaluation
        from scoring.analysis.meta_tables import meta_tables

        filters = dataset.Filters.build(
            report["reference"],
            options["origin"],
            options["english_level"],
            options["date_from"],
            options["date_to"],
            options["exclude_flagged"],
            pair_ids,
        )
        data = dataset.load(campaign, filters)
        if wanted:
            keep = [i for i, metric in enumerate(data.metrics) if metric.label in wanted or metric.name in wanted]
            data = replace(
                data,
                metrics=[data.metrics[i] for i in keep],
                scores=data.scores[keep],
                failed=data.failed[keep],
            )
        resamples = report["bootstrap"]["resamples"] or 1000
        meta = meta_evaluation(
            data, MetaOptions(reference=filters.reference, resamples=resamples, seed=report["bootstrap"]["seed"])
        )
        return meta_tables(meta)

    @staticmethod
    def _pair_ids(campaign: Campaign, ids: str, ids_file: Path | None) -> list[int] | None:
        """The pair ids of --ids and --ids-file (None when neither is given); refuses a bad id,
        naming it (and its line), and ids that are not pairs of the campaign."""
        from annotate.models import Pair

        if not ids and ids_file is None:
            return None
        wanted: set[int] = set()
        sources = [("--ids", 0, ids)]
        if ids_file is not None:
            try:
                text = ids_file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise CommandError(f"--ids-file: cannot read {ids_file}: {error}") from None
            sources += [
                (f"--ids-file line {number}", number, line.split("#", 1)[0])
                for number, line in enumerate(text.splitlines(), start=1)
            ]
        for where, _, chunk in sources:
            for part in re.split(r"[\s,]+", chunk.strip()):
                if not part:
                    continue
                if not part.isdigit():
                    raise CommandError(f"{where}: not a pair id: {part!r}")
                wanted.add(int(part))
        if not wanted:
            raise CommandError("--ids/--ids-file: no pair id given")
        found = set(Pair.objects.filter(campaign=campaign, id__in=wanted).values_list("id", flat=True))
        unknown = sorted(wanted - found)
        if unknown:
            shown = ", ".join(map(str, unknown[:10])) + (f" and {len(unknown) - 10} more" if len(unknown) > 10 else "")
            raise CommandError(f"--ids/--ids-file: not pairs of campaign {campaign.slug!r}: {shown}")
        return sorted(wanted)

    def _campaign(self, key: str) -> Campaign:
        campaign = Campaign.objects.filter(slug=key).first()
        if campaign is None and key.isdigit():
            campaign = Campaign.objects.filter(pk=int(key)).first()
        if campaign is None:
            known = ", ".join(Campaign.objects.order_by("slug").values_list("slug", flat=True)[:20]) or "none"
            raise CommandError(f"no campaign {key!r} (campaigns: {known})")
        return campaign

    @staticmethod
    def _preamble(report: dict[str, Any]) -> str:
        counts = report["counts"]
        reference = "imported gold labels" if report["reference"] == "gold" else "volunteers' majority labels"
        filters = ", ".join(
            f"{len(value)} pair ids"
            if name == "pair_ids"
            else "flagged volunteers excluded"
            if value is True
            else f"{name}={value}"
            for name, value in report["filters"].items()
            if value and name != "reference"
        )
        return (
            f"# {report['campaign']['name']} ({report['campaign']['slug']}): metrics against {reference}\n\n"
            f"{counts['pairs']} pairs ({counts['paraphrases']} paraphrases, {counts['non_paraphrases']} "
            f"non-paraphrases, {counts['ties']} ties, {counts['unjudged']} unjudged); "
            f"{counts['judgements']} judgements from {counts['volunteers']} volunteers "
            f"({counts['training_judgements']} training answers not counted); "
            f"{counts['scores']} scores ({counts['scores_failed']} failed, {counts['scores_missing']} missing). "
            f"Bootstrap: {report['bootstrap']['resamples']} resamples, seed {report['bootstrap']['seed']}."
            + (f" Filters: {filters}." if filters else "")
            + f" Data version {report['version']}.\n"
        )
