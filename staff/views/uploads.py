"""Staff pages to upload a pair file into a campaign: upload, preview and mapping, dry run, import.

Thin views over :mod:`annotate.uploads`. The file is written to disk chunk by chunk as it
arrives (:class:`DiskUploadHandler`, whatever its size), never held in memory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.contrib.admin.views.decorators import staff_member_required
from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotate import uploads
from annotate.models import Campaign, PairUpload, UploadState
from annotate.teams import campaign_or_404, visible_to
from scoring.pipeline.status import QueueWait, queue_wait

RUNNING_STATES = (UploadState.CHECK_QUEUED, UploadState.IMPORT_QUEUED)


class DiskFile(UploadedFile):
    """An uploaded file already written to its place under ``uploads/``."""

    def __init__(self, path: Path, name: str, size: int, content_type: str | None) -> None:
        super().__init__(None, name, content_type, size, None)
        self.path = path

    def close(self) -> None:  # nothing is open
        return None


class DiskUploadHandler(FileUploadHandler):
    """Write each file field's chunks straight to ``PARAEVAL_DATA_DIR/uploads`` (never to memory),
    stopping the upload past ``PARAEVAL_UPLOAD_MAX_MB``."""

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        super().new_file(*args, **kwargs)
        self.key = uploads.new_key()
        self.path = uploads.upload_dir() / f"{self.key}.upload"
        self.handle = self.path.open("wb")
        self.written = 0
        self.too_large = False

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        self.written += len(raw_data)
        if self.written > uploads.max_upload_bytes():
            self.too_large = True
            self.handle.close()
            self.path.unlink(missing_ok=True)
            assert self.request is not None
            self.request.META["paraeval.upload_too_large"] = True
            raise StopUpload(connection_reset=False)
        self.handle.write(raw_data)
        return None

    def file_complete(self, file_size: int) -> UploadedFile | None:
        self.handle.close()
        assert self.file_name is not None
        uploaded = DiskFile(self.path, self.file_name, file_size, self.content_type)
        uploaded.key = self.key  # type: ignore[attr-defined]
        return uploaded

    def upload_interrupted(self) -> None:
        handle = getattr(self, "handle", None)
        if handle is not None:
            handle.close()
            self.path.unlink(missing_ok=True)


def _too_large() -> str:
    return f"The file is larger than {uploads.max_upload_bytes() // (1024 * 1024):,} MB (PARAEVAL_UPLOAD_MAX_MB)."


@never_cache
@csrf_exempt  # the token is checked below, once the upload handlers are in place
@staff_member_required
@require_http_methods(["GET", "HEAD", "POST"])
def upload(request: HttpRequest, slug: str) -> HttpResponse:
    """The upload form (GET) and the upload itself (POST), which leads to the preview."""
    campaign = campaign_or_404(request.user, slug)
    if request.method == "POST":
        # Before anything reads the body: every file goes to disk, however small.
        request.upload_handlers = [DiskUploadHandler(request)]
        response = _receive(request, campaign)
        if response.status_code == 403:  # refused by the CSRF check once the file was on disk
            for received in request.FILES.values():
                if isinstance(received, DiskFile):
                    received.path.unlink(missing_ok=True)
        return response
    recent = PairUpload.objects.filter(campaign=campaign).order_by("-created_at")[:10]
    return render(request, "staff/upload.html", _form_context(campaign, recent))


def _form_context(campaign: Campaign, recent: Any, error: str = "") -> dict[str, Any]:
    return {
        "campaign": campaign,
        "recent": recent,
        "error": error,
        "formats": uploads.FORMATS,
        "max_mb": uploads.max_upload_bytes() // (1024 * 1024),
    }


@csrf_protect
def _receive(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    recent = PairUpload.objects.filter(campaign=campaign).order_by("-created_at")[:10]
    received = request.FILES.get("file")  # reads the body: the handler writes the file to disk
    if request.META.get("paraeval.upload_too_large"):
        return render(request, "staff/upload.html", _form_context(campaign, recent, _too_large()), status=413)
    format_name = request.POST.get("format", "auto")
    if not isinstance(received, DiskFile):
        error = "Choose a file to upload."
        return render(request, "staff/upload.html", _form_context(campaign, recent, error), status=400)
    if format_name not in uploads.FORMATS or received.size == 0:
        received.path.unlink(missing_ok=True)
        error = "The file is empty." if received.size == 0 else f"Unknown format {format_name!r}."
        return render(request, "staff/upload.html", _form_context(campaign, recent, error), status=400)
    job = PairUpload.objects.create(
        campaign=campaign,
        uploaded_by=request.user if request.user.is_authenticated else None,
        key=received.key,  # type: ignore[attr-defined]
        filename=os.path.basename(received.name or "upload")[:255],
        size=received.size or 0,
        format=format_name,
        origin=request.POST.get("origin", "").strip()[:100],
    )
    return redirect("staff:upload-detail", slug=campaign.slug, upload_id=job.pk)


def _upload(request: HttpRequest, slug: str, upload_id: int) -> PairUpload:
    uploads_seen = visible_to(PairUpload.objects.select_related("campaign"), request.user)
    return get_object_or_404(uploads_seen, pk=upload_id, campaign__slug=slug)


@never_cache
@staff_member_required
@require_http_methods(["GET", "HEAD", "POST"])
def detail(request: HttpRequest, slug: str, upload_id: int) -> HttpResponse:
    """The preview with its mapping (POST saves a new mapping), the dry run, the import, the summary."""
    job = _upload(request, slug, upload_id)
    errors: list[str] = []
    if request.method == "POST":
        if job.state in RUNNING_STATES or job.state in (UploadState.IMPORTED, UploadState.DISCARDED):
            return HttpResponseBadRequest("This upload is running or already imported: its mapping cannot change.")
        chosen = {
            key.removeprefix("column:"): str(request.POST.get(key, ""))
            for key in request.POST
            if key.startswith("column:")
        }
        gold = {
            "gold_map": request.POST.get("gold_map", ""),
            "gold_constant": request.POST.get("gold_constant", ""),
            "strict": request.POST.get("strict") == "on",
        }
        errors = uploads.set_mapping(
            job, request.POST.get("format", job.format), chosen, request.POST.get("origin", job.origin), gold
        )
        if not errors:
            return redirect("staff:upload-detail", slug=slug, upload_id=job.pk)
    preview = uploads.preview(job) if job.state not in (UploadState.IMPORTED, UploadState.DISCARDED) else None
    progress = uploads.read_progress(job)
    checked = job.checked_map == uploads.checked_map(job)
    waiting = _waiting(job, progress)
    context = {
        "campaign": job.campaign,
        "job": job,
        "preview": preview,
        "errors": errors,
        "running": job.state in RUNNING_STATES,
        "progress": progress,
        "waiting": waiting,
        # No worker serves the queue: said in red once the task has waited a little (a worker
        # that is starting up has not written its first heartbeat yet).
        "no_worker_yet": waiting is not None
        and not waiting.served
        and progress.age_seconds > uploads.WAITING_HINT_SECONDS,
        "summary": uploads.UploadReport.from_json(job.report).lines() if job.report else [],
        "problems": uploads.shown_problems(job.problems or []),
        "gold_map_anchor": uploads.GOLD_MAP_ANCHOR,
        "checked": checked and job.state == UploadState.CHECKED,
        "fields": list(uploads.FIELD_LABELS.items()),
        "formats": uploads.FORMATS,
        "gold_constants": uploads.GOLD_CONSTANT_CHOICES,
        "status_url": reverse("staff:upload-status", args=[slug, job.pk]),
    }
    return render(request, "staff/upload_detail.html", context, status=400 if errors else 200)


def _waiting(job: PairUpload, progress: uploads.Progress) -> QueueWait | None:
    """What a queued task that no worker has started waits behind (None once it runs)."""
    if job.state not in RUNNING_STATES or progress.read > 0:
        return None
    return queue_wait()


@staff_member_required
@require_POST
def start(request: HttpRequest, slug: str, upload_id: int, mode: str) -> HttpResponse:
    """Queue the dry run (``check``) or the import (``import``) of an upload."""
    job = _upload(request, slug, upload_id)
    if mode not in (uploads.CHECK, uploads.IMPORT, "discard"):
        return HttpResponseBadRequest(f"Unknown action {mode!r}: check, import or discard.")
    if job.state in RUNNING_STATES:
        return HttpResponseBadRequest("This upload is already running: wait for it to finish.")
    if job.state in (UploadState.IMPORTED, UploadState.DISCARDED):
        return HttpResponseBadRequest(f"This upload is already {job.state}.")
    if mode == "discard":
        uploads.discard(job)
        return redirect("staff:upload", slug=slug)
    uploads.queue(job, mode)
    return redirect("staff:upload-detail", slug=slug, upload_id=job.pk)


@never_cache
@staff_member_required
@require_GET
def status(request: HttpRequest, slug: str, upload_id: int) -> JsonResponse:
    """The upload's state and progress, polled by its page."""
    job = _upload(request, slug, upload_id)
    progress = uploads.read_progress(job)
    waiting = _waiting(job, progress)
    return JsonResponse(
        {
            "waiting": waiting.message if waiting is not None and waiting.served else "",
            "state": job.state,
            "running": job.state in RUNNING_STATES,
            "phase": progress.phase,
            "read": progress.read,
            "total": progress.total,
            "percent": progress.percent,
        }
    )
