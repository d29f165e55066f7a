from django.apps import AppConfig


class ScoringConfig(AppConfig):
    """Automatic metrics, their scores for every pair, and how they agree with people."""

    name = "scoring"
    verbose_name = "Metric scoring"
