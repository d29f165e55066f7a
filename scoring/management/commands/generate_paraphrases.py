"""``manage.py generate_paraphrases``: candidate paraphrases from LLMs, stored as pairs to judge.

Samples sources (seeded) from a campaign's pairs or reads a list, and generates one candidate
per source with each prompt template x generator model: on the models' worker queues, or in
this process with ``--here``. Running it again generates only what is missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotate.models import Campaign
from scoring.generation import candidates as generation
from scoring.metrics.judges import configured_models
from scoring.metrics.specs import split_list


class Command(BaseCommand):
    help = "Generate candidate paraphrases (template x model) for sampled sources; store them as pairs."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="Slug of the campaign the candidates go to.")
        parser.add_argument("--from-campaign", help="Sample the sources from this campaign (default: --campaign).")
        parser.add_argument("--sources", help="A UTF-8 file of source sentences, one a line (instead of sampling).")
        parser.add_argument("--count", type=int, default=10, help="How many sources (default 10).")
        parser.add_argument("--seed", type=int, default=0, help="Seed of the sampling and of sampled decoding.")
        parser.add_argument(
            "--templates",
            default="",
            help="Comma-separated templates (default: naive, naive_system, vulgar in the campaign's language). "
            f"Shipped: {', '.join(generation.templates())}.",
        )
        parser.add_argument("--models", default="", help="Comma-separated judge model names (default: all).")
        parser.add_argument("--sampled", action="store_true", help="Sample instead of greedy decoding.")
        parser.add_argument("--temperature", type=float, default=1.0, help="Sampling temperature (with --sampled).")
        parser.add_argument("--max-tokens", type=int, default=48, help="Tokens generated at most per candidate.")
        parser.add_argument("--here", action="store_true", help="Generate in this process (no worker, no broker).")

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = self._campaign(options["campaign"])
        if options["count"] < 1:
            raise CommandError(f"--count must be at least 1, got {options['count']}")
        try:
            if options["sources"]:
                path = Path(options["sources"])
                if not path.is_file():
                    raise CommandError(f"no file {path}")
                sources = generation.read_sources(path.read_bytes(), options["count"], options["seed"])
            else:
                origin = self._campaign(options["from_campaign"]) if options["from_campaign"] else campaign
                sources = generation.sample_sources(origin, options["count"], options["seed"])
            settings = generation.GenerationSettings(
                sampled=options["sampled"],
                temperature=options["temperature"],
                max_new_tokens=options["max_tokens"],
                seed=options["seed"],
            )
            templates = split_list(options["templates"]) or generation.default_templates(campaign.language)
            models = split_list(options["models"]) or [judge.name for judge in configured_models()]
            generators = [generation.Generator(t, m, settings) for m in models for t in templates]
            tasks = generation.plan(campaign, generators, sources)
        except generation.GenerationError as error:
            raise CommandError(str(error)) from None
        if not options["here"]:
            generation.send(tasks)
            self.stdout.write(
                f"{len(sources)} sources for {len(generators)} generators queued in {len(tasks)} tasks "
                f"(queues: {', '.join(sorted({task.generator.judge().queue for task in tasks}))})"
            )
            return
        from scoring.generation.run import generate_missing  # loads the model: only here, on demand

        for task in tasks:
            summary = generate_missing(campaign.pk, task.generator, task.sources)
            self.stdout.write(
                f"{summary.system}: {summary.stored} stored, {summary.already} already there, "
                f"{summary.empty} empty ({summary.new_tokens} tokens in {summary.seconds:.1f} s)"
            )

    @staticmethod
    def _campaign(slug: str) -> Campaign:
        campaign = Campaign.objects.filter(slug=slug).first()
        if campaign is None:
            raise CommandError(f"no campaign {slug!r}")
        return campaign
