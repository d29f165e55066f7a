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
DOCUMENT_ROUTES = {"/api/schema/", "/api/docs/", "/api/redoc/"}


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


def _asset_urls(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="([^"]+\.(?:js|css|png))"', html)


@pytest.mark.parametrize("page", ["/api/docs/", "/api/redoc/"])
def test_docs_pages_use_local_assets_only(client, staff_user, page):
    client.force_login(staff_user)
    response = client.get(page)
    assert response.status_code == 200
    html = response.content.decode()
    assert "/api/schema/" in html
    assets = _asset_urls(html)
    assert assets, html
    for url in assets:
        assert url.startswith("/static/drf_spectacular_sidecar/"), url
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
