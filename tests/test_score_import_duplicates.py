"""A score file that scores a pair twice is refused with the pair named as the file names it."""

from __future__ import annotations

import io

import pytest

from scoring.models import MetricConfig
from tests.builders import make_campaign, make_pair, make_staff

pytestmark = pytest.mark.django_db


def test_the_page_names_the_files_external_id_and_both_lines(client) -> None:  # type: ignore[no-untyped-def]
    client.force_login(make_staff("staff", "pw"))
    campaign = make_campaign(slug="page")
    pair = make_pair(campaign, external_id="mrpc-1089874")
    make_pair(campaign, external_id="mrpc-3019446")
    data = b"external_id,score\nmrpc-1089874,0.5\nmrpc-3019446,0.1\nmrpc-1089874,0.7\n"
    upload = io.BytesIO(data)
    upload.name = "s.csv"
    form = {"campaign": "page", "name": "mine", "version": "1", "direction": "higher", "options": ""}
    response = client.post("/staff/scores/import/", {**form, "file": upload})
    assert response.status_code == 400
    page = response.content.decode()
    assert "<li>line 4: duplicate: external_id &#x27;mrpc-1089874&#x27; already has a score on line 2</li>" in page
    assert f"pair {pair.pk}" not in page  # the internal id means nothing to the file's author
    assert not MetricConfig.objects.exists()
