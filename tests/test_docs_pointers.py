"""Pointers that stay true when the code moves: every page of the navigation is linked from the
home page under the title it carries, every file or module a page names exists, every figure a
page shows is included from its benchmark's recorded output, and no file cites an issue number
a reader of the repository cannot look up."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
RESULTS = DOCS / "benchmarks" / "results"
PACKAGES = ("paraeval", "annotate", "scoring", "staff", "api", "tests", "benchmarks")


class _IgnoringTags(yaml.SafeLoader):
    """mkdocs.yml holds tags (``!!python/name:…``) for plugins: this reader keeps them as None."""


_IgnoringTags.add_multi_constructor("", lambda loader, suffix, node: None)


def nav_pages() -> list[tuple[str | None, str]]:
    """(title given in mkdocs.yml, or None; page path under docs/) for every page of the navigation."""
    nav = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=_IgnoringTags)["nav"]
    pages: list[tuple[str | None, str]] = []

    def walk(items: list[Any]) -> None:
        for item in items:
            if isinstance(item, str):
                pages.append((None, item))
                continue
            for title, value in item.items():
                if isinstance(value, list):
                    walk(value)
                else:
                    pages.append((title, value))

    walk(nav)
    return pages


def first_heading(page: Path) -> str | None:
    for line in page.read_text().splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return None


def test_the_navigation_is_read_whole() -> None:
    # The reader itself can fail: it must see pages of every section, nested ones included.
    pages = {page for _, page in nav_pages()}
    assert {"index.md", "tutorials/first-campaign.md", "how-to/import-pairs.md", "changelog.md"} <= pages
    assert len(pages) > 35


def test_every_page_of_the_navigation_is_linked_from_the_home_page() -> None:
    home = (DOCS / "index.md").read_text()
    linked = set(re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", home))
    missing = [page for _, page in nav_pages() if page != "index.md" and page not in linked]
    assert missing == []


def test_every_navigation_title_is_its_page_heading() -> None:
    # Two exceptions, by design: the home page is "Home" in the navigation and carries the
    # project's name as its heading; the changelog page only includes CHANGELOG.md.
    exceptions = {"index.md", "changelog.md"}
    differ = [
        (title, page, first_heading(DOCS / page))
        for title, page in nav_pages()
        if page not in exceptions and title is not None and title != first_heading(DOCS / page)
    ]
    assert differ == []


# Names in backticks that are not files of the repository, each with its reason.
NOT_IN_THE_REPOSITORY = {
    ".env": "the operator's environment file, made from .env.example",
    "annotate.manage_campaign": "a permission's name (annotate/rules.py), not a module",
    "scoring.reports.tasks.compute_report_intervals": "a Celery task's name (scoring/reports/tasks.py), not a module",
    "my_metric.py": "the reader's own metric in the tutorial",
    "my_metric_2.py": "the reader's own metric in the tutorial",
    "config.json": "a model folder's configuration (Hugging Face), outside the repository",
    "NAME.json": "a template file the reader writes",
    "extract_results.py": "a script of the PARAPHRASUS benchmark's repository",
    "README_embeddings.md": "a page of the PARAPHRASUS benchmark's repository",
    "judge.json": "a file of a tuned judge's folder, written at run time",
    "folds.json": "a file of a tuned judge's folder, written at run time",
    "trained.json": "a file of a tuned judge's folder, written at run time",
    "training.json": "a file of a tuned judge's folder, written at run time",
    "templates/staff/mypage.html": "the page the reader adds in the page recipe",
    "templates/annotate/mypage.html": "the page the reader adds in the page recipe",
}
# Prefixes of names that live outside the repository at run time.
RUNTIME_PREFIXES = {
    "data/": "the data folder (PARAEVAL_DATA_DIR): uploads, models, caches, made at run time",
    ".venv/": "the virtual environment scripts/setup.sh makes",
    "site/": "the built documentation site (mkdocs build), not committed",
    "test-artifacts/": "screenshots the browser tests write, not committed",
    "/": "absolute paths on the operator's machine",
    "~": "paths in the operator's home",
}
INLINE_CODE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
PATH_LIKE = re.compile(r"^[\w.-]+(?:/[\w.-]+)*/?$")
# A name relative to a folder the sentence gives (`pipeline/runner.py`, `counters.py`) is checked
# against the ends of the repository's paths.
FILE_SUFFIX = re.compile(r"\.(?:py|md|html|js|css|sh|toml|yml|yaml|json|cfg)$")
MODULE_LIKE = re.compile(r"^(?:" + "|".join(PACKAGES) + r")(?:\.[A-Za-z_]\w*)+$")


def _without_fenced_blocks(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)


def _top_level_names() -> set[str]:
    return {path.name for path in ROOT.iterdir() if not path.name.startswith(".") or path.name == ".env.example"}


def _module_exists(dotted: str) -> bool:
    """A module or package of the repository, or a name defined in one (``scoring.metrics.encoders.load_bert``)."""
    parts = dotted.split(".")
    for length in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:length])
        source = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        if source.is_file():
            rest = parts[length:]
            return not rest or re.search(rf"\b{re.escape(rest[0])}\b", source.read_text()) is not None
    return False


def named_paths(text: str) -> list[str]:
    """The names in backticks (outside fenced blocks) that look like a repository file or module."""
    top = _top_level_names()
    names = []
    for name in INLINE_CODE.findall(_without_fenced_blocks(text)):
        name = name.strip()
        in_a_top_folder = "/" in name and name.split("/", 1)[0] in top
        a_file = FILE_SUFFIX.search(name) is not None and not name.startswith(".")
        if MODULE_LIKE.match(name) or (PATH_LIKE.match(name) and (in_a_top_folder or a_file)):
            names.append(name)
    return names


def repository_files() -> list[str]:
    """The repository's files, committed or not (but not ignored), relative to its root."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return [name for name in listed if (ROOT / name).is_file()]


