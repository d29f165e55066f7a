from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command


@pytest.mark.django_db
def test_creates_one_superuser_then_reports_it(settings, tmp_path, monkeypatch):
    settings.DATA_DIR = tmp_path
    monkeypatch.delenv("PARAEVAL_ADMIN_PASSWORD", raising=False)
    out = StringIO()
    call_command("ensure_staff", stdout=out)
    password = (tmp_path / "admin_password.txt").read_text().strip()
    assert f"admin / {password}" in out.getvalue()
    user = get_user_model().objects.get(username="admin")
    assert user.is_staff and user.check_password(password)

    out = StringIO()
    call_command("ensure_staff", stdout=out)
    assert "Staff account: admin" in out.getvalue()
    assert get_user_model().objects.count() == 1
