"""ParaPLUIE prompt templates: data files, parsed and validated in one place.

A template is a JSON file whose name (without ``.json``) is the template's name; the metric
built from it is ``parapluie_<name>``. The shipped files live in ``prompt_templates/`` beside
this module (DIRECT, INDIRECT and FS-DIRECT with the paper's texts); a researcher adds one by
dropping a file into a folder listed in ``PARAPLUIE_TEMPLATE_DIRS``::

    {
      "description": "One line shown by manage.py list_templates.",
      "source": "Where the text comes from (optional).",
      "language": "en (default) or fr: the language of the pairs it is written for",
      "answers": {"yes": "Yes", "no": "No"},
      "turns": [
        {"role": "user", "content": "Do these mean the same thing? A: \\"{source}\\"; B: \\"{hypothesis}\\""}
      ]
    }

Turns alternate user / assistant (an optional system turn may come first) and end with a
user turn: the model's answer follows it. ``{source}`` and ``{hypothesis}`` are replaced by
the pair; an assistant turn whose whole content is ``{explanation}`` is a generation step
(the INDIRECT kind): the model writes it, then the user turns after it are asked. Literal
braces are written ``{{`` and ``}}``. ``answers`` are the words whose log-probability ratio is
the score; the paper's few-shot examples answer "Yes"/"No", which is also the spelling the
embedded model uses after its chat template.

Nothing here imports torch: the web process reads templates to hash metric configurations.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from scoring.metrics.base import MetricError

SHIPPED_DIR = Path(__file__).resolve().parent / "prompt_templates"
# The paper's order (section 4.1); other templates follow alphabetically.
PAPER_ORDER = ("direct", "indirect", "fs_direct")

SOURCE = "source"
HYPOTHESIS = "hypothesis"
EXPLANATION = "explanation"
PLACEHOLDERS = frozenset({SOURCE, HYPOTHESIS, EXPLANATION})
ROLES = frozenset({"system", "user", "assistant"})
DEFAULT_ANSWERS = {"yes": "Yes", "no": "No"}

# Becomes part of a metric name (parapluie_<name>) and of URLs: keep it plain.
_NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,47}$")
_TOP_LEVEL_KEYS = frozenset({"description", "source", "language", "answers", "turns"})
# The language of the pairs a template is written for (campaigns have a language too).
LANGUAGES = frozenset({"en", "fr"})
_FORMATTER = string.Formatter()


class TemplateError(MetricError, ValueError):
    """A template file that cannot be used; the message names the file and what is wrong."""


class TemplateKind(StrEnum):
    """DIRECT: one forward pass reads the answer. INDIRECT: the model first generates E."""

    DIRECT = "direct"
    INDIRECT = "indirect"


@dataclass(frozen=True)
class Turn:
    """One chat message of a template, with its placeholders still in place."""

    role: str
    content: str


Messages = list[dict[str, str]]


@dataclass(frozen=True)
class PromptTemplate:
    """A validated ParaPLUIE template (see the module docstring for the file format)."""

    name: str
    description: str
    source: str
    turns: tuple[Turn, ...]
    yes: str
    no: str
    path: Path
    language: str = "en"

    @property
    def kind(self) -> TemplateKind:
        return TemplateKind.INDIRECT if self.generation_index is not None else TemplateKind.DIRECT

    @property
    def generation_index(self) -> int | None:
        """Index of the ``{explanation}`` assistant turn, or None for a one-pass template."""
        for index, turn in enumerate(self.turns):
            if turn.role == "assistant" and turn.content == "{" + EXPLANATION + "}":
                return index
        return None

    @property
    def canonical(self) -> dict[str, Any]:
        """Everything that changes the prompt or the answer read off it (not the description)."""
        return {
            "turns": [{"role": turn.role, "content": turn.content} for turn in self.turns],
            "answers": {"yes": self.yes, "no": self.no},
        }

    @property
    def text_hash(self) -> str:
        """SHA-256 of the template's turns and answers; part of the metric configuration."""
        payload = json.dumps(self.canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def question(self, source: str, hypothesis: str) -> Messages:
        """The messages up to the model's first answer (before the generation step, if any)."""
        end = self.generation_index if self.generation_index is not None else len(self.turns)
        return [_fill(turn, source, hypothesis, None) for turn in self.turns[:end]]

    def follow_up(self, source: str, hypothesis: str, explanation: str) -> Messages:
        """INDIRECT only: every message, with the generated explanation E in its turn."""
        if self.generation_index is None:
            raise TemplateError(f"template {self.name!r} has no generation step ({{{EXPLANATION}}} turn)")
        return [_fill(turn, source, hypothesis, explanation) for turn in self.turns]


def _fill(turn: Turn, source: str, hypothesis: str, explanation: str | None) -> dict[str, str]:
    # str.format parses the template only: braces inside the sentences are left alone.
    values = {SOURCE: source, HYPOTHESIS: hypothesis, EXPLANATION: explanation or ""}
    return {"role": turn.role, "content": turn.content.format(**values)}


# --- Loading and validation -----------------------------------------------------------------


def template_dirs(extra: Iterable[str | Path] | None = None) -> list[Path]:
    """The shipped folder, then ``extra`` (default: the installation's ``PARAPLUIE_TEMPLATE_DIRS``)."""
    if extra is None:
        from scoring.metrics import environment

        extra = environment.current().template_dirs
    return [SHIPPED_DIR, *(Path(folder) for folder in extra)]


def load_templates(extra_dirs: Iterable[str | Path] | None = None) -> dict[str, PromptTemplate]:
    """Every template by name: the paper's three first, then the others alphabetically.

    Raises :class:`TemplateError` for a missing folder, an invalid file or a name defined twice,
    so a broken template is noticed at start-up rather than silently skipped.
    """
    found: dict[str, PromptTemplate] = {}
    for folder in template_dirs(extra_dirs):
        if not folder.is_dir():
            raise TemplateError(f"template folder {folder} does not exist (check PARAPLUIE_TEMPLATE_DIRS)")
        for path in sorted(folder.glob("*.json")):
            template = parse_template_file(path)
            if template.name in found:
                raise TemplateError(
                    f"{path}: template {template.name!r} is already defined by {found[template.name].path}"
                )
            found[template.name] = template
    order = {name: position for position, name in enumerate(PAPER_ORDER)}
    return dict(sorted(found.items(), key=lambda item: (order.get(item[0], len(order)), item[0])))


def template_names(extra_dirs: Iterable[str | Path] | None = None) -> list[str]:
    """Names of every known template (the registry builds ``parapluie_<name>`` for each)."""
    return list(load_templates(extra_dirs))


def get_template(name: str, extra_dirs: Iterable[str | Path] | None = None) -> PromptTemplate:
    """The named template, or :class:`TemplateError` listing the known names."""
    templates = load_templates(extra_dirs)
    try:
        return templates[name]
    except KeyError:
        raise TemplateError(f"unknown ParaPLUIE template {name!r}; known templates: {', '.join(templates)}") from None


def parse_template_file(path: Path) -> PromptTemplate:
    """Read and validate one template file."""
    name = path.stem
    if not _NAME_PATTERN.match(name):
        raise TemplateError(
            f"{path}: template file names must be lower-case letters, digits and underscores "
            f"(starting with a letter, at most 48 characters), got {name!r}"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise TemplateError(f"{path}: not valid JSON: {error}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise TemplateError(f"{path}: cannot be read: {error}") from None
    return parse_template(name, data, path)


def parse_template(name: str, data: object, path: Path | None = None) -> PromptTemplate:
    """Validate the parsed contents of a template file; errors name the file and the turn."""
    where = str(path) if path is not None else f"template {name!r}"

    def fail(message: str) -> TemplateError:
        return TemplateError(f"{where}: {message}")

    if not isinstance(data, dict):
        raise fail(f"expected a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - _TOP_LEVEL_KEYS)
    if unknown:
        raise fail(f"unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_TOP_LEVEL_KEYS))}")
    description = _optional_text(data, "description", fail)
    source = _optional_text(data, "source", fail)
    language = _optional_text(data, "language", fail) or "en"
    if language not in LANGUAGES:
        raise fail(f'"language" must be one of {", ".join(sorted(LANGUAGES))}, got {language!r}')
    yes, no = _answers(data.get("answers", DEFAULT_ANSWERS), fail)
    turns = _turns(data.get("turns"), fail)
    return PromptTemplate(
        name=name,
        description=description,
        source=source,
        turns=turns,
        yes=yes,
        no=no,
        path=path if path is not None else Path(f"<{name}>"),
        language=language,
    )


def _optional_text(data: dict[str, Any], key: str, fail: Any) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise fail(f"{key!r} must be a string, got {type(value).__name__}")
    return value.strip()


def _answers(value: object, fail: Any) -> tuple[str, str]:
    if not isinstance(value, dict) or set(value) != {"yes", "no"}:
        raise fail('"answers" must be an object with exactly the keys "yes" and "no", e.g. {"yes": "Yes", "no": "No"}')
    yes, no = value["yes"], value["no"]
    for key, word in (("yes", yes), ("no", no)):
        if not isinstance(word, str) or not word.strip():
            raise fail(f'answers["{key}"] must be a non-empty string')
    if yes == no:
        raise fail(f'answers["yes"] and answers["no"] are both {yes!r}')
    return yes, no


def _placeholders(content: str, fail: Any, turn_number: int) -> list[str]:
    try:
        parsed = list(_FORMATTER.parse(content))
    except ValueError as error:
        raise fail(f"turn {turn_number}: {error} (write {{{{ and }}}} for literal braces)") from None
    fields = []
    for _, field, spec, conversion in parsed:
        if field is None:
            continue
        if field not in PLACEHOLDERS:
            known = ", ".join("{" + name + "}" for name in sorted(PLACEHOLDERS))
            raise fail(
                f"turn {turn_number}: unknown placeholder {{{field}}}; known: {known} "
                "(write {{ and }} for literal braces)"
            )
        if spec or conversion:
            raise fail(f"turn {turn_number}: placeholder {{{field}}} takes no format spec or conversion")
        fields.append(field)
    return fields


def _turns(value: object, fail: Any) -> tuple[Turn, ...]:
    if not isinstance(value, list) or not value:
        raise fail('"turns" must be a non-empty list of {"role": ..., "content": ...} objects')
    turns: list[Turn] = []
    seen: dict[str, list[int]] = {name: [] for name in PLACEHOLDERS}
    for index, item in enumerate(value):
        number = index + 1
        if not isinstance(item, dict) or set(item) != {"role", "content"}:
            raise fail(f'turn {number}: expected an object with exactly "role" and "content"')
        role, content = item["role"], item["content"]
        if role not in ROLES:
            raise fail(f"turn {number}: unknown role {role!r}; use one of {', '.join(sorted(ROLES))}")
        if not isinstance(content, str) or not content.strip():
            raise fail(f"turn {number}: content must be a non-empty string")
        fields = _placeholders(content, fail, number)
        if EXPLANATION in fields and (role != "assistant" or content != "{" + EXPLANATION + "}"):
            raise fail(
                f"turn {number}: {{{EXPLANATION}}} marks the generation step and must be the whole "
                "content of an assistant turn"
            )
        if role == "assistant" and (SOURCE in fields or HYPOTHESIS in fields):
            raise fail(f"turn {number}: the pair's sentences belong in user (or system) turns, not assistant turns")
        for field in fields:
            seen[field].append(index)
        turns.append(Turn(role=role, content=content))
    _check_order(turns, fail)
    for field in (SOURCE, HYPOTHESIS):
        if not seen[field]:
            raise fail(f"no turn contains {{{field}}}: the template must show the pair to the model")
    generation = seen[EXPLANATION]
    if len(generation) > 1:
        raise fail(f"{{{EXPLANATION}}} appears {len(generation)} times; a template has at most one generation step")
    if generation:
        step = generation[0]
        late = [index + 1 for field in (SOURCE, HYPOTHESIS) for index in seen[field] if index > step]
        if late:
            raise fail(f"turn {late[0]}: the pair must be shown before the generation step (turn {step + 1})")
    return tuple(turns)


def _check_order(turns: Sequence[Turn], fail: Any) -> None:
    # Many chat templates (Mistral's among them) refuse anything but strict alternation.
    roles = [turn.role for turn in turns]
    start = 1 if roles[0] == "system" else 0
    if "system" in roles[start:]:
        raise fail(f"turn {roles.index('system', start) + 1}: a system turn may only come first")
    for offset, role in enumerate(roles[start:]):
        expected = "user" if offset % 2 == 0 else "assistant"
        if role != expected:
            raise fail(f"turn {start + offset + 1}: expected a {expected} turn (turns alternate, user first)")
    if roles[-1] != "user":
        raise fail("missing final user turn: the model answers right after the last turn, which must be a user turn")


# --- Showing templates ----------------------------------------------------------------------

EXAMPLE_PAIR = ("The cat is alive.", "The cat was alive.")
EXPLANATION_STANDIN = "<E: the explanation the model generates>"


def format_plain(template: PromptTemplate, source: str, hypothesis: str) -> str:
    """The template's turns filled with a pair, one ``(role): text`` block per turn."""
    messages = (
        template.follow_up(source, hypothesis, EXPLANATION_STANDIN)
        if template.kind is TemplateKind.INDIRECT
        else template.question(source, hypothesis)
    )
    blocks = []
    for index, message in enumerate(messages):
        if template.generation_index == index:
            blocks.append("Generation -> E")
        blocks.append(f"({message['role']}): {message['content']}")
    blocks.append(f"(assistant): {template.yes} | {template.no}   <- the answer whose log-ratio is the score")
    return "\n\n".join(blocks)
