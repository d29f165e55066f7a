"""``manage.py list_metrics``: every registered metric, its configuration hash and whether it runs here.

Without ``--check`` no model is loaded (availability = the files are there); ``--check`` scores
one probe pair with each available metric, loading its model.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from scoring.metrics.catalogue import PROBE_PAIR, MetricStatus, metric_statuses
from scoring.metrics.registry import UnknownMetric, resolve_name


class Command(BaseCommand):
    help = "List the metrics: name, direction, natural threshold, queue, label, config hash, availability."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("names", nargs="*", help="Only these metrics (names or aliases).")
        parser.add_argument(
            "--check", action="store_true", help=f"Load each model and score the probe pair {PROBE_PAIR!r}."
        )
        parser.add_argument("--json", action="store_true", help="One JSON object per metric, full hashes.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            names = [resolve_name(name) for name in options["names"]] or None
        except UnknownMetric as error:
            raise CommandError(str(error)) from None
        statuses = metric_statuses(names, probe=options["check"])
        if options["json"]:
            for status in statuses:
                self.stdout.write(json.dumps(asdict(status), ensure_ascii=False))
            return
        self._table(statuses, probe=options["check"])

    def _table(self, statuses: list[MetricStatus], probe: bool) -> None:
        header = ["name", "dir", "threshold", "queue", "label", "config", "available"]
        rows = []
        for status in statuses:
            name = status.name + (f" ({', '.join(status.aliases)})" if status.aliases else "")
            threshold = "" if status.natural_threshold is None else f"{status.natural_threshold:g}"
            available = "yes" if status.available else "no"
            if probe and status.probe_value is not None:
                available += f" ({status.probe_value:.4f} in {status.probe_seconds:.1f}s)"
            direction = {"higher": "↑", "lower": "↓"}.get(status.direction, "?")
            rows.append([name, direction, threshold, status.queue, status.label, status.config_hash[:12], available])
        widths = [max(len(str(row[column])) for row in [header, *rows]) for column in range(len(header))]
        for row in [header, *rows]:
            self.stdout.write(
                "  ".join(str(value).ljust(width) for value, width in zip(row, widths, strict=True)).rstrip()
            )
        unavailable = [status for status in statuses if not status.available]
        if unavailable:
            self.stdout.write("")
            for status in unavailable:
                self.stdout.write(f"{status.label or status.name}: unavailable: {status.reason}")
        if not probe:
            self.stdout.write("\n(availability: files present; --check loads each model and scores a probe pair)")
