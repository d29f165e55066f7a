"""WSGI entry point (gunicorn paraeval.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "paraeval.settings")

application = get_wsgi_application()
