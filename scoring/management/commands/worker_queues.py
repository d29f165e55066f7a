"""``manage.py worker_queues``: the queues a worker should consume, comma-separated, for ``celery -Q``.

Without options: every queue (``cpu``, ``llm``, one ``llm.<model>`` per judge model of
``PARAPLUIE_MODELS``): what the embedded worker of ``scripts/run.sh`` consumes. With
``--model NAME`` (repeatable): those models' queues only, for a GPU worker that keeps only
those models in memory (``scripts/worker.sh --model NAME``). ``--list`` prints one queue a
line with the model it serves. ``--interactive``: the queue of the work a researcher waits for
at a page (uploads, report intervals), which a worker of its own serves
(``scripts/worker.sh --interactive``); no other option ever lists it, so a scoring worker never
takes that work and a backlog of scores never holds it up.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from paraeval import broker
from scoring.metrics.judges import configured_models
from scoring.pipeline import configs


class Command(BaseCommand):
    help = "Print the Celery queues to consume: all of them, or one judge model's (--model NAME)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--model", action="append", default=[], help="A judge model's name (repeatable).")
        parser.add_argument("--list", action="store_true", help="One queue a line, with what it serves.")
        parser.add_argument(
            "--interactive", action="store_true", help="The interactive queue only (uploads, report intervals)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["interactive"]:
            if options["model"]:
                raise CommandError("--interactive and --model name different workers: give one of them")
            self.stdout.write(broker.INTERACTIVE_QUEUE)
            return
        judges = {judge.name: judge for judge in configured_models()}
        if options["model"]:
            unknown = [name for name in options["model"] if name not in judges]
            if unknown:
                raise CommandError(
                    f"unknown judge model(s) {', '.join(unknown)}; PARAPLUIE_MODELS names: {', '.join(judges)}"
                )
            queues = [judges[name].queue for name in options["model"]]
        else:
            queues = configs.all_queues()
        if options["list"]:
            models = configs.queue_models()
            for queue in queues:
                self.stdout.write(f"{queue}\t{models.get(queue, '')}".rstrip())
            return
        self.stdout.write(",".join(queues))
