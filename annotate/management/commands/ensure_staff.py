"""Make sure a staff account exists, and say how to log in.

Creates the superuser ``PARAEVAL_ADMIN_USER`` (default ``admin``) when no superuser exists,
with ``PARAEVAL_ADMIN_PASSWORD`` or a random password written to ``<data>/admin_password.txt``
(readable by the owner only). When one exists, reports it and changes nothing. The password is
never printed: terminals are shared, scrolled back and logged; the message says where it is.
"""

from __future__ import annotations

import os
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create a staff superuser if none exists, or report the existing one."

    def handle(self, *args: object, **options: object) -> None:
        users = get_user_model()
        existing = users.objects.filter(is_superuser=True, is_active=True).order_by("id").first()
        password_file = settings.DATA_DIR / "admin_password.txt"
        if existing is not None:
            hint = f" (password in {password_file})" if password_file.exists() else ""
            self.stdout.write(f"Staff account: {existing.get_username()}{hint}")
            return
        username = os.environ.get("PARAEVAL_ADMIN_USER", "admin")
        password = os.environ.get("PARAEVAL_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
        users.objects.create_superuser(username=username, email="", password=password)
        if "PARAEVAL_ADMIN_PASSWORD" in os.environ:
            where = "the password you set in PARAEVAL_ADMIN_PASSWORD"
        else:
            password_file.parent.mkdir(parents=True, exist_ok=True)
            password_file.touch(mode=0o600)
            password_file.write_text(password + "\n", encoding="utf-8")
            where = f"password in {password_file}"
        self.stdout.write(self.style.SUCCESS(f"Created staff account: {username} ({where})"))
