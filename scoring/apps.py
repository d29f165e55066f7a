from django.apps import AppConfig


class ScoringConfig(AppConfig):
    """Automatic metrics, their scores for every pair, and how they agree with people."""

    name = "scoring"
    verbose_name = "Metric scoring"

    def ready(self) -> None:
        # Queue scores when pairs are imported or judged (the signals fire after commit),
        # and let Celery workers warm their models up and report their heartbeat.
        # The pair-level export (annotate) gets its metric columns from here: annotate never
        # imports scoring.
        from annotate.exports.scores import register_score_source
        from scoring import dispatch, worker
        from scoring.export_scores import ScoringScoreSource

        dispatch.connect_receivers()
        worker.connect_signals()
        register_score_source(ScoringScoreSource())
