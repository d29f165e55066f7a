"""Request bodies: the API takes the README's 50,000 records; over its limit, a JSON 413 that says how to split.

Django's default (2.5 MiB, a bare HTML "Bad Request (400)") refused 9,000 MRPC pairs. The
API's limit is ``PARAEVAL_API_MAX_BODY_MB`` (32 MiB); other pages keep 2.5 MiB.
"""

from __future__ import annotations

import json
import random

import pytest
from django.test import Client, override_settings

from annotate.models import Pair
from paraeval.middleware import FORM_MAX_BODY_BYTES
from tests.api_support import *  # noqa: F403
from tests.builders import make_campaign

pytestmark = pytest.mark.django_db

MIB = 1024 * 1024
SENTENCE_WORDS = (
    "the company said shares of its stock rose percent after quarterly earnings beat analysts "
    "expectations on wednesday while officials in washington declined to comment on the report"
)
WORDS = SENTENCE_WORDS.split()


def mrpc_like_records(count: int) -> list[dict[str, object]]:
    """Records the size of MRPC's: two sentences of about 22 words (~120 characters) and a label."""
    generator = random.Random(7)

    def sentence() -> str:
        return " ".join(generator.choice(WORDS) for _ in range(generator.randint(17, 27))).capitalize() + "."

    return [
        {"id": f"mrpc-{index}", "source": sentence(), "hypothesis": sentence(), "gold_label": index % 2}
        for index in range(count)
    ]


def body_of(records: list[dict[str, object]], **fields: object) -> bytes:
    return json.dumps({"campaign": "bulk", "pairs": records, **fields}).encode()


@pytest.mark.slow
def test_fifty_thousand_mrpc_size_records_fit_the_limit_and_one_request_stores_them(staff_api) -> None:
    make_campaign(slug="bulk")
    body = body_of(mrpc_like_records(50_000))
    assert 2.5 * MIB < len(body) < 32 * MIB  # over Django's default, under the API's limit
    response = staff_api.post("/api/pairs/", body, content_type="application/json")
    assert response.status_code == 201, response.content[:500]
    assert response.json()["created"] == 50_000
    assert Pair.objects.filter(campaign__slug="bulk").count() == 50_000


def test_a_body_over_the_limit_is_a_json_413_that_says_how_to_split(staff_api) -> None:
    make_campaign(slug="bulk")
    with override_settings(PARAEVAL_API_MAX_BODY_MB=1):
        just_under = body_of(mrpc_like_records(2_800), dry_run=True)
        assert len(just_under) < MIB
        accepted = staff_api.post("/api/pairs/", just_under, content_type="application/json")
        assert accepted.status_code == 200, accepted.json()
        over = just_under + b" " * (MIB + 1 - len(just_under))  # one byte over, still valid JSON
        refused = staff_api.post("/api/pairs/", over, content_type="application/json")
    assert refused.status_code == 413
    assert refused["Content-Type"] == "application/json"
    assert refused.json() == {
        "detail": "The request body is 1.0 MiB; the API accepts at most 1 MiB per request. Split the records "
        "into several requests: the records of one request are stored all or nothing.",
        "max_body_bytes": MIB,
        "body_bytes": MIB + 1,
    }
    assert Pair.objects.count() == 0


def test_the_default_api_limit_is_32_mib(staff_api) -> None:
    refused = staff_api.post("/api/pairs/", b" " * (32 * MIB + 1), content_type="application/json")
    assert refused.status_code == 413
    assert refused.json()["max_body_bytes"] == 32 * MIB


def test_other_pages_keep_the_2_5_mib_limit_for_forms(client: Client) -> None:
    make_campaign(slug="bulk")
    big_form = "consent=on&english_level=advanced&padding=" + "x" * FORM_MAX_BODY_BYTES
    response = client.post("/c/bulk/", big_form, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 413
    assert response.content.decode() == "Request too large: this page accepts at most 2.5 MiB."
