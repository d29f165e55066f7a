"""The OpenAPI 3 document is valid, covers every API route, and its docs pages work offline."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from django.urls import URLPattern, URLResolver, get_resolver
from openapi_spec_validator import validate

from tests.api_support import *  # noqa: F403

pytestmark = pytest.mark.django_db

METHODS = ("get", "post", "put", "patch", "delete")
# Routes under /api/ that serve the schema itself rather than operations of it.
DOCUMENT_ROUTES = {"/api/", "/api/schema/", "/api/docs/", "/api/redoc/"}  # "/api/": DRF's API root


def _template(pattern: object) -> str:
    """A URL pattern as an OpenAPI path template: ``<slug:slug>`` or ``(?P<slug>...)`` -> ``{slug}``."""
    text = str(pattern).removeprefix("^").removesuffix("$")
    text = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", text)
    text = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", text)
    # drf-spectacular names the primary key by its field (SCHEMA_COERCE_PATH_PK): {pk} -> {id}.
    return text.replace("{pk}", "{id}")


def _methods(callback: object) -> set[str]:
    actions = getattr(callback, "actions", None)
    if actions is not None:  # a router route of a viewset
        return {method for method in actions if method in METHODS}
    view_class = callback.view_class  # type: ignore[attr-defined]
    return {method for method in METHODS if hasattr(view_class, method)}


def api_routes() -> dict[str, set[str]]:
    """Every route mounted under /api/ (from the URL resolver, not from the schema generator)."""
    routes: dict[str, set[str]] = {}

    def walk(patterns: list, prefix: str) -> None:
        for entry in patterns:
            if isinstance(entry, URLResolver):
                walk(entry.url_patterns, prefix + _template(entry.pattern))
            elif isinstance(entry, URLPattern):
                path = "/" + prefix + _template(entry.pattern)
                if path.startswith("/api/"):
                    routes.setdefault(path, set()).update(_methods(entry.callback))

    walk(get_resolver().url_patterns, "")
    return routes


@pytest.fixture
def schema(staff_api) -> dict:
    response = staff_api.get("/api/schema/?format=json")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.oai.openapi+json")
    return response.json()


def test_schema_is_a_valid_openapi_3_document(schema):
    validate(schema)  # raises on any violation of the OpenAPI 3.0 specification
    assert schema["openapi"].startswith("3.")
    assert schema["info"]["title"] == "ParaEval API"
    assert set(schema["components"]["securitySchemes"]) == {"tokenAuth", "cookieAuth"}


def test_every_api_route_and_method_is_in_the_schema(schema):
    routes = api_routes()
    documented = {path: {method for method in item if method in METHODS} for path, item in schema["paths"].items()}
    operations = {path: methods for path, methods in routes.items() if path not in DOCUMENT_ROUTES}
    assert len(operations) >= 14
    assert operations == documented
    assert set(routes) >= DOCUMENT_ROUTES


def test_the_yaml_schema_is_served_too(staff_api):
    response = staff_api.get("/api/schema/")
    assert response.status_code == 200
    assert response.content.startswith(b"openapi: 3.")


def test_schema_documents_filters_errors_and_export_types(schema):
    parameters = {p["name"] for p in schema["paths"]["/api/pairs/"]["get"]["parameters"]}
    assert {"campaign", "origin", "is_training", "has_gold", "external_id", "page", "page_size"} <= parameters
    post = schema["paths"]["/api/pairs/"]["post"]
    assert set(post["requestBody"]["content"]) == {"application/json"}
    assert {"201", "400"} <= set(post["responses"])
    export = schema["paths"]["/api/campaigns/{slug}/export/"]["get"]["responses"]["200"]["content"]
    assert set(export) == {"text/csv", "application/x-ndjson"}
    score_parameters = {p["name"] for p in schema["paths"]["/api/scores/"]["get"]["parameters"]}
    assert {"campaign", "metric_config", "metric", "status"} <= score_parameters


def test_every_operation_documents_the_errors_it_can_answer(schema):
    """What schemathesis found undocumented (tests/test_api_schemathesis.py runs the whole check)."""
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method not in METHODS:
                continue
            codes = set(operation["responses"])
            assert {"401", "403", "429"} <= codes, (method, path, codes)
            if "{" in path or (method == "get" and "page" in {p["name"] for p in operation.get("parameters", [])}):
                assert "404" in codes, (method, path, codes)
            if method == "post" and operation.get("requestBody"):
                assert {"400", "413"} <= codes, (method, path, codes)
    pair = schema["components"]["schemas"]["Pair"]["properties"]["expected_label"]
    assert {"$ref": "#/components/schemas/BlankEnum"} in pair["oneOf"]  # "" for a non-training pair
    page_size = next(p for p in schema["paths"]["/api/pairs/"]["get"]["parameters"] if p["name"] == "page_size")
    assert page_size["schema"] == {"type": "integer", "minimum": 1, "maximum": 1000}


@pytest.mark.parametrize(
    ("url", "status", "body"),
    [
        ("/api/judgements/?label=", 400, {"label": ["Empty value: give a value or leave the parameter out."]}),
        ("/api/pairs/?origin=", 400, {"origin": ["Empty value: give a value or leave the parameter out."]}),
        ("/api/pairs/?page_size=0", 400, {"page_size": ["Expected a whole number from 1 to 1000, got '0'."]}),
        ("/api/scores/?pair=1.5", 400, {"pair": ["Enter a whole number."]}),
        ("/api/pairs/1.5e3/", 404, {"detail": "Not found."}),
        ("/api/campaigns/no.such/", 404, {"detail": "No Campaign matches the given query."}),
    ],
)
def test_what_the_schema_refuses_the_server_refuses_in_json(staff_api, url, status, body):
    response = staff_api.get(url)
    assert (response.status_code, response["Content-Type"], response.json()) == (status, "application/json", body)


def _asset_urls(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="([^"]+\.(?:js|css|png))"', html)


@pytest.mark.parametrize("page", ["/api/docs/", "/api/redoc/"])
def test_docs_pages_use_local_assets_only(client, staff_user, page):
    client.force_login(staff_user)
    response = client.get(page)
    assert response.status_code == 200
    html = response.content.decode()
    # Swagger UI reads the schema's address from its start-up script, served apart (no inline code).
    script = client.get("/api/docs/?script=").content.decode() if page == "/api/docs/" else ""
    assert "/api/schema/" in html + script
    assets = _asset_urls(html)
    assert assets, html
    for url in assets:
        assert url.startswith(("/static/drf_spectacular_sidecar/", "/static/css/")), url
        assert client.get(url).status_code == 200, url
    assert not re.search(r"https?://(?!127\.0\.0\.1|localhost)", " ".join(assets))
    assert "cdn" not in html.lower()


def test_docs_assets_survive_collectstatic(client, staff_user, settings, tmp_path):
    """Production serves hashed files from STATIC_ROOT (scripts/run.sh runs collectstatic)."""
    settings.STATIC_ROOT = tmp_path / "static"
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }
    call_command("collectstatic", "--noinput", verbosity=0)
    client.force_login(staff_user)
    html = client.get("/api/docs/").content.decode()
    assets = _asset_urls(html)
    assert assets and all(re.search(r"\.[0-9a-f]{12}\.(js|css|png)$", url) for url in assets), assets
    for url in assets:
        relative = url.removeprefix(settings.STATIC_URL if settings.STATIC_URL.startswith("/") else "/static/")
        assert (settings.STATIC_ROOT / relative).is_file(), url
