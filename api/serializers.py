"""Serializers of the annotate API (no database access beyond what the querysets annotate)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from annotate.exports.service import Format, Level
from annotate.importers.options import (
    GOLD_AS_CHOICES,
    GOLD_CONSTANT_CHOICES,
    GOLD_MAP_HELP,
    ImportOptionError,
    ImportOptions,
)
from annotate.labels import ENGLISH_LEVEL_ORDER, is_paraphrase
from annotate.models import LABEL_CHOICES, Campaign, Judgement, Pair
from annotate.pseudonyms import volunteer_pseudonym
from annotate.quality import VolunteerQuality, campaign_quality
from annotate.teams import campaigns_for, teams_for
from api.gold_schema import GOLD_TARGET_SCHEMA

# Most records one bulk request may carry (the importer holds them all in one transaction).
MAX_BULK_RECORDS = 50_000
# Most entries of a gold value mapping and of the columns to ignore (codes, not data).
MAX_GOLD_MAP_ENTRIES = 1000
# Problems listed in a refusal: a broken batch can have one per record; people fix the first.
MAX_PROBLEMS_LISTED = 1000


class StrictBooleanField(serializers.BooleanField):
    """A JSON ``true`` or ``false`` only, as the schema says (DRF also takes 0, 1, "yes", "off"...)."""

    default_error_messages = {"invalid": "Must be true or false (a JSON boolean), not {input!r}."}

    def to_internal_value(self, data: Any) -> bool:
        if isinstance(data, bool):
            return data
        self.fail("invalid", input=data)
        raise AssertionError("unreachable")  # fail() raises


class CampaignSerializer(serializers.ModelSerializer[Campaign]):
    pairs = serializers.IntegerField(source="pair_count", read_only=True, help_text="Campaign pairs (no training).")
    training_pairs = serializers.IntegerField(source="training_pair_count", read_only=True)
    volunteers = serializers.IntegerField(source="volunteer_count", read_only=True)
    judgements = serializers.IntegerField(
        source="judgement_count", read_only=True, help_text="Judgements of campaign pairs (no training answers)."
    )
    volunteer_link = serializers.SerializerMethodField(help_text="Link to send to volunteers.")
    team = serializers.SlugRelatedField(
        slug_field="name",
        queryset=Group.objects.all(),
        required=False,
        allow_null=True,
        help_text="The team that owns the campaign (its members see and change it). Default: your only team; "
        "a member of several teams names one; a superuser may leave it empty (superusers only).",
        error_messages={"does_not_exist": "{value!r} is not one of your teams."},
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        request = self.context.get("request")
        if request is not None:  # only the caller's teams (a superuser's: every team)
            self.fields["team"].queryset = teams_for(request.user)  # type: ignore[attr-defined]

    class Meta:
        model = Campaign
        fields = [
            "id",
            "slug",
            "name",
            "description",
            "quota",
            "judges_per_pair",
            "reservation_minutes",
            "is_open",
            "created_at",
            "pairs",
            "training_pairs",
            "volunteers",
            "judgements",
            "volunteer_link",
            "team",
        ]
        read_only_fields = ["id", "created_at"]
        # Blank names are refused (DRF trims them): the schema says a name has a visible character.
        extra_kwargs = {"name": {"validators": [RegexValidator(r"\S", "The name needs a visible character.")]}}

    def get_volunteer_link(self, campaign: Campaign) -> str:
        return f"{settings.SITE_URL}/c/{campaign.slug}/"


class PairSerializer(serializers.ModelSerializer[Pair]):
    campaign = serializers.CharField(source="campaign_slug", read_only=True, help_text="Campaign slug.")
    # "" for a pair that is not a training pair: the schema says so (LabelEnum or BlankEnum).
    expected_label = serializers.ChoiceField(
        choices=LABEL_CHOICES,
        allow_blank=True,
        read_only=True,
        help_text="Expected answer of a training or check pair.",
    )
    judgements = serializers.IntegerField(
        source="judgement_count", read_only=True, help_text="Non-training judgements of this pair."
    )

    class Meta:
        model = Pair
        fields = [
            "id",
            "campaign",
            "external_id",
            "origin",
            "source",
            "hypothesis",
            "gold_label",
            "gold_score",
            "system",
            "is_training",
            "is_check",
            "training_position",
            "expected_label",
            "explanation",
            "judgements",
            "created_at",
        ]
        read_only_fields = fields


# A sentence as the schema promises it will be accepted: some visible character, no NUL.
SENTENCE_SCHEMA = {"type": "string", "minLength": 1, "pattern": "^[^\\x00]*[^\\s\\x00][^\\x00]*$"}


@extend_schema_field({"type": "string", "minLength": 1, "maxLength": 50, "pattern": "^[-a-zA-Z0-9_]+$"})
class CampaignSlugField(serializers.SlugRelatedField[Campaign]):
    """A campaign named by its slug (the schema gives the slug's form)."""


PAIR_RECORD_SCHEMA = {
    "type": "object",
    "properties": {
        "source": {**SENTENCE_SCHEMA, "description": "First sentence."},
        "hypothesis": {**SENTENCE_SCHEMA, "description": "Second sentence (a paraphrase or not)."},
    },
    "required": ["source", "hypothesis"],
    "additionalProperties": True,
    "description": (
        "A record: `source` and `hypothesis`, and optionally `id`/`external_id`, `origin`, `system`, "
        "`label`/`gold_label`, `gold_score`, the training fields (`training_position`, "
        "`expected_label`, `explanation`) and `check` (true for an attention check, with its "
        "`expected_label`), as in a CSV or JSONL file; other keys are ignored and listed."
    ),
}


@extend_schema_field({"type": "array", "items": PAIR_RECORD_SCHEMA, "minItems": 1, "maxItems": MAX_BULK_RECORDS})
class PairRecordsField(serializers.ListField):
    """The records of a bulk import; the importer validates each (its messages name the record)."""


@extend_schema_field(GOLD_TARGET_SCHEMA)
class GoldTargetField(serializers.JSONField):
    """A value mapping's target: a number, or exactly paraphrase, non-paraphrase or unlabelled."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, bool) or not (
            isinstance(data, int | float) or data in ("paraphrase", "non-paraphrase", "unlabelled")
        ):
            raise serializers.ValidationError(
                f"{data!r} is not a gold target: a number, paraphrase, non-paraphrase or unlabelled"
            )
        return data


class PairBulkCreateSerializer(serializers.Serializer[Any]):
    """Body of ``POST /api/pairs/``: the records go through the importer, all or nothing."""

    campaign = CampaignSlugField(
        slug_field="slug",
        queryset=Campaign.objects.all(),
        help_text="Slug of the campaign that receives the pairs (an unknown one is a 404).",
        error_messages={"does_not_exist": "No campaign with slug {value!r}."},
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        request = self.context.get("request")
        # Another team's campaign is "no campaign with this slug", as one that does not exist.
        self.fields["campaign"].queryset = campaigns_for(request.user if request is not None else None)  # type: ignore[attr-defined]

    origin = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=100, help_text="Origin of records that name none."
    )
    dry_run = StrictBooleanField(
        required=False, default=False, help_text="Validate everything (database checks included), store nothing."
    )
    pairs = PairRecordsField(
        child=serializers.DictField(),
        allow_empty=False,
        max_length=MAX_BULK_RECORDS,
        help_text=(
            "Records with `source`, `hypothesis` and optionally `id`/`external_id`, `origin`, "
            "`label`/`gold_label`, `gold_score` and the training fields; unknown keys are ignored "
            "and listed in the answer."
        ),
    )
    gold_column = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=200,
        help_text="The key that holds the gold label, whatever its name (e.g. `Human Annotation - Consensus`).",
    )
    gold_as = serializers.ChoiceField(
        choices=list(GOLD_AS_CHOICES),
        required=False,
        default="label",
        help_text="Read the gold key as a binary label or as a graded score (without `gold_map`).",
    )
    gold_map = serializers.DictField(
        child=GoldTargetField(),
        required=False,
        default=dict,
        help_text=f"How the gold values read: {GOLD_MAP_HELP}. A value it does not name refuses the records.",
    )
    gold_constant = serializers.ChoiceField(
        choices=["", *GOLD_CONSTANT_CHOICES],
        required=False,
        default="",
        help_text="Give every record this gold label (records that carry their own are refused).",
    )
    ignore_columns = serializers.ListField(
        child=serializers.CharField(max_length=200, allow_blank=True),
        required=False,
        default=list,
        max_length=MAX_GOLD_MAP_ENTRIES,
        help_text="Keys you mean to ignore: no warning that they look like labels.",
    )
    strict = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Refuse the records (nothing stored) when a key that looks like a label would be ignored.",
    )

    def validate_gold_map(self, value: dict[str, Any]) -> dict[str, Any]:
        if len(value) > MAX_GOLD_MAP_ENTRIES:
            raise serializers.ValidationError(f"at most {MAX_GOLD_MAP_ENTRIES} values")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        try:
            attrs["options"] = ImportOptions(
                gold_column=attrs.get("gold_column", "").strip(),
                gold_as=attrs.get("gold_as", "label"),
                gold_map=attrs.get("gold_map", {}),
                gold_constant=attrs.get("gold_constant", ""),
                ignore_columns=tuple(name for name in attrs.get("ignore_columns", []) if name.strip()),
                strict=attrs.get("strict", False),
            )
        except ImportOptionError as error:
            raise serializers.ValidationError({"gold": [str(error)]}) from None
        return attrs


class ImportReportSerializer(serializers.Serializer[Any]):
    created = serializers.IntegerField()
    format = serializers.CharField()
    training = serializers.IntegerField()
    checks = serializers.IntegerField(help_text="Attention-check pairs among the pairs created.")
    ignored_columns = serializers.ListField(child=serializers.CharField())
    pair_ids = serializers.ListField(child=serializers.IntegerField(), help_text="New pairs, in record order.")
    dry_run = serializers.BooleanField()
    notes = serializers.ListField(child=serializers.CharField(), help_text="Remarks that are not problems.")
    warnings = serializers.ListField(
        child=serializers.CharField(), help_text="Keys that look like labels and were ignored (refused if `strict`)."
    )
    gold_paraphrases = serializers.IntegerField(help_text="Pairs stored with the gold label paraphrase.")
    gold_non_paraphrases = serializers.IntegerField(help_text="Pairs stored with the gold label non-paraphrase.")
    gold_scores = serializers.IntegerField(help_text="Pairs stored with a graded gold score.")


class ImportProblemSerializer(serializers.Serializer[Any]):
    index = serializers.IntegerField(
        allow_null=True, help_text="0-based position in `pairs` (null: the whole request)."
    )
    line = serializers.IntegerField(allow_null=True, help_text="1-based record number, as the importer counts.")
    field = serializers.CharField(allow_blank=True)
    message = serializers.CharField()


class ImportRefusedSerializer(serializers.Serializer[Any]):
    detail = serializers.CharField()
    problem_count = serializers.IntegerField()
    problems = ImportProblemSerializer(many=True, help_text=f"The first {MAX_PROBLEMS_LISTED} problems.")


class PairImportErrorSerializer(serializers.Serializer[Any]):
    """The 400 of a bulk import: refused records (``detail``, ``problem_count``, ``problems``)
    or, for a body that is not a bulk import at all, DRF's field errors (field name -> messages)."""

    detail = serializers.CharField(required=False)
    problem_count = serializers.IntegerField(required=False)
    problems = ImportProblemSerializer(many=True, required=False)


@extend_schema_serializer(component_name="FieldErrors")
class FieldErrorsSerializer(serializers.Serializer[Any]):
    """DRF's errors of a request: each field name maps to its messages (``detail`` for others)."""

    detail = serializers.CharField(required=False)


class JudgementSerializer(serializers.ModelSerializer[Judgement]):
    campaign = serializers.CharField(source="campaign_slug", read_only=True)
    pair_external_id = serializers.CharField(read_only=True)
    volunteer = serializers.SerializerMethodField(help_text="Volunteer pseudonym (a keyed hash, never the token).")
    english_level = serializers.ChoiceField(
        source="volunteer.english_level", choices=[level.value for level in ENGLISH_LEVEL_ORDER], read_only=True
    )
    binary_label = serializers.SerializerMethodField(help_text="Paraphrase or not; null for Don't know.")
    top_sentence = serializers.SerializerMethodField(help_text="Which sentence was shown on top.")
    response_seconds = serializers.FloatField(read_only=True)
    is_check = serializers.BooleanField(
        read_only=True, help_text="An answer to an attention check (never counted in the corpus)."
    )
    excluded = serializers.SerializerMethodField(
        help_text="The campaign's exclusion rule (or staff) leaves this volunteer out of the analyses "
        "when 'exclude flagged volunteers' is on, and out of the pair-level export's counts."
    )
    exclusion_reason = serializers.SerializerMethodField(help_text="Why the volunteer is excluded ('' if not).")

    class Meta:
        model = Judgement
        fields = [
            "id",
            "campaign",
            "pair",
            "pair_external_id",
            "volunteer",
            "english_level",
            "label",
            "binary_label",
            "top_sentence",
            "position",
            "is_training",
            "is_check",
            "excluded",
            "exclusion_reason",
            "shown_at",
            "answered_at",
            "response_seconds",
        ]
        read_only_fields = fields

    def _verdict(self, judgement: Judgement) -> VolunteerQuality | None:
        # One quality pass per campaign of the page (not per row), kept in the context.
        # (A list's rows share the root serializer's context: a dict, typed as a Mapping.)
        verdicts: dict[int, dict[int, VolunteerQuality]] = self.context.setdefault("_verdicts", {})  # type: ignore[attr-defined]
        campaign_id = judgement.pair.campaign_id
        if campaign_id not in verdicts:
            verdicts[campaign_id] = {q.volunteer_id: q for q in campaign_quality(judgement.pair.campaign)}
        return verdicts[campaign_id].get(judgement.volunteer_id)

    def get_excluded(self, judgement: Judgement) -> bool:
        verdict = self._verdict(judgement)
        return bool(verdict and verdict.excluded)

    def get_exclusion_reason(self, judgement: Judgement) -> str:
        verdict = self._verdict(judgement)
        return verdict.exclusion_reason if verdict else ""

    def get_volunteer(self, judgement: Judgement) -> str:
        return volunteer_pseudonym(judgement.volunteer.token)

    def get_binary_label(self, judgement: Judgement) -> bool | None:
        return is_paraphrase(judgement.label)

    def get_top_sentence(self, judgement: Judgement) -> str:
        return "source" if judgement.source_on_top else "hypothesis"


class ExportQuerySerializer(serializers.Serializer[Any]):
    level = serializers.ChoiceField(choices=[level.value for level in Level], default=Level.PAIRS.value)
    format = serializers.ChoiceField(choices=[f.value for f in Format], default=Format.CSV.value)


def problem_payload(problems: list[Any], count: int | None = None) -> dict[str, Any]:
    """The 400 body of a refused bulk import: each problem with its record (0-based ``index``
    in ``pairs`` and the importer's 1-based ``line``) and field; null for the whole request.
    ``count`` is the number of problems found when more were found than kept."""
    items = [
        {
            "index": None if problem.line is None else problem.line - 1,
            "line": problem.line,
            "field": problem.field or "",
            "message": problem.message,
        }
        for problem in problems[:MAX_PROBLEMS_LISTED]
    ]
    count = len(problems) if count is None else count
    shown = "" if count <= MAX_PROBLEMS_LISTED else f" (the first {MAX_PROBLEMS_LISTED} are listed)"
    return {
        "detail": f"Nothing was imported: {count} problem{'s' if count != 1 else ''} in the records{shown}.",
        "problem_count": count,
        "problems": items,
    }
