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
    password_file = tmp_path / "admin_password.txt"
    password = password_file.read_text().strip()
    assert out.getvalue() == f"Created staff account: admin (password in {password_file})\n"
    assert password not in out.getvalue()  # the terminal never shows it
    assert password_file.stat().st_mode & 0o777 == 0o600
    user = get_user_model().objects.get(username="admin")
    assert user.is_staff and user.check_password(password)

    out = StringIO()
    call_command("ensure_staff", stdout=out)
    assert out.getvalue() == f"Staff account: admin (password in {password_file})\n"
    assert get_user_model().objects.count() == 1


@pytest.mark.django_db
def test_a_password_from_the_environment_is_neither_printed_nor_written(settings, tmp_path, monkeypatch):
    settings.DATA_DIR = tmp_path
    monkeypatch.setenv("PARAEVAL_ADMIN_PASSWORD", "chosen-by-the-operator")
    out = StringIO()
    call_command("ensure_staff", stdout=out)
    assert out.getvalue() == "Created staff account: admin (the password you set in PARAEVAL_ADMIN_PASSWORD)\n"
    assert not (tmp_path / "admin_password.txt").exists()
    assert get_user_model().objects.get(username="admin").check_password("chosen-by-the-operator")
