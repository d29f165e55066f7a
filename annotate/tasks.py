"""Celery tasks of the annotate app: the dry run and the import of a staff upload (``interactive`` queue)."""

from __future__ import annotations

from celery import shared_task

from annotate import uploads


@shared_task(name=uploads.UPLOAD_TASK, ignore_result=True, acks_late=True)
def run_upload(upload_id: int, mode: str) -> str:
    """Dry-run or import an uploaded pair file; safe to run twice (see :func:`annotate.uploads.run_upload`)."""
    return uploads.run_upload(upload_id, mode)
