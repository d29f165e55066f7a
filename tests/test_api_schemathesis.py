"""The OpenAPI document and the server agree: a bounded schemathesis run against the live test
server, with a staff token and every check on, finds no 5xx and no schema violation.

Schemathesis generates requests from ``/api/schema/`` (valid ones and, in negative mode, ones
the schema forbids), sends them over HTTP and checks each answer: no server error, a status
code, content type, headers and body that the document declares, invalid data refused and
valid data accepted. Deterministic (hypothesis derandomised) and bounded (a few examples per
operation): the whole run takes about a minute.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from rest_framework.authtoken.models import Token
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.api_support import *  # noqa: F403
from tests.builders import make_campaign, make_pair, make_staff

pytestmark = [pytest.mark.fuzz, pytest.mark.django_db(transaction=True)]

EXAMPLES_PER_OPERATION = 25
ALL_CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
    negative_data_rejection,
    positive_data_acceptance,
]

OPAQUE_UPLOADS = {"POST /api/scores/import/"}
# Operations whose records are content for the importer: a schema-valid body may still be refused,
# but only by the importer, with a 400 naming each problem ("problems"), never another way.
IMPORTER_BODIES = {"POST /api/pairs/"}


@schemathesis.check
def accepted_or_refused_by_the_importer(ctx, response, case):  # type: ignore[no-untyped-def]
    """Valid data is accepted, unless the importer refused the records' content naming why (a rule
    across fields, such as a strict import whose gold key no record has, that JSON Schema cannot state)."""
    if response.status_code == 400:
        body = response.json()
        if isinstance(body, dict) and body.get("problems") and all(p.get("message") for p in body["problems"]):
            return None
    return positive_data_acceptance(ctx, response, case)


# Operations whose valid body may name rows the campaign does not have: an objective for an
# origin none of its pairs carries is refused with a 400 naming the origin (the campaigns the
# fuzzer itself created earlier in the run are found, so the example can reach that rule).
ORIGIN_BODIES = {"PUT /api/campaigns/{slug}/objectives/"}


@schemathesis.check
def accepted_or_unknown_origin(ctx, response, case):  # type: ignore[no-untyped-def]
    """Valid data is accepted, unless an objective names an origin the campaign's pairs lack (a rule
    on the stored pairs, not on the request, that JSON Schema cannot state)."""
    if response.status_code == 400:
        body = response.json()
        said = body.get("objectives") if isinstance(body, dict) and list(body) == ["objectives"] else None
        if said and all("has no pairs with origin" in str(message) for message in said):
            return None
    return positive_data_acceptance(ctx, response, case)


@schemathesis.check
def accepted_or_dates_out_of_order(ctx, response, case):  # type: ignore[no-untyped-def]
    """Valid data is accepted, unless date_to is before date_from: a rule across two parameters
    that JSON Schema cannot state, documented in date_to's description (checked below) and
    refused with a 400 naming date_to."""
    if response.status_code == 400:
        body = response.json()
        if isinstance(body, dict) and list(body) == ["date_to"] and "before date_from" in str(body["date_to"]):
            return None
    return positive_data_acceptance(ctx, response, case)


@pytest.fixture
def staff_token(django_user_model) -> str:  # type: ignore[no-untyped-def]
    user = make_staff("fuzzer", "pw-fuzzer")
    return Token.objects.create(user=user).key


@pytest.fixture
def api_schema(live_server, staff_token: str, settings) -> schemathesis.BaseSchema:  # type: ignore[no-untyped-def]
    # Hundreds of requests a minute from one account: the API's throttle is not under test here.
    settings.PARAEVAL_API_USER_RATE = "100000/min"
    campaign = make_campaign(slug="fuzzed")
    make_pair(campaign, external_id="known")
    schema = schemathesis.openapi.from_url(
        f"{live_server.url}/api/schema/?format=json", headers={"Authorization": f"Token {staff_token}"}
    )
    # No NUL characters in generated text: PostgreSQL cannot store them, so the API refuses
    # them anywhere in a request with a 400 that names the place (tests/test_security_text.py),
    # a rule JSON Schema cannot state for every key and value.
    schema.config.generation.update(allow_x00=False)
    return schema


def failures_of(operation, mode: GenerationMode, token: str) -> list[str]:  # type: ignore[no-untyped-def]
    """Run the generated cases of one operation in one mode; the failures found, as text."""
    found: list[str] = []
    # An uploaded file's content (a CSV of scores) is opaque to JSON Schema: a schema-valid upload
    # of random bytes is rightly refused (400, with the file's problems), so "valid data is
    # accepted" cannot hold there; every other check still runs on it.
    # (A local CHECKS: hypothesis derandomises from run()'s source, which stays as it was.)
    CHECKS = [
        check for check in ALL_CHECKS if check is not positive_data_acceptance or operation.label not in OPAQUE_UPLOADS
    ]
    if {"date_from", "date_to"} <= {parameter.name for parameter in operation.query}:
        CHECKS = [accepted_or_dates_out_of_order if check is positive_data_acceptance else check for check in CHECKS]
    if operation.label in IMPORTER_BODIES:
        CHECKS = [
            accepted_or_refused_by_the_importer if check is positive_data_acceptance else check for check in CHECKS
        ]
    if operation.label in ORIGIN_BODIES:
        CHECKS = [accepted_or_unknown_origin if check is positive_data_acceptance else check for check in CHECKS]

    # schemathesis' own pytest plugin (schema.parametrize) does not run on pytest 9: hypothesis
    # is driven here directly, one operation at a time, so that every operation is reported.
    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        derandomize=True,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
        phases=[Phase.explicit, Phase.generate],  # no shrinking: the first failure is enough to name
    )
    def run(case) -> None:  # type: ignore[no-untyped-def]
        case.call_and_validate(headers={"Authorization": f"Token {token}"}, checks=CHECKS)

    try:
        run()
    except Unsatisfiable:
        pass  # nothing to negate in this operation (e.g. only a slug in the path): no case, no failure
    except (Exception, BaseExceptionGroup) as error:  # noqa: BLE001 - every failure of every operation is listed
        found.append(f"{operation.label} ({mode.value}): {str(error).strip()[:2000]}")
    return found


def test_the_api_answers_as_its_schema_says(api_schema, staff_token: str) -> None:  # type: ignore[no-untyped-def]
    failures = []
    operations = 0
    for result in api_schema.get_all_operations():
        operation = result.ok()
        operations += 1
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            failures.extend(failures_of(operation, mode, staff_token))
    assert operations >= 15
    assert failures == [], "\n\n".join(failures)


# --- Cases schemathesis found once, pinned: the schema forbids each request
# and the server refuses it with a 400 naming the parameter; or the schema documents the refusal.


def _schema(client) -> dict:  # type: ignore[no-untyped-def]
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    return response.json()


def _parameter(document: dict, path: str, method: str, name: str) -> dict:
    (parameter,) = [p for p in document["paths"][path][method]["parameters"] if p["name"] == name]
    return parameter


@pytest.mark.parametrize(
    ("url", "path", "name"),
    [
        ("/api/campaigns/fuzzed/export/?format=", "/api/campaigns/{slug}/export/", "format"),
        ("/api/campaigns/fuzzed/export/?level=", "/api/campaigns/{slug}/export/", "level"),
        ("/api/pairs/?page=", "/api/pairs/", "page"),
        ("/api/pairs/?page=abc", "/api/pairs/", "page"),
        ("/api/judgements/?page=0", "/api/judgements/", "page"),
    ],
)
def test_query_values_the_schema_forbids_are_400s(staff_api, url: str, path: str, name: str) -> None:  # type: ignore[no-untyped-def]
    import jsonschema

    make_campaign(slug="fuzzed")
    value = url.split(f"{name}=", 1)[1]
    parameter_schema = _parameter(_schema(staff_api), path, "get", name)["schema"]
    # An integer parameter is sent as text: the schema allows it only as a whole number.
    candidate: object = int(value) if value.isdigit() else value
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(candidate, parameter_schema)
    response = staff_api.get(url)
    assert response.status_code == 400, response.content
    assert name in response.json()


@pytest.mark.parametrize("dry_run", [0, 1, "true", "yes"])
def test_dry_run_is_a_json_boolean_only(staff_api, dry_run: object) -> None:  # type: ignore[no-untyped-def]
    make_campaign(slug="fuzzed")
    body = {"campaign": "fuzzed", "dry_run": dry_run, "pairs": [{"source": "A cat.", "hypothesis": "A feline."}]}
    document = _schema(staff_api)
    request_schema = document["components"]["schemas"]["PairBulkCreate"]["properties"]["dry_run"]
    assert request_schema["type"] == "boolean"
    response = staff_api.post("/api/pairs/", body, format="json")
    assert response.status_code == 400
    assert response.json()["dry_run"] == [f"Must be true or false (a JSON boolean), not {dry_run!r}."]
    assert staff_api.post("/api/pairs/", {**body, "dry_run": True}, format="json").status_code == 200


def test_refusals_the_schema_cannot_express_are_documented(staff_api) -> None:  # type: ignore[no-untyped-def]
    document = _schema(staff_api)
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            bad = operation["responses"].get("400")
            assert bad is not None, f"{method.upper()} {path} documents no 400"
            assert "NUL character (U+0000)" in bad["description"], f"{method.upper()} {path}"
    date_to = _parameter(document, "/api/campaigns/{slug}/report/", "get", "date_to")
    assert "not before date_from" in date_to["description"]
    assert staff_api.get("/api/pairs/?origin=a%00b").status_code == 400
