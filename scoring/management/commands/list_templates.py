"""``manage.py list_templates``: the ParaPLUIE prompt templates, or one of them rendered.

``--show NAME`` fills the template with an example pair and renders it through the model's chat
template (loading only its tokenizer), with the answer tokens and the shared prefix the fast
path caches; ``--plain`` (or a model that is not available) prints the turns as they are.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from scoring.metrics.base import MetricUnavailable
from scoring.metrics.templates import (
    EXAMPLE_PAIR,
    EXPLANATION_STANDIN,
    TemplateError,
    TemplateKind,
    format_plain,
    get_template,
    load_templates,
    template_dirs,
)


class Command(BaseCommand):
    help = "List the ParaPLUIE prompt templates (name, kind, turns, description), or --show one."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--show", metavar="NAME", help="Render this template with an example pair.")
        parser.add_argument("--source", default=EXAMPLE_PAIR[0], help="Source sentence for --show.")
        parser.add_argument("--hypothesis", default=EXAMPLE_PAIR[1], help="Hypothesis for --show.")
        parser.add_argument("--plain", action="store_true", help="Print the turns; do not load a tokenizer.")
        parser.add_argument(
            "--model", default=None, help="Model whose chat template renders --show (default: PARAPLUIE_MODEL)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["show"]:
                self._show(options)
            else:
                self._list()
        except TemplateError as error:
            raise CommandError(str(error)) from None

    def _list(self) -> None:
        templates = load_templates()
        header = ["name", "metric", "kind", "turns", "answers", "sha256", "description"]
        rows = [
            [
                template.name,
                f"parapluie_{template.name}",
                template.kind.value,
                str(len(template.turns)),
                f"{template.yes}/{template.no}",
                template.text_hash[:12],
                template.description,
            ]
            for template in templates.values()
        ]
        widths = [max(len(row[column]) for row in [header, *rows]) for column in range(len(header))]
        for row in [header, *rows]:
            self.stdout.write("  ".join(value.ljust(width) for value, width in zip(row, widths, strict=True)).rstrip())
        self.stdout.write("\nfolders: " + ", ".join(str(folder) for folder in template_dirs()))

    def _show(self, options: dict[str, Any]) -> None:
        template = get_template(options["show"])
        source, hypothesis = options["source"], options["hypothesis"]
        self.stdout.write(f"{template.name} ({template.kind.value}): {template.description}")
        if template.source:
            self.stdout.write(f"source: {template.source}")
        self.stdout.write(f"file: {template.path}\nsha256: {template.text_hash}\n")
        if not options["plain"]:
            try:
                self._show_rendered(template, source, hypothesis, options["model"] or settings.PARAPLUIE_MODEL)
                return
            except MetricUnavailable as error:
                self.stdout.write(f"(no chat template rendering: {error})\n")
        self.stdout.write(format_plain(template, source, hypothesis))

    def _show_rendered(self, template: Any, source: str, hypothesis: str, model: str) -> None:
        from scoring.metrics.lm import load_tokenizer
        from scoring.metrics.parapluie_engine import PROBE_PAIRS, encode, find_answer_tokens, find_shared_prefix, render

        tokens = load_tokenizer(model, allow_download=settings.PARAEVAL_ALLOW_MODEL_DOWNLOAD)
        if template.kind is TemplateKind.INDIRECT:
            question = render(tokens, template.question(source, hypothesis))
            text = render(tokens, template.follow_up(source, hypothesis, EXPLANATION_STANDIN))
            self.stdout.write(f"--- generation prompt ({len(encode(tokens, question))} tokens), E is generated:")
            self.stdout.write(question)
            self.stdout.write("--- follow-up prompt, scored after E:")
        else:
            text = render(tokens, template.question(source, hypothesis))
            self.stdout.write(f"--- prompt rendered by {tokens.label}'s chat template:")
        self.stdout.write(text)
        answers = find_answer_tokens(tokens, template)
        prefix = find_shared_prefix(tokens, lambda pair: render(tokens, template.question(*pair)))
        self.stdout.write("---")
        self.stdout.write(f"tokens: {len(encode(tokens, text))}; shared prefix cached once: {len(prefix)} tokens")
        self.stdout.write(
            f"answer tokens: {answers.yes!r} = id{'s' if len(answers.yes_ids) > 1 else ''} "
            f"{', '.join(map(str, answers.yes_ids))}, {answers.no!r} = id{'s' if len(answers.no_ids) > 1 else ''} "
            f"{', '.join(map(str, answers.no_ids))} "
            f"({'single tokens' if answers.single else 'tokens'} after the generation prompt; "
            f"probes: {len(PROBE_PAIRS)} pairs)"
        )
