"""Campaigns, the pairs they ask about, the volunteers who answer and what they answer."""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models, transaction
from django.db.models import Q
from django.utils import timezone

from annotate.labels import ENGLISH_LEVEL_ORDER, LABEL_DISPLAY, LABEL_ORDER
from annotate.pseudonyms import volunteer_pseudonym

LABEL_CHOICES = [(label.value, LABEL_DISPLAY[label]) for label in LABEL_ORDER]
ENGLISH_LEVEL_CHOICES = [(level.value, level.value.capitalize()) for level in ENGLISH_LEVEL_ORDER]


def new_volunteer_token() -> str:
    """An unguessable URL-safe token (256 bits) identifying one volunteer."""
    return secrets.token_urlsafe(32)


def default_reservation_minutes() -> int:
    return settings.PARAEVAL_RESERVATION_MINUTES


# Default exclusion rule (docs/how-to/crowd-campaigns.md gives the evidence): reading two sentences
# takes seconds; a median under 2 s per pair is faster than anyone reads them (1,100 words a
# minute on the median MRPC pair).
DEFAULT_EXCLUDE_MEDIAN_SECONDS = 2.0
DEFAULT_EXCLUDE_SAME_ANSWER_SHARE = 0.9

CAMPAIGN_LANGUAGE_CHOICES = [("en", "English"), ("fr", "French")]
# How the allocator orders a campaign's pool (scoring/selection.py plans the adaptive order).
SELECTION_CHOICES = [
    ("balanced", "Balanced (every pair equally likely)"),
    ("adaptive", "Adaptive (where the metrics disagree first)"),
]
PLATFORM_CHOICES = [("", "None (volunteers)"), ("prolific", "Prolific"), ("generic", "Other platform (URL parameters)")]


def parse_positions(text: str) -> list[int]:
    """'5, 20, 40' -> [5, 20, 40]; raises ValueError naming the bad item."""
    positions = []
    for item in text.replace(";", ",").split(","):
        item = item.strip()
        if not item:
            continue
        if not item.isdigit() or int(item) < 1:
            raise ValueError(f"{item!r} is not a position (a whole number from 1)")
        positions.append(int(item))
    return sorted(set(positions))


def validate_positions(text: str) -> None:
    """Model validator of ``Campaign.check_positions``."""
    try:
        parse_positions(text)
    except ValueError as error:
        raise ValidationError(str(error)) from None


def parse_metric_names(text: str) -> list[str]:
    """'bleu, bertscore' -> ['bleu', 'bertscore']; empty -> [] (all metrics); raises ValueError
    saying what is wrong: adaptive selection compares exactly two distinct metrics, or all."""
    names = [item.strip() for item in text.replace(";", ",").split(",") if item.strip()]
    if not names:
        return []
    if len(names) != 2:
        raise ValueError(
            f"name exactly two metrics separated by a comma, e.g. 'bleu, bertscore' (or none for all metrics); "
            f"got {len(names)}: {', '.join(names)}"
        )
    if names[0] == names[1]:
        raise ValueError(f"the two metrics must differ; got {names[0]!r} twice")
    return names


def validate_metric_names(text: str) -> None:
    """Model validator of ``Campaign.selection_metrics``."""
    try:
        parse_metric_names(text)
    except ValueError as error:
        raise ValidationError(str(error)) from None


def new_shuffle_key() -> int:
    """A random 31-bit key per pair: the allocator's per-volunteer shuffle walks pairs by it."""
    return secrets.randbelow(2**31)


def campaign_label(name: str, slug: str) -> str:
    """How menus name a campaign: ``Spring study (spring-2026)``; the slug tells apart two of one name."""
    return f"{name} ({slug})"


