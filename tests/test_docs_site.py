"""The documentation site: it builds offline with ``--strict``, its reference pages cover every
setting and management command the code has, and the app serves it to staff at ``/docs/``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from paraeval.docs_reference import generated_pages
from tests.builders import make_staff

ROOT = Path(__file__).resolve().parent.parent
SETTINGS_PAGE = ROOT / "docs" / "reference" / "settings.md"
# Every way the code reads an environment variable: the typed readers of paraeval/env.py and
# os.environ / os.getenv.
READERS = re.compile(
    r'(?:env_(?:str|bool|int|int_map|float|list|choice|specs)\(\s*|environ(?:\.get)?\(\s*|environ\[|getenv\(\s*)"([A-Z][A-Z0-9_]+)"'
)
FILE_VARIANTS = {"SECRET_KEY_FILE", "DATABASE_URL_FILE", "DATABASE_PASSWORD_FILE", "REDIS_URL_FILE"}


def variables_read_by_the_code() -> set[str]:
    names: set[str] = set()
    for package in ("paraeval", "annotate", "scoring", "staff", "api"):
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            names.update(READERS.findall(path.read_text()))
    # Read by the test settings only (tests/settings.py), never by the product.
    names.discard("DJANGO_SETTINGS_MODULE")
    return names


def documented_variables() -> set[str]:
    return set(re.findall(r"^### `([A-Z][A-Z0-9_]+)`$", SETTINGS_PAGE.read_text(), re.M))


def test_the_scan_finds_the_settings_it_must() -> None:
    # The scan itself can fail: it must see readers of each kind.
    found = variables_read_by_the_code()
    assert {"SECRET_KEY", "DEBUG", "PARAEVAL_METRICS", "PARAPLUIE_MODELS", "PARAEVAL_ADMIN_USER"} <= found
    assert len(found) > 50


def test_every_setting_the_code_reads_has_an_entry() -> None:
    missing = variables_read_by_the_code() - documented_variables()
    assert not missing, f"settings read by the code with no entry in docs/reference/settings.md: {sorted(missing)}"


def test_every_entry_names_a_setting_the_code_reads() -> None:
    stale = documented_variables() - variables_read_by_the_code()
    assert not stale, f"entries in docs/reference/settings.md that no code reads: {sorted(stale)}"
    text = SETTINGS_PAGE.read_text()
    assert all(f"`{name}`" in text for name in FILE_VARIANTS)


def test_generated_reference_pages_are_up_to_date() -> None:
    for path, text in generated_pages().items():
        assert path.read_text() == text, f"{path.relative_to(ROOT)} is stale: run scripts/docs_reference.py"


def test_the_tests_map_sends_a_reader_to_the_tests_that_reach_a_module() -> None:
    """Modules no test imports by name (the API's queries and filters, reached through its views)
    still name the tests that exercise them; a test's own imports are not listed twice."""
    from paraeval.docs_reference import tests_by_module

    mapped = tests_by_module()
    for module in ("api.queries", "api.filters"):
        assert mapped[module].direct == []
        assert "test_api_pairs.py" in mapped[module].reached  # requests /api/pairs/, whose view imports it
    paired = mapped["scoring.analysis.paired"]
    assert "test_analysis_paired.py" in paired.direct and "test_analysis_paired.py" not in paired.reached
    assert "test_analysis_meta.py" in paired.reached  # through scoring.analysis.meta


def test_every_management_command_is_in_the_reference() -> None:
    commands = {
        path.stem
        for app in ("annotate", "scoring", "paraeval")
        for path in (ROOT / app / "management" / "commands").glob("*.py")
        if path.stem != "__init__"
    }
    page = (ROOT / "docs" / "reference" / "commands.md").read_text()
    assert commands
    assert {name for name in commands if f"## `{name}`" not in page} == set()


@pytest.fixture(scope="module")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [str(Path(sys.executable).with_name("mkdocs")), "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return site


def test_the_site_builds_strict_with_every_section(built_site: Path) -> None:
    for page in (
        "index.html",
        "reference/settings.html",
        "reference/commands.html",
        "reference/api-endpoints.html",
        "explanation/architecture.html",
        "changelog.html",
    ):
        assert (built_site / page).is_file(), page
    home = (built_site / "index.html").read_text()
    for section in ("Tutorials", "How-to guides", "Reference", "Explanation"):
        assert section in home
    # No font server: the site reads offline.
    assert "fonts.googleapis.com" not in home


@pytest.fixture
def staff_client(client):  # type: ignore[no-untyped-def]
    user = make_staff("reader", "pw-for-tests")
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_staff_read_the_site_at_docs(staff_client, built_site: Path, settings) -> None:  # type: ignore[no-untyped-def]
    settings.PARAEVAL_DOCS_SITE_DIR = built_site
    response = staff_client.get("/docs/")
    assert response.status_code == 200
    body = b"".join(response.streaming_content).decode()
    assert "<title>ParaEval</title>" in body
    page = staff_client.get("/docs/reference/settings.html")
    assert page.status_code == 200
    assert "PARAEVAL_DATA_DIR" in b"".join(page.streaming_content).decode()
    # Inline scripts of the theme are allowed on these pages only.
    assert "'unsafe-inline'" in response["Content-Security-Policy"].split("script-src", 1)[1].split(";")[0]
    assert staff_client.get("/docs/no-such-page.html").status_code == 404
    assert staff_client.get("/docs/../manage.py").status_code == 404
    assert staff_client.get("/docs/%2e%2e/manage.py").status_code == 404


@pytest.mark.django_db
def test_directory_style_addresses_lead_to_the_page(staff_client, built_site: Path, settings) -> None:  # type: ignore[no-untyped-def]
    # The site is built with use_directory_urls: false; "page/" and a folder without its "/"
    # redirect to where the page's relative links resolve.
    settings.PARAEVAL_DOCS_SITE_DIR = built_site
    for asked, lands in (
        ("/docs/tutorials/first-campaign/", "/docs/tutorials/first-campaign.html"),
        ("/docs/tutorials/first-campaign", "/docs/tutorials/first-campaign.html"),
        ("/docs/reference/settings/", "/docs/reference/settings.html"),
        ("/docs/tutorials", "/docs/tutorials/"),
    ):
        response = staff_client.get(asked)
        assert (response.status_code, response["Location"]) == (302, lands), asked
    page = staff_client.get("/docs/tutorials/first-campaign/", follow=True)
    assert page.status_code == 200
    body = b"".join(page.streaming_content).decode()
    assert "<h1" in body and "Your first campaign, from your file to the export" in body
    folder = staff_client.get("/docs/tutorials/")
    assert folder.status_code == 200 and "Tutorials" in b"".join(folder.streaming_content).decode()
    assert staff_client.get("/docs/no-such-page/").status_code == 404
    assert staff_client.get("/docs/../manage/").status_code == 404


@pytest.mark.django_db
def test_a_missing_site_says_how_to_build_it_and_visitors_go_to_the_login(
    staff_client, tmp_path: Path, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.PARAEVAL_DOCS_SITE_DIR = tmp_path / "not-built"
    missing = staff_client.get("/docs/")
    assert missing.status_code == 404
    assert "mkdocs build" in missing.content.decode()
    staff_client.logout()
    response = staff_client.get("/docs/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_each_benchmark_output_is_included_by_exactly_one_page() -> None:
    results = sorted((ROOT / "docs" / "benchmarks" / "results").glob("*.txt"))
    assert results
    pages = {path: path.read_text() for path in (ROOT / "docs").rglob("*.md")}
    scripts = {path.stem for path in (ROOT / "benchmarks").glob("*.py")}
    for result in results:
        include = f'--8<-- "benchmarks/results/{result.name}"'
        including = [str(path.relative_to(ROOT)) for path, text in pages.items() if text.count(include)]
        assert len(including) == 1 and pages[ROOT / including[0]].count(include) == 1, (result.name, including)
        # Named after the benchmark that writes it (benchmarks/record.py NAME -- ...).
        assert result.stem.split("-")[0] in scripts, result.name


def test_the_readme_is_a_door_into_the_site() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    # The two set-up commands come first, as the only commands of the first code block.
    first_block = readme.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert [line.split()[0] for line in first_block] == ["scripts/run.sh", "scripts/test.sh"]
    # Every relative link and image points at a file of the repository.
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [target for target in targets if "://" not in target]
    assert local
    assert [target for target in local if not (ROOT / target).exists()] == []


def test_the_architecture_page_names_every_module(built_site: Path) -> None:
    page = (built_site / "explanation" / "architecture.html").read_text()
    missing = []
    for package in ("paraeval", "annotate", "scoring", "staff", "api"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT / package).parts
            if "migrations" in parts or "commands" in parts or path.name == "__init__.py":
                continue
            if f"<code>{'/'.join(parts)}</code>" not in page:
                missing.append(f"{package}/{'/'.join(parts)}")
    assert missing == []