def _exists(name: str, files: tuple[str, ...] = ()) -> bool:
    if MODULE_LIKE.match(name):
        return _module_exists(name)
    if (ROOT / name).exists():
        return True
    return bool(FILE_SUFFIX.search(name)) and any(path.endswith(f"/{name}") for path in files)


def test_the_scan_sees_files_and_modules() -> None:
    found = named_paths("`scoring/pipeline/tasks.py`, `scoring.metrics.loaders`, `--flag`, `a.b`, `x/y`")
    assert found == ["scoring/pipeline/tasks.py", "scoring.metrics.loaders"]
    relative = named_paths("(`analysis_tasks.py`, `pipeline/runner.py`, `.env`)")
    assert relative == ["analysis_tasks.py", "pipeline/runner.py"]
    files = tuple(repository_files())
    assert _exists("scoring/pipeline/tasks.py") and _exists("scoring.metrics.encoders.load_bert")
    assert _exists("pipeline/runner.py", files) and not _exists("analysis_tasks.py", files)
    assert not _exists("scoring.metrics.loaders") and not _exists("scoring/analysis_tasks.py")


def test_every_file_or_module_a_page_names_exists() -> None:
    missing = []
    files = tuple(repository_files())
    pages = [*DOCS.rglob("*.md"), ROOT / "README.md"]
    for page in pages:
        for name in named_paths(page.read_text()):
            if name in NOT_IN_THE_REPOSITORY or any(name.startswith(prefix) for prefix in RUNTIME_PREFIXES):
                continue
            if not _exists(name, files):
                missing.append(f"{page.relative_to(ROOT)}: {name}")
    assert missing == []


def test_the_architecture_page_tells_every_scoring_sub_package() -> None:
    # Read in the prose's tables (the generated module list at the end names every module anyway).
    # management/ and migrations/ are Django's own folders, not parts of the design.
    text = (DOCS / "explanation" / "architecture.md").read_text()
    table_rows = "\n".join(line for line in text.split("## Every module")[0].splitlines() if line.startswith("|"))
    diagram = _without_fenced_blocks(text) != text and text.split("```", 2)[1]
    packages = sorted(
        path.parent.name
        for path in (ROOT / "scoring").glob("*/__init__.py")
        if path.parent.name not in {"management", "migrations"}
    )
    assert "tuning" in packages and "probes" in packages
    assert [name for name in packages if f"| `{name}/` |" not in table_rows] == []
    assert [name for name in packages if f"{name}/" not in str(diagram)] == []


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def test_no_page_pastes_a_benchmark_output_by_hand() -> None:
    # A fenced block whose first line is a recorded output's first line (or any of the output's
    # lines of 40 characters or more) is a copy: the page must include the recorded file instead.
    recorded = {}
    for result in RESULTS.glob("*.txt"):
        for line in result.read_text().splitlines():
            if len(line.strip()) >= 40 or line.strip() == _first_line(result.read_text()):
                recorded[line.strip()] = result.name
    pasted = []
    for page in DOCS.rglob("*.md"):
        for block in re.findall(r"^```[^\n]*\n(.*?)^```", page.read_text(), flags=re.M | re.S):
            if "--8<--" in block:
                continue
            copied = {recorded[line.strip()] for line in block.splitlines() if line.strip() in recorded}
            if copied:
                pasted.append(f"{page.relative_to(ROOT)}: {sorted(copied)}")
    assert pasted == []


def test_the_tutorial_shows_the_recorded_upload_benchmark() -> None:
    page = (DOCS / "tutorials" / "first-campaign.md").read_text()
    assert '--8<-- "benchmarks/results/upload_memory.txt"' in page
    assert "web worker peak RSS" not in _without_fenced_blocks(page)


ISSUE_NUMBER = re.compile(r"\bissues? #?\d+|\bthe issue's\b", re.I)


def test_no_file_cites_an_issue_number() -> None:
    # Issue numbers belong to a tracker the repository's reader cannot see: say what they stood
    # for. CHANGELOG.md keeps its history; "its issue #N" of another project (a link) is fine.
    listed = repository_files()
    suffixes = {".py", ".md", ".sh", ".html", ".js", ".css", ".toml", ".yml", ".yaml", ".txt", ".cfg", ".po"}
    cited = []
    for name in listed:
        path = ROOT / name
        if name == "CHANGELOG.md":
            continue
        if path.suffix not in suffixes and path.name != "Dockerfile":
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if any(not match.group().startswith("issue #") for match in ISSUE_NUMBER.finditer(line)):
                cited.append(f"{name}:{number}: {line.strip()[:80]}")
    assert cited == []
