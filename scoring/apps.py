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
        from scoring.metrics import environment
        from scoring.pipeline import dispatch, metric_settings, worker
        from scoring.reports import stopping_queue
        from scoring.reports.export_scores import ScoringScoreSource

        # The metric library reads no Django setting: it asks this provider (and the check names
        # a bad PARAPLUIE_MODELS before anything runs).
        environment.use(metric_settings.from_settings)
        dispatch.connect_receivers()
        stopping_queue.connect_receivers()
        _forget_state_on_exclusion_changes()
        worker.connect_signals()
        register_score_source(ScoringScoreSource())


def _forget_state_on_exclusion_changes() -> None:
    """A staff override or a campaign's rule changes who is excluded without changing any id
    the analyses' change stamp watches: drop the campaign's cached state when they change."""
    from django.db import transaction
    from django.db.models.signals import post_save

    from annotate.models import Campaign, Volunteer
    from annotate.signals import exclusions_changed
    from scoring.reports.state import forget_state  # light: not the analyses themselves

    def on_exclusions_changed(sender: object, campaign_id: int, **kwargs: object) -> None:
        forget_state(campaign_id)

    # After the commit: dropped earlier, a poll could cache the old state again before it lands.
    def on_campaign_saved(sender: object, instance: Campaign, **kwargs: object) -> None:
        campaign_id = instance.pk
        transaction.on_commit(lambda: forget_state(campaign_id))

    def on_volunteer_saved(sender: object, instance: Volunteer, **kwargs: object) -> None:
        campaign_id = instance.campaign_id
        transaction.on_commit(lambda: forget_state(campaign_id))

    exclusions_changed.connect(on_exclusions_changed, weak=False, dispatch_uid="scoring.forget_state.exclusions")
    post_save.connect(on_campaign_saved, sender=Campaign, weak=False, dispatch_uid="scoring.forget_state.campaign")
    post_save.connect(on_volunteer_saved, sender=Volunteer, weak=False, dispatch_uid="scoring.forget_state.volunteer")
