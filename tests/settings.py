"""Settings for the test run: the production settings, read with a test key and data folder.

The environment is set before ``paraeval.settings`` is imported, because that module reads it
at import time. Nothing else differs from production.
"""

import os
from pathlib import Path

os.environ.setdefault("SECRET_KEY", "test-only-secret-key-not-for-production")
_DATA = Path(__file__).resolve().parent.parent / "data"
os.environ.setdefault("PARAEVAL_DATA_DIR", str(_DATA / "test"))
# WordNet is installed once per checkout by scripts/setup.sh, not per data folder.
os.environ.setdefault("NLTK_DATA", str(_DATA / "nltk_data"))

from paraeval.settings import *  # noqa: E402, F403

# Pages render {% static %} without a collectstatic run; the manifest storage of production
# is exercised by its own test (tests/test_api_schema.py runs collectstatic).
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}  # noqa: F405
