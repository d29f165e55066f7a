"""Staff page that downloads a campaign's export (the dashboard links to it)."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponseBadRequest
from django.http.response import HttpResponseBase
from django.views.decorators.http import require_GET

from annotate.exports.http import export_response
from annotate.exports.service import ExportOptionError, build_export, parse_export_options
from annotate.teams import campaign_or_404


@staff_member_required
@require_GET
def campaign_export(request: HttpRequest, slug: str) -> HttpResponseBase:
    """``/staff/export/<slug>/?level=pairs|judgements&format=csv|jsonl``, streamed."""
    campaign = campaign_or_404(request.user, slug)
    try:
        level, format = parse_export_options(request.GET)
    except ExportOptionError as error:
        return HttpResponseBadRequest(f"{error}\n", content_type="text/plain; charset=utf-8")
    # Who is excluded: found chunk by chunk from each judge's own judgements (exact, current), not
    # a pass over every judgement of the campaign before the first row.
    return export_response(build_export(campaign, level, format))
