"""The Celery application shared by the web process (which only sends) and the workers."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "paraeval.settings")

app = Celery("paraeval")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
