"""A campaign's definition: its settings and its training and check pairs (optionally all its
pairs) as one JSON document, to clone a campaign here or re-run the study elsewhere.

Never volunteers nor judgements. The pairs go back in through the importer
(:func:`annotate.importers.import_records`), so a definition file is checked by the same rules
as any other pair file, all or nothing; the settings by the model's own validators. A clone is
a definition written and read back in one transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from annotate.importers import ImportRefused, import_records
from annotate.models import Campaign, Pair
from paraeval import __version__

KIND = "paraeval.campaign-definition"
FORMAT_VERSION = 1

# The settings a definition carries (every Campaign field a researcher sets, none it counts).
SETTINGS_FIELDS: tuple[str, ...] = (
    "name",
    "description",
    "language",
    "quota",
    "judges_per_pair",
    "reservation_minutes",
    "selection",
    "selection_metrics",
    "is_open",
    "check_positions",
    "check_every",
    "exclude_failed_checks",
    "exclude_median_seconds",
    "exclude_same_answer_share",
    "platform",
    "accepts_plain_link",
    "close_when_full",
    "participant_param",
    "study_param",
    "session_param",
    "completion_code",
    "screened_out_code",
    "completion_url",
)


class DefinitionError(Exception):
    """A definition that cannot be used; ``problems`` says every reason."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


@dataclass(frozen=True)
class Loaded:
    """The campaign a definition created and what it holds."""

    campaign: Campaign
    pairs: int
    training: int
    checks: int
    written_by: str


def _pair_record(pair: Pair) -> dict[str, Any]:
    record: dict[str, Any] = {"source": pair.source, "hypothesis": pair.hypothesis}
    optional = {
        "id": pair.external_id,
        "origin": pair.origin,
        "system": pair.system,
        "gold_label": pair.gold_label,
        "gold_score": pair.gold_score,
        "training_position": pair.training_position,
        "expected_label": pair.expected_label,
        "explanation": pair.explanation,
        "check": pair.is_check or None,
    }
    record.update({key: value for key, value in optional.items() if value not in (None, "")})
    return record


def definition(campaign: Campaign, *, include_pairs: bool = False) -> dict[str, Any]:
    """The campaign's definition: settings, training and check pairs, and (``include_pairs``)
    its other pairs, each pair as an importer record."""
    pairs = Pair.objects.filter(campaign=campaign).order_by("id")
    if not include_pairs:
        pairs = pairs.filter(is_training=True) | pairs.filter(is_check=True)
    return {
        "kind": KIND,
        "format_version": FORMAT_VERSION,
        "paraeval_version": __version__,
        "campaign": {name: getattr(campaign, name) for name in SETTINGS_FIELDS} | {"slug": campaign.slug},
        "includes_all_pairs": include_pairs,
        "pairs": [_pair_record(pair) for pair in pairs.order_by("id")],
    }


def _settings(data: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    problems = []
    if data.get("kind") != KIND:
        problems.append(f"this is not a ParaEval campaign definition (its kind should be {KIND!r})")
    version = data.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        problems.append(
            f"definition format {version!r} is not one this ParaEval ({__version__}) reads (up to {FORMAT_VERSION})"
        )
    settings = data.get("campaign")
    if not isinstance(settings, Mapping):
        problems.append("the definition has no campaign settings (the key 'campaign' should hold an object)")
        return {}, problems
    unknown = sorted(set(settings) - set(SETTINGS_FIELDS) - {"slug"})
    if unknown:
        problems.append(f"unknown campaign settings: {', '.join(unknown)}")
    pairs = data.get("pairs", [])
    if not isinstance(pairs, list):
        problems.append("'pairs' should be a list of pair records")
    return {name: settings[name] for name in SETTINGS_FIELDS if name in settings}, problems


def load(data: Any, *, slug: str, name: str = "") -> Loaded:
    """Create campaign ``slug`` from a definition, its pairs through the importer, all or nothing.

    Raises :class:`DefinitionError` with every problem found (settings and pairs); nothing is
    stored then.
    """
    if not isinstance(data, Mapping):
        raise DefinitionError(["a campaign definition is a JSON object"])
    values, problems = _settings(data)
    if not isinstance(data.get("campaign"), Mapping):
        raise DefinitionError(problems)
    if name.strip():
        values["name"] = name.strip()
    campaign = Campaign(slug=slug, **values)
    try:
        campaign.full_clean()
    except ValidationError as error:
        problems += [f"{field}: {message}" for field, messages in error.message_dict.items() for message in messages]
    records = data.get("pairs") or []
    settings_usable = not problems
    # Every reason at once: the pairs are checked too when a setting is wrong (then against a
    # stand-in campaign, rolled back with everything else).
    with transaction.atomic():
        target = campaign if settings_usable else Campaign(slug=slug, name=slug)
        target.save()
        report = None  # a definition may hold no pair: the campaign alone
        if records and isinstance(records, list):
            try:
                report = import_records(target, records, format_name="definition")
            except ImportRefused as refusal:
                problems += [f"pair {problem}" for problem in refusal.problems]
        if problems:  # leaving the block with the exception rolls the campaign back too
            raise DefinitionError(problems)
    return Loaded(
        campaign=campaign,
        pairs=report.created if report else 0,
        training=report.training if report else 0,
        checks=report.checks if report else 0,
        written_by=str(data.get("paraeval_version", "unknown")),
    )


def clone(campaign: Campaign, *, slug: str, name: str, include_pairs: bool = False) -> Loaded:
    """A new campaign with ``campaign``'s settings, training and check pairs (and, with
    ``include_pairs``, its other pairs); never its volunteers or judgements."""
    return load(definition(campaign, include_pairs=include_pairs), slug=slug, name=name)
