"""The Celery task that tunes a judge model, on that model's queue (``llm.<model>``).

Acknowledged on receipt, not late: a training run lasts longer than the broker's visibility
timeout, and a late-acknowledged message would be delivered again to another worker while the
first still trains. A worker killed mid-run leaves the row ``running``; staff run it again
(``manage.py tune_judge`` with the same options). A message delivered twice trains once: the
run claims its row (:func:`scoring.tuning.run.run`).
"""

from __future__ import annotations

from celery import shared_task


@shared_task(name="scoring.tuning.tasks.tune_judge", ignore_result=True, acks_late=False)
def tune_judge(tuned_id: int) -> dict[str, object] | None:
    """Train the tuning ``tuned_id``, record the tuned judge and score its campaign cross-fitted."""
    from scoring.tuning.run import run

    row = run(tuned_id)
    if row is None:
        return None
    return {"tuning": row.pk, "status": row.status, "name": row.name, "error": row.error[:200]}
