"""Staff pages of pairs: one pair in full, and a campaign's pairs searchable. Thin views over
:mod:`scoring.reports.pair_pages`."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from annotate.models import Pair
from annotate.teams import campaign_or_404, visible_to
from scoring.reports import pair_pages
from staff.paging import KnownCountPaginator


@never_cache
@staff_member_required
@require_GET
def pair_page(request: HttpRequest, slug: str, pair_id: int) -> HttpResponse:
    """Both sentences, every judgement and score, the gold label."""
    pair = get_object_or_404(
        visible_to(Pair.objects.select_related("campaign"), request.user), pk=pair_id, campaign__slug=slug
    )
    detail = pair_pages.pair_detail(pair)
    return render(request, "staff/pair.html", {"campaign": pair.campaign, "detail": detail, "pair": pair})


@never_cache
@staff_member_required
@require_GET
def pair_list(request: HttpRequest, slug: str) -> HttpResponse:
    """The campaign's pairs, searched by text or id, origin and system, 50 a page."""
    campaign = campaign_or_404(request.user, slug)
    query = request.GET.get("q", "")[:200]
    origin = request.GET.get("origin", "")[:100]
    system = request.GET.get("system", "")[:100]
    facets = pair_pages.facets(campaign)
    pairs = pair_pages.search(campaign, query, origin, system)
    searched = bool(query.strip() or origin or system)
    # Unsearched, the count is the campaign's, kept with the menus: no count over every pair.
    paginator = (
        Paginator(pairs, pair_pages.PAGE_SIZE)
        if searched
        else KnownCountPaginator(pairs, facets.pairs, pair_pages.PAGE_SIZE)
    )
    page = paginator.get_page(request.GET.get("page"))
    metric = request.GET.get("metric", "")
    chosen = next((pk for pk, _ in facets.configs if str(pk) == metric), None)
    worst = pair_pages.worst_pairs(campaign, chosen) if chosen is not None else pair_pages.NO_WORST
    context = {
        "campaign": campaign,
        "page": page,
        "rows": pair_pages.pair_rows(list(page.object_list)),
        "query": query,
        "origin": origin,
        "system": system,
        "origins": facets.origins,
        "systems": facets.systems,
        "configs": facets.configs,
        "metric": chosen,
        "disagreements": worst.value or [],
        "worst_computing": worst.value is None,
        "worst_notice": worst.notice,
    }
    return render(request, "staff/pairs.html", context)
