"""``manage.py plan_campaign``: interval width, power and cost of a campaign for a grid of sizes."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotate.models import Campaign
from scoring.analysis.planning import PlanError
from scoring.reports.planning import COLUMNS, campaign_plan, parse_request, sizes_lines, summary, table_rows


class Command(BaseCommand):
    help = (
        "Predict, before the first volunteer, the width of the interval and the power of the campaign's "
        "question for each number of pairs and of judges per pair, and the crowd platform's cost. Example: "
        "manage.py plan_campaign --campaign mrpc-test --metrics bleu,bertscore --question auc --noise 0.1 "
        "--pairs 100,200,400 --judges 1,3,5"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="Slug of the campaign.")
        parser.add_argument(
            "--question",
            default="auc",
            help="auc (paired \u0394AUC of two metrics), correlation (difference of their Pearson r with the "
            "volunteers' scores) or clusters (every metric). Default auc.",
        )
        parser.add_argument(
            "--metrics", default="", help="Metric names or configuration labels, comma-separated (clusters: all)."
        )
        parser.add_argument(
            "--noise", default="", help="Flip probability of one judge, e.g. 0.1 (default: from the pilot)."
        )
        parser.add_argument(
            "--pairs", default="", help="Numbers of pairs, comma-separated (default 100,200,400,800 up to the pool)."
        )
        parser.add_argument("--judges", default="1,3,5", help="Judges per pair, comma-separated.")
        parser.add_argument("--reward", default="", help="Payment per participant (any currency): adds the cost.")
        parser.add_argument("--fee", default="", help="The platform's fee as a share of the reward, e.g. 0.33.")
        parser.add_argument("--alpha", default="", help="Level of the test (default 0.05).")
        parser.add_argument("--json", action="store_true", help="The plan as JSON (the API's answer).")

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = Campaign.objects.filter(slug=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign with slug {options['campaign']!r}")
        names = ("question", "metrics", "noise", "pairs", "judges", "reward", "fee", "alpha")
        try:
            request = parse_request({name: options[name] for name in names})
            result = campaign_plan(campaign, request)
        except PlanError as error:
            raise CommandError(str(error)) from None
        if options["json"]:
            self.stdout.write(json.dumps(result.as_dict(), ensure_ascii=False))
            return
        self.stdout.write(summary(result))
        rows = [list(COLUMNS), *table_rows(result)]
        widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
        for row in rows:
            self.stdout.write("  ".join(value.rjust(width) for value, width in zip(row, widths, strict=True)))
        for line in sizes_lines(result):
            self.stdout.write(line)