class Campaign(models.Model):
    """One annotation campaign: a pool of pairs, a training trial and its rules."""

    # No angle brackets: the admin shows help text as HTML, where "<slug>" disappears.
    slug = models.SlugField(
        unique=True, help_text="Used in the volunteer link /c/SLUG/ (letters, digits, hyphens and underscores)."
    )
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    quota = models.PositiveSmallIntegerField(
        default=50,
        validators=[MinValueValidator(1)],
        help_text="Campaign pairs per volunteer, training pairs not included.",
    )
    judges_per_pair = models.PositiveSmallIntegerField(
        default=1,
        validators=[MinValueValidator(1)],
        help_text="Target number of judgements per pair; 2 or more makes agreement measurable.",
    )
    reservation_minutes = models.PositiveSmallIntegerField(
        default=default_reservation_minutes,
        validators=[MinValueValidator(1)],
        help_text="How long a served pair stays reserved for the volunteer it was shown to.",
    )
    is_open = models.BooleanField(default=True, help_text="Closed campaigns accept no new volunteers.")
    close_when_full = models.BooleanField(
        default=False,
        help_text="Close the campaign by itself once every pair has all its judges (useful on a paid platform).",
    )
    selection = models.CharField(
        max_length=10,
        choices=SELECTION_CHOICES,
        default="balanced",
        help_text="Which pairs come first. Adaptive serves the pairs where the compared metrics disagree most "
        "first; the dashboard then weights every statistic by the inverse of each pair's inclusion probability.",
    )
    selection_metrics = models.CharField(
        max_length=300,
        blank=True,
        default="",
        validators=[validate_metric_names],
        help_text="Adaptive selection: the two metric names compared, e.g. 'bleu, bertscore' (empty: all metrics).",
    )
    language = models.CharField(
        max_length=10,
        choices=CAMPAIGN_LANGUAGE_CHOICES,
        default="en",
        help_text="Language of the pairs and of the volunteer pages (volunteers may switch the pages' language).",
    )
    # Attention checks: pairs with an expected answer, shown among the campaign pairs.
    check_positions = models.CharField(
        max_length=200,
        blank=True,
        validators=[validate_positions],
        help_text="Where check pairs appear among a volunteer's campaign pairs, e.g. '5, 20, 40'.",
    )
    check_every = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Or: one check pair after every N campaign pairs (used when no positions are given).",
    )
    # The exclusion rule: a volunteer who breaks it is flagged (staff may override).
    exclude_failed_checks = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        default=1,
        help_text="Flag a volunteer who failed this many check pairs or more (empty: never).",
    )
    exclude_median_seconds = models.FloatField(
        null=True,
        blank=True,
        default=DEFAULT_EXCLUDE_MEDIAN_SECONDS,
        help_text="Flag a volunteer whose median time per campaign pair is under this many seconds (empty: never).",
    )
    exclude_same_answer_share = models.FloatField(
        null=True,
        blank=True,
        default=DEFAULT_EXCLUDE_SAME_ANSWER_SHARE,
        help_text="Flag a volunteer who gave one answer to more than this share of their pairs, e.g. 0.9 (empty: off).",
    )
    # Crowd platforms (Prolific first; generic URL parameters for others).
    platform = models.CharField(
        max_length=20,
        choices=PLATFORM_CHOICES,
        blank=True,
        default="",
        help_text="Recruit through a crowd platform: the link then takes its participant identifiers.",
    )
    accepts_plain_link = models.BooleanField(
        default=False,
        help_text="Also take volunteers through the plain link, without a participant ID (e.g. lab volunteers "
        "beside Prolific participants); they get no completion code.",
    )
    participant_param = models.CharField(max_length=50, default="PROLIFIC_PID", help_text="URL parameter: participant.")
    study_param = models.CharField(max_length=50, default="STUDY_ID", help_text="URL parameter: study.")
    session_param = models.CharField(max_length=50, default="SESSION_ID", help_text="URL parameter: session.")
    completion_code = models.CharField(
        max_length=100, blank=True, help_text="Shown after the last judgement, only to volunteers the rule keeps."
    )
    screened_out_code = models.CharField(
        max_length=100, blank=True, help_text="Shown instead to volunteers the exclusion rule flags (empty: none)."
    )
    completion_url = models.CharField(
        max_length=500,
        blank=True,
        default="https://app.prolific.com/submissions/complete?cc={code}",
        help_text="Where the end page sends the participant; {code} is replaced by their code.",
    )
    is_public = models.BooleanField(
        default=False,
        help_text="Invite visitors of the site's home page to this campaign (one campaign at a time; "
        "PARAEVAL_PUBLIC_CAMPAIGN, when set, names it instead).",
    )
    # The team that owns the campaign: its members and the superusers see and change it, no
    # other staff account does (annotate/teams.py). No team: superusers only, the safe default.
    team = models.ForeignKey(
        "auth.Group",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="campaigns",
        help_text="The team whose members see and change this campaign (empty: superusers only).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.label

    def save(self, *args: Any, **kwargs: Any) -> None:
        """One public campaign at a time: making this one public makes the others private."""
        with transaction.atomic():
            super().save(*args, **kwargs)
            if self.is_public:
                Campaign.objects.filter(is_public=True).exclude(pk=self.pk).update(is_public=False)

    def clean(self) -> None:
        """The order of the pool is fixed once volunteers judged: the pairs judged so far were drawn
        with it, and the dashboard's weights must describe how they were drawn."""
        super().clean()
        if self.pk is None:
            return
        stored = Campaign.objects.filter(pk=self.pk).values_list("selection", "selection_metrics").first()
        if stored is None or stored == (self.selection, self.selection_metrics):
            return
        judged = Judgement.objects.filter(pair__campaign_id=self.pk, is_training=False, is_check=False).exists()
        if judged:
            field = "selection" if stored[0] != self.selection else "selection_metrics"
            raise ValidationError(
                {
                    field: "The selection cannot change once volunteers have judged campaign pairs: the pairs "
                    "judged so far were drawn with the current one, and the statistics weight them by it. "
                    "Clone the campaign to start one with another selection."
                }
            )

    @property
    def label(self) -> str:
        """The name with the slug: two campaigns may share a name, never a slug (menus, selects)."""
        return campaign_label(self.name, self.slug)


class Pair(models.Model):
    """A (source, hypothesis) pair to judge; training pairs carry the expected answer."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="pairs")
    external_id = models.CharField(
        max_length=200, blank=True, default="", help_text="Identifier in the imported file (unique per campaign)."
    )
    origin = models.CharField(
        max_length=100, blank=True, default="", help_text="Corpus the pair comes from (mrpc, paws, llm, demo…)."
    )
    source = models.TextField()
    hypothesis = models.TextField()
    gold_label = models.BooleanField(
        null=True, blank=True, help_text="Imported binary gold label: paraphrase or not (MRPC, PAWS)."
    )
    gold_score = models.FloatField(null=True, blank=True, help_text="Imported graded gold score (e.g. STS 0-5).")
    is_training = models.BooleanField(default=False)
    is_check = models.BooleanField(
        default=False,
        help_text="An attention check: has an expected answer, looks like any pair, never counted in the corpus.",
    )
    training_position = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Order of a training pair in the training trial (1-5)."
    )
    expected_label = models.CharField(max_length=20, choices=LABEL_CHOICES, blank=True)
    explanation = models.TextField(blank=True, help_text="Shown after a training answer.")
    judgement_count = models.PositiveIntegerField(
        default=0,
        editable=False,
        help_text="Campaign (non-training) judgements of this pair; kept in step with the Judgement rows "
        "in the transaction that stores them, so the allocator can walk an index instead of counting.",
    )
    system = models.CharField(
        max_length=100,
        blank=True,
        default="",
        help_text="The system that produced the hypothesis (for system-level agreement); empty if unknown.",
    )
    shuffle_key = models.PositiveIntegerField(
        default=new_shuffle_key,
        editable=False,
        help_text="Random key: each volunteer walks the pairs from their own random point of this order.",
    )
    # Adaptive selection (scoring/selection.py): the pair's draw weight q in (0, 1] and its order
    # key u / q (u uniform, seeded). Pairs are served by increasing key, so the pairs served once
    # the keys reach t are a Poisson sample with inclusion probability min(1, t q). Written by the
    # planner only while the campaign has no campaign judgement, so the weight in force when a
    # pair's first judgement is stored is the one it was drawn with.
    selection_probability = models.FloatField(
        null=True, blank=True, editable=False, help_text="Adaptive selection: the pair's draw weight (0 to 1]."
    )
    selection_key = models.FloatField(
        null=True, blank=True, editable=False, help_text="Adaptive selection: the pair's order key (u / weight)."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "external_id"],
                condition=~Q(external_id=""),
                name="pair_external_id_unique_per_campaign",
            ),
            models.UniqueConstraint(
                fields=["campaign", "training_position"],
                condition=Q(is_training=True),
                name="pair_training_position_unique_per_campaign",
            ),
            models.CheckConstraint(
                condition=Q(is_training=False) | Q(training_position__isnull=False),
                name="pair_training_has_position",
            ),
        ]
        indexes = [
            models.Index(fields=["campaign", "is_training"], name="pair_campaign_training_idx"),
            # The allocator walks this index in "fewest judgements first" order and stops early.
            models.Index(
                fields=["campaign", "judgement_count", "shuffle_key"],
                condition=Q(is_training=False),
                name="pair_shuffled_allocation_idx",
            ),
            # Volunteer pages count and pick a campaign's check pairs (a handful among up to a
            # million pairs): without it that count reads every pair of the campaign.
            models.Index(fields=["campaign"], condition=Q(is_check=True), name="pair_campaign_checks_idx"),
            # The pair list's menus list a campaign's origins and systems by skipping through
            # these (scoring.reports.pair_pages): a step per value, not a read of every pair.
            models.Index(fields=["campaign", "origin"], name="pair_campaign_origin_idx"),
            models.Index(fields=["campaign", "system"], name="pair_campaign_system_idx"),
        ]

    def __str__(self) -> str:
        return self.external_id or f"pair {self.pk}"


class Volunteer(models.Model):
    """An anonymous volunteer, known only by an unguessable token (cookie and URL)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="volunteers")
    token = models.CharField(max_length=64, unique=True, default=new_volunteer_token, editable=False)
    english_level = models.CharField(max_length=10, choices=ENGLISH_LEVEL_CHOICES)
    consented_at = models.DateTimeField(default=timezone.now)
    guidelines_seen_at = models.DateTimeField(
        null=True, blank=True, help_text="When the volunteer left the guidelines step for the training."
    )
    training_done_seen_at = models.DateTimeField(
        null=True, blank=True, help_text="When the volunteer saw the page that says the training is over."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Crowd-platform identifiers (empty for volunteers who came through the plain link).
    participant_id = models.CharField(max_length=100, blank=True, default="")
    study_id = models.CharField(max_length=100, blank=True, default="")
    session_id = models.CharField(max_length=100, blank=True, default="")
    returned_at = models.DateTimeField(
        null=True, blank=True, help_text="When the participant gave the study back early (their pairs were freed)."
    )
    exclusion_override = models.CharField(
        max_length=10,
        choices=[("", "Follow the campaign's rule"), ("include", "Keep (override)"), ("exclude", "Exclude (override)")],
        blank=True,
        default="",
    )
    exclusion_note = models.CharField(max_length=300, blank=True, help_text="Why staff overrode the rule.")
    reservation_lapsed_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When a reservation of theirs ran out unanswered; until their next answer they hold no pair.",
    )
    # The record of the end page, written when the volunteer first reaches it: the rule's
    # verdict at that moment and the code shown (later rule changes never rewrite it). A record
    # without a code is written again when the volunteer judged pairs after it.
    verdict_at = models.DateTimeField(
        null=True, blank=True, help_text="When the exclusion rule judged the volunteer, at the end (once)."
    )
    verdict_reasons = models.CharField(
        max_length=300, blank=True, default="", help_text="What the rule found at the end ('' when it kept them)."
    )
    completion_kind = models.CharField(
        max_length=20,
        blank=True,
        default="",
        help_text="Which code the end page showed: completed, screened_out, none, full.",
    )
    completion_code_shown = models.CharField(max_length=100, blank=True, default="", help_text="The code shown.")
    completion_shown_at = models.DateTimeField(null=True, blank=True, help_text="When the code was first shown.")

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "participant_id"],
                condition=~Q(participant_id=""),
                name="volunteer_participant_unique_per_campaign",
            ),
        ]

    def __str__(self) -> str:
        # The pseudonym of the exports and the API: the token is a credential, never shown.
        return f"volunteer {volunteer_pseudonym(self.token)}"


