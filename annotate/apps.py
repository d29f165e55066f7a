from django.apps import AppConfig


class AnnotateConfig(AppConfig):
    """Campaigns, paraphrase pairs, volunteers and their judgements."""

    name = "annotate"
    verbose_name = "Annotation campaigns"

    def ready(self) -> None:
        from annotate import counters, teams

        counters.connect()
        teams.register()
