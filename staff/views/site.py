"""The site's own pages: the home page, the staff hub, the exports page and the documentation site.

Thin: the campaigns and links come from :mod:`staff.hub`.
"""

from __future__ import annotations

from csp.decorators import csp_update
from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from staff import hub


def _is_staff(request: HttpRequest) -> bool:
    user = request.user
    return bool(user.is_authenticated and user.is_active and user.is_staff)


def _staff_hub(request: HttpRequest) -> HttpResponse:
    context = {
        "campaigns": hub.campaign_entries(request.user),
        "pages": hub.staff_pages(),
        "full_slugs": hub.full_campaigns(),
    }
    return render(request, "staff/home.html", context)


@never_cache
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """``/``: the staff hub for staff; for anyone else a short neutral page (and the public campaign)."""
    if _is_staff(request):
        return _staff_hub(request)
    return render(request, "site/home.html", {"campaign": hub.public_campaign()})


@never_cache
@staff_member_required
@require_GET
def staff_home(request: HttpRequest) -> HttpResponse:
    """``/staff/``: campaigns with their volunteer links, and every staff page."""
    return _staff_hub(request)


@never_cache
@staff_member_required
@require_GET
def exports(request: HttpRequest) -> HttpResponse:
    """``/staff/export/``: every campaign's downloads (pairs and judgements, CSV and JSONL)."""
    return render(request, "staff/exports.html", {"campaigns": hub.campaign_entries(request.user)})


@staff_member_required
@require_GET
# MkDocs Material writes three small inline scripts into every page (its configuration and
# colour scheme), different on each page: no hash list can follow them. The site is the
# project's own static text, served to staff only, with no user content in it.
@csp_update({"script-src": ["'unsafe-inline'"]})
def docs(request: HttpRequest, path: str = "") -> HttpResponseBase:
    """``/docs/…``: the documentation site built by ``mkdocs build`` (staff only)."""
    site = settings.PARAEVAL_DOCS_SITE_DIR.resolve()
    if not (site / "index.html").is_file():
        return render(request, "staff/docs_missing.html", {"site": site}, status=404)
    target = (site / (path or "index.html")).resolve()
    # Only files inside the site folder: "../" or a link out of it is a 404.
    if not target.is_relative_to(site):
        raise Http404("No such documentation page.")
    if target.is_dir():
        if path and not path.endswith("/"):
            # The folder's index.html links relative to the folder: its address must end in "/".
            return redirect("docs-page", path=f"{path}/")
        target = target / "index.html"
    elif not target.is_file() and path.rstrip("/"):
        # The site is built with use_directory_urls: false (it opens from the file system), so
        # a page lives at "page.html"; the directory-style address "page/" redirects there,
        # where the page's relative links resolve.
        page = (site / f"{path.rstrip('/')}.html").resolve()
        if page.is_relative_to(site) and page.is_file():
            return redirect("docs-page", path=page.relative_to(site).as_posix())
    if not target.is_file():
        raise Http404("No such documentation page.")
    return FileResponse(target.open("rb"))