class Assignment(models.Model):
    """A pair served to a volunteer: the stored top/bottom draw and the reservation.

    An assignment without a judgement reserves its pair until ``expires_at``; after that the
    pair returns to the pool. Allocation counts come from judgements, not from assignments.
    """

    volunteer = models.ForeignKey(Volunteer, on_delete=models.CASCADE, related_name="assignments")
    pair = models.ForeignKey(Pair, on_delete=models.CASCADE, related_name="assignments")
    source_on_top = models.BooleanField(help_text="Whether the source sentence is shown above the hypothesis.")
    position = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Place of this pair in the volunteer's sequence (1 = first, training included).",
    )
    shown_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    answered_at = models.DateTimeField(
        null=True, blank=True, help_text="Set in the transaction that stores the judgement; ends the reservation."
    )

    class Meta:
        ordering = ["shown_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["volunteer", "pair"], name="assignment_unique_volunteer_pair"),
        ]
        indexes = [
            # Active reservations of a pair: unanswered assignments, by expiry.
            models.Index(
                fields=["pair", "expires_at"],
                condition=Q(answered_at__isnull=True),
                name="assignment_open_pair_idx",
            ),
            # Every active reservation (not expired yet): a campaign's held places are read
            # from these few rows, not from its pairs.
            models.Index(fields=["expires_at"], condition=Q(answered_at__isnull=True), name="assignment_active_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.pair} for {self.volunteer}"

    @property
    def is_answered(self) -> bool:
        return self.answered_at is not None


class Judgement(models.Model):
    """One answer of one volunteer about one pair, stored once (unique constraint)."""

    # No index of their own: the (volunteer, pair) key and the (pair, is_training) index lead
    # with these columns. A single-column copy is smaller, so the planner may take it for a
    # lookup by both columns; the pair's copy then reads every volunteer's answer to a training
    # or check pair (all of the campaign's volunteers) to find one.
    volunteer = models.ForeignKey(Volunteer, on_delete=models.CASCADE, related_name="judgements", db_index=False)
    pair = models.ForeignKey(Pair, on_delete=models.CASCADE, related_name="judgements", db_index=False)
    label = models.CharField(max_length=20, choices=LABEL_CHOICES)
    source_on_top = models.BooleanField()
    position = models.PositiveIntegerField(
        null=True, blank=True, help_text="Place of the pair in the volunteer's sequence (1 = first, training included)."
    )
    is_training = models.BooleanField(default=False, help_text="Training answers never count in the corpus.")
    is_check = models.BooleanField(default=False, help_text="Answers to check pairs never count in the corpus.")
    shown_at = models.DateTimeField()
    answered_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["answered_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["volunteer", "pair"], name="judgement_unique_volunteer_pair"),
        ]
        indexes = [
            models.Index(fields=["pair", "is_training"], name="judgement_pair_training_idx"),
            models.Index(fields=["answered_at"], name="judgement_answered_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.get_label_display()} on {self.pair}"

    @property
    def response_seconds(self) -> float:
        return (self.answered_at - self.shown_at).total_seconds()


class UploadState(models.TextChoices):
    """Where an upload stands: its dry run and import move it along, staff may discard it."""

    UPLOADED = "uploaded", "Uploaded: not checked yet"
    CHECK_QUEUED = "check_queued", "Dry run queued"
    CHECKED = "checked", "Dry run passed"
    IMPORT_QUEUED = "import_queued", "Import queued"
    IMPORTED = "imported", "Imported"
    REFUSED = "refused", "Refused: see the problems"
    FAILED = "failed", "Failed: an unexpected error"
    DISCARDED = "discarded", "Discarded: the file was deleted"


class PairUpload(models.Model):
    """A file of pairs uploaded by staff from the browser, its mapping, dry run and import.

    The file lies on disk under ``PARAEVAL_DATA_DIR/uploads`` (shared with the workers); the
    dry run and the import run as a Celery task (:mod:`annotate.uploads`), which writes the
    outcome here in the import's own transaction.
    """

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="uploads")
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    key = models.CharField(max_length=40, unique=True, help_text="Name of the stored file and its progress file.")
    filename = models.CharField(max_length=255, help_text="The file's name on the uploader's computer.")
    size = models.BigIntegerField(default=0)
    format = models.CharField(max_length=10, default="auto")
    column_map = models.JSONField(default=dict, blank=True, help_text="Column -> pair field ('' ignores it).")
    origin = models.CharField(max_length=100, blank=True, default="")
    gold_options = models.JSONField(
        default=dict, blank=True, help_text="The importer's gold options: gold_map (text), gold_constant, strict."
    )
    state = models.CharField(max_length=20, choices=UploadState.choices, default=UploadState.UPLOADED)
    checked_map = models.JSONField(
        null=True, blank=True, help_text="The format and mapping of the last dry run that passed."
    )
    problems = models.JSONField(default=list, blank=True, help_text="[line, field, message] of the last refusal.")
    problem_count = models.PositiveIntegerField(default=0)
    report = models.JSONField(null=True, blank=True, help_text="The summary of the last dry run or import.")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.filename} -> {self.campaign.slug}"


class CorpusObjective(models.Model):
    """What one corpus of a campaign (its pairs of one ``origin``) asks of a paraphrase detector,
    as in PARAPHRASUS (Michail et al., COLING 2025): classify by the gold labels, call none of
    its pairs a paraphrase (minimise) or call every pair one (maximise).

    Kept per (campaign, origin), not per campaign nor per pair: one campaign holds several
    corpora (the benchmark's overall figure needs the three objectives side by side), and every
    pair of a corpus shares its objective, so storing it on each pair would only let it disagree.
    """

    class Objective(models.TextChoices):
        CLASSIFY = "classify", "classify (by the gold labels)"
        MINIMISE = "minimise", "minimise (no pair is a paraphrase)"
        MAXIMISE = "maximise", "maximise (every pair is a paraphrase)"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="corpus_objectives")
    origin = models.CharField(max_length=100, help_text="The corpus: the origin of its pairs.")
    objective = models.CharField(max_length=10, choices=Objective.choices)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["campaign", "origin"]
        constraints = [models.UniqueConstraint(fields=["campaign", "origin"], name="one_objective_per_corpus")]

    def __str__(self) -> str:
        return f"{self.campaign.slug}/{self.origin}: {self.objective}"


class CampaignTally(models.Model):
    """One stripe of a campaign's row counts, kept by the database on every write (never written by Python).

    Triggers (migrations ``campaign_tallies_kept_by_triggers`` then ``campaign_tallies_striped``)
    add the rows of every INSERT into, and take off those of every DELETE from, the pairs,
    judgements and volunteers tables, in the transaction that writes them (bulk imports,
    answers, the admin, cascades and raw SQL alike), so a staff page reads a campaign's size
    from a few rows instead of counting a million. A campaign's counts are spread over
    :attr:`STRIPES` rows, the stripe chosen from the row written (a judgement's and a
    volunteer's from the volunteer's id, a pair's from its id): two volunteers answering at
    once update different rows, instead of the second waiting for the first's transaction to
    commit. ``changes`` counts every write that can change an analysis of the campaign (migration
    ``campaign_change_counters``): it only grows, so its sum is the dashboard's fingerprint. A
    stripe alone means nothing (one may even be negative); the campaign's count is the
    sum of its stripes, which :mod:`annotate.tallies` reads (and counts again, for the tests that
    hold the triggers to COUNT(*)). On PostgreSQL one statement-level trigger per table and event
    writes both the counts and the change counter, each stripe once and in (campaign, stripe)
    order (migration ``campaign_tallies_one_trigger_per_statement``): concurrent bulk writes queue
    instead of deadlocking.
    """

    STRIPES = 16  # the migration's triggers write stripes 0 .. STRIPES - 1

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="tallies")
    stripe = models.SmallIntegerField(help_text="Which of the campaign's rows: the written row's id modulo STRIPES.")
    pairs = models.BigIntegerField(default=0, help_text="Corpus pairs: neither training nor attention checks.")
    checks = models.BigIntegerField(default=0, help_text="Attention-check pairs (not training).")
    judgements = models.BigIntegerField(default=0, help_text="Judgements of corpus pairs (not training, not checks).")
    volunteers = models.BigIntegerField(default=0, help_text="Volunteers who started the campaign.")
    changes = models.BigIntegerField(
        db_default=0, help_text="Writes that can change an analysis (only grows): the dashboard's fingerprint."
    )
    changed_at = models.DateTimeField(blank=True, null=True, help_text="When such a write last happened.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "stripe"], name="one_tally_per_campaign_stripe")]

    def __str__(self) -> str:
        return f"{self.campaign_id}/{self.stripe}: {self.pairs} pairs, {self.judgements} judgements"


class JudgedPairsTally(models.Model):
    """How many corpus pairs of a campaign have at least ``level`` judgements, per stripe: kept by
    PostgreSQL triggers on the pairs table (migration ``judged_pairs_tallies_kept_by_triggers``).

    The judgements a campaign still needs are ``judges_per_pair * pairs - Σ min(judgement_count,
    judges_per_pair)``, and that sum is the number of pairs at level 1, 2, … up to the target:
    :func:`annotate.allocation.places` reads it from these rows instead of walking every pair
    that lacks judges. Counting per level keeps the rows exact whatever the target (staff may
    change ``judges_per_pair`` at any time) and whoever writes ``Pair.judgement_count`` (the
    answer's signal, a recount, a test, raw SQL). A pair counts in the stripe of its id modulo
    :attr:`STRIPES`, so two answers on different pairs seldom wait on one row. One stripe alone
    means nothing; on SQLite the table stays empty (the embedded database counts the pairs).
    """

    STRIPES = 16  # the migration's triggers write stripes 0 .. STRIPES - 1

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="judged_tallies")
    stripe = models.SmallIntegerField(help_text="The pair's id modulo STRIPES.")
    level = models.IntegerField(help_text="A number of judgements (1 or more).")
    pairs = models.BigIntegerField(default=0, help_text="Corpus pairs with at least `level` judgements.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "stripe", "level"], name="one_judged_tally_per_level")
        ]

    def __str__(self) -> str:
        return f"{self.campaign_id}/{self.stripe}: {self.pairs} pairs with {self.level}+ judgements"
