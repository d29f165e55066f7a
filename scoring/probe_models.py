"""A probe set: a campaign of its own whose pairs were built from another campaign's pairs,
each carrying the relation it was built to have (``scoring.probes``).

The probe pairs are ordinary :class:`~annotate.models.Pair` rows of a closed campaign (no
volunteer is ever sent there), so the workers score them like any pair and the volunteers'
pairs and agreement figures never see them; what makes them probes is stored here, beside them.
"""

from __future__ import annotations

from django.db import models


class ProbeSet(models.Model):
    """The probe campaign (``campaign``) built from ``source_campaign`` with one seed and pipeline."""

    campaign = models.OneToOneField("annotate.Campaign", on_delete=models.CASCADE, related_name="probe_set")
    source_campaign = models.ForeignKey(
        "annotate.Campaign", null=True, blank=True, on_delete=models.SET_NULL, related_name="probe_sets_built"
    )
    source_origin = models.CharField(max_length=100, blank=True, default="", help_text="Only this corpus ('' all).")
    seed = models.BigIntegerField()
    kinds = models.JSONField(default=list, help_text="The probe kinds asked for.")
    pipeline = models.CharField(max_length=200, help_text="The parser that tagged the sentences (name and version).")
    sources = models.PositiveIntegerField(default=0, help_text="Source pairs read.")
    request_key = models.CharField(
        max_length=40, blank=True, default="", help_text="The queued request that built it (stored once)."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # A request delivered twice builds one probe set: the second insert fails here.
            models.UniqueConstraint(
                fields=["request_key"], condition=~models.Q(request_key=""), name="probe_set_request_once"
            )
        ]

    def __str__(self) -> str:
        return f"probes of {self.source_campaign_id} in {self.campaign_id}"


class ProbePair(models.Model):
    """What one probe pair was built to be."""

    pair = models.OneToOneField("annotate.Pair", on_delete=models.CASCADE, related_name="probe")
    probe_set = models.ForeignKey(ProbeSet, on_delete=models.CASCADE, related_name="probe_pairs")
    kind = models.CharField(max_length=20)
    group = models.CharField(max_length=200, help_text="The source pair it was built from (the bootstrap's unit).")
    source_pair = models.ForeignKey(
        "annotate.Pair", null=True, blank=True, on_delete=models.SET_NULL, related_name="probes_built"
    )
    expected_paraphrase = models.BooleanField(null=True, blank=True)
    swaps = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Multi-swap: swaps made (0: original).")
    detail = models.CharField(max_length=300, blank=True, default="", help_text="What was changed.")

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["probe_set", "kind"], name="probe_pair_set_kind_idx")]

    def __str__(self) -> str:
        return f"{self.kind} probe of {self.group}"
