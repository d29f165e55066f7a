"""The Celery application shared by the web process (which only sends) and the workers."""

from __future__ import annotations

import os

from celery import Celery
from kombu.transport import TRANSPORT_ALIASES

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "paraeval.settings")
# Celery's Django fix-up runs the system checks at worker start, which imports the URL conf and
# every view module (the dashboard's statistics libraries among them): ~160 MB and seconds per
# worker for checks that `manage.py migrate` already runs. Set CELERY_SKIP_CHECKS= to run them.
os.environ.setdefault("CELERY_SKIP_CHECKS", "1")

# The embedded broker (no REDIS_URL): kombu's filesystem transport with atomic writes.
TRANSPORT_ALIASES["paraevalfs"] = "paraeval.filesystem_broker:Transport"

app = Celery("paraeval")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Each package with Celery tasks has a tasks module (found by name: no import at start-up).
app.autodiscover_tasks(
    ["annotate", "scoring.pipeline", "scoring.reports", "scoring.generation", "scoring.tuning", "scoring.probes"]
)
