"""ParaEval: human paraphrase judgements, automatic metrics, and how well they agree."""

from paraeval.celery import app as celery_app

# The version written into campaign definitions (annotate.definitions); pyproject.toml's too.
__version__ = "0.1.0"

__all__ = ["__version__", "celery_app"]
