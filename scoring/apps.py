from django.apps import AppConfig


class ScoringConfig(AppConfig):
    """Automatic metrics, their scores for every pair, and how they agree with people."""

    name = "scoring"
    verbose_name = "Metric scoring"

    def ready(self) -> None:
        # Queue scores when pairs are imported or judged (the signals fire after commit),
        # and let Celery workers warm their models up and report their heartbeat.
        from scoring import dispatch, worker

        dispatch.connect_receivers()
        worker.connect_signals()
