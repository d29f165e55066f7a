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
# The suite starts hundreds of volunteers and API calls from 127.0.0.1 within minutes: the
# production limits would refuse them. tests/test_security_limits.py sets its own.
os.environ.setdefault("PARAEVAL_START_RATE", "1000000/1m")
os.environ.setdefault("PARAEVAL_API_ANON_RATE", "1000000/min")
os.environ.setdefault("PARAEVAL_API_USER_RATE", "1000000/min")
os.environ.setdefault("PARAEVAL_LOGIN_FAILURE_LIMIT", "1000000")  # bad tokens and logins
os.environ.setdefault("PARAEVAL_API_TOKEN_ADDRESS_FAILURE_LIMIT", "1000000")  # bad tokens per address

from paraeval.settings import *  # noqa: E402, F403

# Pages render {% static %} without a collectstatic run; the manifest storage of production
# is exercised by its own test (tests/test_api_schema.py runs collectstatic).
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}  # noqa: F405

# The rate limits' counters and the kept analyses are files shared by every process of one data
# folder. The fast lane's processes (pytest-xdist) each have their own database, so two of them can
# hold a user or a campaign with the same id: one's API calls would count against the other's
# throttle test, and one's analysis could be read (or cleared) by the other. One folder per process.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
for _name in ("limits", "analyses"):
    if _WORKER and CACHES[_name]["BACKEND"] == "paraeval.cache.SharedFileCache":  # noqa: F405
        CACHES[_name] = {**CACHES[_name], "LOCATION": str(Path(str(CACHES[_name]["LOCATION"])) / _WORKER)}  # noqa: F405
