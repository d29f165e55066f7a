"""Print the agreement tables of one campaign (the dashboard's tables) as Markdown, CSV or LaTeX."""

from __future__ import annotations

import datetime
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotate.labels import EnglishLevel
from annotate.models import Campaign
from scoring.analysis.distance_bins import MAX_BINS
from scoring.analysis.labels import Reference
from scoring.analysis.report import AnalysisInput
from scoring.reports.dataset import Filters
from scoring.reports.formats import FORMATS, render
from scoring.reports.service import CampaignReport, FilterError, campaign_report, default_resamples
from scoring.reports.tables import Table, all_tables


def _day(value: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"not a date (YYYY-MM-DD): {value!r}") from None


def _add_filter_arguments(parser: CommandParser) -> None:
    """The campaign, its reference labels and the filters on pairs, volunteers and days."""
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


def _add_output_arguments(parser: CommandParser) -> None:
    """The output format, the bootstrap resamples and seed, the metrics kept."""
    parser.add_argument("--format", choices=FORMATS, default="markdown")
    parser.add_argument(
        "--resamples",
        type=int,
        default=None,
        help=f"Bootstrap resamples for the 95%% intervals (default {default_resamples()}; 0: none).",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="Seed of every resampling (bootstrap, paired tests, cross-validation); default: the PARAEVAL_SEED "
        "setting, as on the dashboard and in the API.",
    )
    parser.add_argument(
        "--metrics",
        default="",
        help="Comma-separated metric configuration labels or metric names to keep (default: all).",
    )


def _add_meta_arguments(parser: CommandParser) -> None:
    """The meta-evaluation (--meta) and its options, and the edit-distance bins."""
    parser.add_argument(
        "--meta",
        action="store_true",
        help="Also print the meta-evaluation: paired tests with clusters and the p-value matrix, threshold "
        "honesty, ties, systems, human ceiling and calibration (computed here, may take seconds).",
    )
    parser.add_argument(
        "--permutation-resamples",
        type=int,
        default=None,
        help="With --meta: resamples of the Monte-Carlo permutation tests (Spearman). Default: chosen from the "
        "number of metric pairs so that a Holm-adjusted p below 0.05 is reachable; each matrix states the "
        "smallest p it can reach.",
    )

    parser.add_argument(
        "--r-threshold",
        type=float,
        default=None,
        help="With --meta on graded gold: R-Precision counts a hypothesis as relevant when its graded value is at "
        "least this (default: the highest graded value among the grouped pairs, as paper 004).",
    )

    parser.add_argument(
        "--aat-epsilon",
        type=float,
        default=None,
        help="With --meta: the alternative annotator test's cost-benefit margin ε, how much worse than a "
        "volunteer the metric may align with the other judges (default 0.1, crowd volunteers; 0.2 for experts).",
    )

    parser.add_argument(
        "--bins",
        type=int,
        default=None,
        help="Also print each metric's Pearson, Spearman and ROC AUC within this many equal-count bins of "
        "normalised edit distance, with counts per bin (paper 003 uses 4; with --meta the default is 4).",
    )


