"""ParaEval: human paraphrase judgements, automatic metrics, and how well they agree."""

from paraeval.celery import app as celery_app

__all__ = ["celery_app"]
