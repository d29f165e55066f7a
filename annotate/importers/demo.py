"""The demo campaign that ships with ParaEval: 5 training pairs and 71 pairs written for it.

The pairs live in ``annotate/demo/demo_campaign.jsonl`` and go through the importer like any
other file. Their ``origin`` says what each pair tests (``demo-paraphrase``, ``demo-swap``,
``demo-non-paraphrase``, ``demo-partial``) and ``gold_label`` is the author's intended answer
(paraphrase or not), so the dashboard's imported-gold mode works on the demo.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction

from annotate.importers.pipeline import import_file
from annotate.importers.problems import ImportReport
from annotate.models import Campaign

DEMO_FILE = Path(__file__).resolve().parent.parent / "demo" / "demo_campaign.jsonl"
DEMO_NAME = "ParaEval demo"
DEMO_DESCRIPTION = (
    "A demonstration campaign written for ParaEval: clear paraphrases, clear non-paraphrases, "
    "word-swap traps and partial overlaps. Three volunteers per pair make agreement measurable."
)
DEMO_JUDGES_PER_PAIR = 3
DEMO_QUOTA = 50


@dataclass(frozen=True)
class DemoOutcome:
    """What :func:`load_demo_campaign` did: ``report`` is None when nothing changed."""

    campaign: Campaign
    created_campaign: bool
    report: ImportReport | None
    existing_pairs: int


def load_demo_campaign(slug: str | None = None) -> DemoOutcome:
    """Create the demo campaign and load its pairs, unless it already has pairs.

    Idempotent: a campaign that exists with pairs is left exactly as it is (its settings
    included); one that exists without pairs receives them.
    """
    slug = slug or settings.PARAEVAL_DEMO_CAMPAIGN
    with transaction.atomic():
        campaign, created = Campaign.objects.get_or_create(
            slug=slug,
            defaults={
                "name": DEMO_NAME,
                "description": DEMO_DESCRIPTION,
                "judges_per_pair": DEMO_JUDGES_PER_PAIR,
                "quota": DEMO_QUOTA,
            },
        )
        # Lock the row so two starts at the same moment do not both load the file.
        campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
        existing = campaign.pairs.count()
        if existing:
            return DemoOutcome(campaign, created, None, existing)
        report = import_file(campaign, DEMO_FILE, format="jsonl")
    return DemoOutcome(campaign, created, report, 0)