def _add_card_arguments(parser: CommandParser) -> None:
    """The views printed alone: the robustness cards and the PARAPHRASUS table."""
    parser.add_argument(
        "--robustness",
        action="store_true",
        help="Print only the robustness card of every metric on the campaign's probe set (the campaign itself "
        "if it is one, else the latest built from it by manage.py build_probes).",
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


class Command(BaseCommand):
    help = (
        "Print the paper's agreement tables (Tables 1-5, ranking, agreement, volunteers) of a campaign. "
        "Example: manage.py evaluate_metrics --campaign demo --gold imported --format latex"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        _add_filter_arguments(parser)
        _add_output_arguments(parser)
        _add_meta_arguments(parser)
        _add_card_arguments(parser)

    def _robustness(self, campaign: Campaign, options: dict[str, Any]) -> None:
        from django.conf import settings

        from scoring.reports.robustness import card_lines, probe_set_for, robustness_cards

        probe_set = probe_set_for(campaign)
        if probe_set is None:
            raise CommandError(f"campaign {campaign.slug!r} has no probe set: build one with manage.py build_probes")
        labels = [label.strip() for label in options["metrics"].split(",") if label.strip()]
        cards = robustness_cards(
            probe_set,
            resamples=default_resamples() if options["resamples"] is None else options["resamples"],
            seed=settings.PARAEVAL_SEED if options["seed"] is None else options["seed"],
            labels=labels or None,
        )
        self.stdout.write(f"Robustness on probe set {probe_set.pk} (campaign {probe_set.campaign.slug})")
        self.stdout.write("\n".join(card_lines(cards)))

    def handle(self, *args: Any, **options: Any) -> None:
        bins = options["bins"]
        if bins is not None and not 2 <= bins <= MAX_BINS:
            raise CommandError(f"--bins must be between 2 and {MAX_BINS}: {bins}")
        epsilon = options["aat_epsilon"]
        if epsilon is not None and not 0 <= epsilon < 1:
            raise CommandError(f"--aat-epsilon must be in [0, 1): {epsilon}")
        campaign = self._campaign(options["campaign"])
        if options["fit_on"] and not options["paraphrasus"]:
            raise CommandError("--fit-on is only used with --paraphrasus")
        if options["paraphrasus"]:
            self._paraphrasus(campaign, options)
            return
        if options["robustness"]:
            self._robustness(campaign, options)
            return
        pair_ids = self._pair_ids(campaign, options["ids"], options["ids_file"])
        try:
            filters = Filters.build(
                reference="gold" if options["gold"] == "imported" else "volunteers",
                origin=options["origin"],
                english_level=options["english_level"],
                date_from=options["date_from"],
                date_to=options["date_to"],
                exclude_flagged=options["exclude_flagged"],
                pair_ids=pair_ids,
            )
            result = campaign_report(
                campaign.pk,
                filters=filters,
                resamples=options["resamples"],
                seed=options["seed"],
                use_cache=False,
            )
        except FilterError as error:
            raise CommandError(str(error)) from None
        if pair_ids is not None and result.report.counts.pairs == 0:
            raise CommandError(f"no pair of campaign {campaign.slug!r} matches --ids/--ids-file and --origin")
        if options["origin"] and result.report.counts.pairs == 0:
            raise CommandError(f"campaign {campaign.slug!r} has no pairs with origin {options['origin']!r}")
        wanted = [name.strip() for name in options["metrics"].split(",") if name.strip()]
        if wanted:
            result = self._only(result, wanted)
        tables = all_tables(result.report)
        if options["meta"]:
            tables += self._meta_tables(campaign, result, options, wanted)
        elif bins is not None:
            tables += self._bin_tables(campaign, result, options, wanted)
        self.stdout.write(render(tables, options["format"], self._preamble(result)), ending="")

    def _paraphrasus(self, campaign: Campaign, options: dict[str, Any]) -> None:
        from scoring.reports.paraphrasus import ObjectiveError, campaign_paraphrasus, paraphrasus_table

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
    def _only(result: CampaignReport, wanted: list[str]) -> CampaignReport:
        known = {name for metric in result.report.metrics for name in (metric.label, metric.name)}
        unknown = [name for name in wanted if name not in known]
        if unknown:
            raise CommandError(
                f"--metrics: no metric configuration {', '.join(map(repr, unknown))} here "
                f"(known: {', '.join(sorted(known)) or 'none'})"
            )
        kept = [metric for metric in result.report.metrics if metric.label in wanted or metric.name in wanted]
        return replace(result, report=replace(result.report, metrics=kept))

    @classmethod
    def _bin_tables(
        cls, campaign: Campaign, result: CampaignReport, options: dict[str, Any], wanted: list[str]
    ) -> list[Table]:
        from scoring.analysis.meta import distance_bin_view
        from scoring.reports.meta_tables import distance_bin_table

        data = cls._data(campaign, result.filters, wanted)
        view = distance_bin_view(data, result.filters.reference, options["bins"])
        return [distance_bin_table(view, {metric.id: f"{metric.label} {metric.arrow}" for metric in data.metrics})]

    @staticmethod
    def _data(campaign: Campaign, filters: Filters, wanted: list[str]) -> AnalysisInput:
        """The campaign's arrays under the report's filters, with the metrics of --metrics."""
        from scoring.reports import dataset

        data = dataset.load(campaign, filters)
        if wanted:
            keep = [i for i, metric in enumerate(data.metrics) if metric.label in wanted or metric.name in wanted]
            data = replace(
                data,
                metrics=[data.metrics[i] for i in keep],
                scores=data.scores[keep],
                failed=data.failed[keep],
            )
        return data

    @classmethod
    def _meta_tables(
        cls, campaign: Campaign, result: CampaignReport, options: dict[str, Any], wanted: list[str]
    ) -> list[Table]:
        from scoring.analysis.meta import MetaOptions, meta_evaluation
        from scoring.reports.meta_tables import meta_tables

        data = cls._data(campaign, result.filters, wanted)
        bootstrap = result.report.bootstrap
        resamples = bootstrap.resamples or 1000
        permutation = options.get("permutation_resamples")
        if permutation is not None and permutation < 1:
            raise CommandError(f"--permutation-resamples: must be at least 1, got {permutation}")
        meta = meta_evaluation(
            data,
            MetaOptions(
                reference=result.filters.reference,
                resamples=resamples,
                seed=bootstrap.seed,
                permutation_resamples=permutation,
                r_threshold=options["r_threshold"],
                **({} if options["aat_epsilon"] is None else {"aat_epsilon": options["aat_epsilon"]}),
                **({} if options["bins"] is None else {"distance_bins": options["bins"]}),
            ),
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
    def _preamble(result: CampaignReport) -> str:
        report = result.report
        counts = report.counts
        reference = "imported gold labels" if report.reference is Reference.GOLD else "volunteers' majority labels"
        given = result.filters
        shown = [
            f"{name}={value}"
            for name, value in (
                ("origin", given.origin),
                ("english_level", given.english_level),
                ("date_from", given.date_from),
                ("date_to", given.date_to),
            )
            if value
        ]
        if given.exclude_flagged:
            shown.append("flagged volunteers excluded")
        if given.pair_ids:
            shown.append(f"{len(given.pair_ids)} pair ids")
        filters = ", ".join(shown)
        return (
            f"# {result.campaign.name} ({result.campaign.slug}): metrics against {reference}\n\n"
            f"{counts.pairs} pairs ({counts.paraphrases} paraphrases, {counts.non_paraphrases} "
            f"non-paraphrases, {counts.ties} ties, {counts.unjudged} unjudged); "
            f"{counts.judgements} judgements from {counts.volunteers} volunteers "
            f"({counts.training_judgements} training answers not counted); "
            f"{counts.scores} scores ({counts.scores_failed} failed, {counts.scores_missing} missing). "
            f"Bootstrap: {report.bootstrap.resamples} resamples, seed {report.bootstrap.seed}."
            + (f" Filters: {filters}." if filters else "")
            + f" Data version {result.version}.\n"
        )
