"""Build probe pairs from source pairs: each pair carries the relation it was built to have.

For a source pair (S, H) of group g (one group per source pair; intervals resample groups):

* ``original``: (S, H) itself, the reference of the reversed, padded and multi-swap probes;
* ``multi_swap``: paper 004's graded partial paraphrases (section 4): H after 1, 2 and 3
  cumulative swaps of two units of the same swap tag, paired with S, so a metric should score
  (S, H) > (S, H1) > (S, H2) > (S, H3); built only from pairs not labelled non-paraphrases;
* ``paws_swap``: PAWS's word scrambling on S: two entities or nouns of the same tag exchanged
  (another tag when none has two), (S, S') a non-paraphrase with 100 % word overlap;
* ``number``, ``date``, ``negation``: S with one number, one date part or its negation changed;
* ``control``: rewrites of S that keep its meaning, the yardstick of the four kinds above: the
  sentence itself, the two sides of a coordination exchanged ("cats and dogs"), its commas and
  final full stop dropped, the sentence in lower case;
* ``reversed``: (H, S); ``padded``: (S, H) with a meaning-neutral opening clause.

Every random choice comes from a generator seeded by the seed and the group's key, so a group's
probes do not depend on which other pairs were built with it.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from scoring.probes.sentence import NOUN, Token, render, render_order, swap_groups, units

MAX_SWAPS = 3
MONTHS = [
    *("January", "February", "March", "April", "May", "June"),
    *("July", "August", "September", "October", "November", "December"),
]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
# Openings that add words and no meaning (the length probe).
PADDING = ("As it happens, ", "As a matter of fact, ", "It is worth noting that ")
# "did not sell" for "sold": the auxiliary that carries the tense once "not" is inserted.
DO_SUPPORT = {"VBD": "did", "VBZ": "does", "VBP": "do"}
# Contracted negations whose host changes when "n't" goes: "can't" is "ca" + "n't".
CONTRACTED_HOSTS = {"ca": "can", "wo": "will", "sha": "shall"}


class ProbeKind(StrEnum):
    ORIGINAL = "original"
    MULTI_SWAP = "multi_swap"
    PAWS_SWAP = "paws_swap"
    NUMBER = "number"
    DATE = "date"
    NEGATION = "negation"
    CONTROL = "control"
    REVERSED = "reversed"
    PADDED = "padded"


# The kinds a probe set can be asked for (original and control come with the kinds that need them).
BUILDABLE = (
    ProbeKind.MULTI_SWAP,
    ProbeKind.PAWS_SWAP,
    ProbeKind.NUMBER,
    ProbeKind.DATE,
    ProbeKind.NEGATION,
    ProbeKind.REVERSED,
    ProbeKind.PADDED,
)
# The kinds compared with their group's controls (a non-paraphrase with near-total overlap).
AGAINST_CONTROL = (ProbeKind.PAWS_SWAP, ProbeKind.NUMBER, ProbeKind.DATE, ProbeKind.NEGATION)


@dataclass(frozen=True)
class SourcePair:
    """A pair to build probes from: ``key`` names its group; ``label`` its paraphrase label if known."""

    key: str
    source: str
    hypothesis: str
    label: bool | None = None


@dataclass(frozen=True)
class ParsedPair:
    """A source pair with both sentences parsed."""

    pair: SourcePair
    source_tokens: tuple[Token, ...]
    hypothesis_tokens: tuple[Token, ...]


@dataclass(frozen=True)
class Probe:
    """One probe pair and the relation it was built to have.

    ``expected_paraphrase``: the label it should get (None where the source pair's label is
    unknown); ``swaps``: the number of swaps of a multi-swap probe (0 for the original pair);
    ``detail``: what was changed ("Boston <-> Denver", "identity", "2004 -> 2006"…).
    """

    group: str
    kind: ProbeKind
    source: str
    hypothesis: str
    expected_paraphrase: bool | None
    swaps: int | None = None
    detail: str = ""


def group_random(seed: int, group: str, kind: str) -> random.Random:
    """A generator for one group and kind, independent of every other group (a stable hash, not ``hash``)."""
    digest = hashlib.sha256(f"{seed}\x1f{group}\x1f{kind}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def swapped(order: Sequence[int], a: int, b: int) -> list[int]:
    """``order`` with positions ``a`` and ``b`` exchanged."""
    order = list(order)
    order[a], order[b] = order[b], order[a]
    return order


def multi_swaps(tokens: Sequence[Token], rng: random.Random, swaps: int = MAX_SWAPS) -> list[tuple[str, str]]:
    """The sentence after 1..``swaps`` cumulative swaps, with what each swap exchanged.

    As paper 004: tag groups with two distinct units or more, at least ``swaps`` of them, one
    group sampled per swap and two of its units exchanged. Empty when there are too few groups.
    """
    sentence_units = units(tokens)
    groups = swap_groups(sentence_units)
    if len(groups) < swaps:
        return []
    order = list(range(len(sentence_units)))
    result = []
    for tag in rng.sample(sorted(groups), swaps):
        a, b = sorted(rng.sample(groups[tag], 2))
        order = swapped(order, a, b)
        result.append((render_order(sentence_units, order), f"{sentence_units[a].text} <-> {sentence_units[b].text}"))
    return result


def paws_swap(tokens: Sequence[Token], rng: random.Random) -> tuple[str, str] | None:
    """One PAWS-style swap: two entities or nouns of the same tag exchanged (another tag if none)."""
    sentence_units = units(tokens)
    groups = swap_groups(sentence_units)
    if not groups:
        return None
    phrases = sorted(tag for tag in groups if tag.startswith("ENT:") or tag == NOUN)
    tag = rng.choice(phrases or sorted(groups))
    a, b = sorted(rng.sample(groups[tag], 2))
    order = swapped(range(len(sentence_units)), a, b)
    return render_order(sentence_units, order), f"{sentence_units[a].text} <-> {sentence_units[b].text}"


def coordination_swap(tokens: Sequence[Token]) -> tuple[str, str] | None:
    """The two sides of the first "X and Y" / "X or Y" of one swap tag exchanged, or None."""
    sentence_units = units(tokens)
    for position in range(len(sentence_units) - 2):
        left, conjunction, right = sentence_units[position : position + 3]
        conjunction_token = tokens[conjunction.start]
        if conjunction_token.dep != "cc" or conjunction_token.text.lower() not in ("and", "or"):
            continue
        if not left.swap_tag or left.swap_tag != right.swap_tag or left.text.lower() == right.text.lower():
            continue
        if not any(
            tokens[i].dep == "conj" and left.start <= tokens[i].head < left.end for i in range(right.start, right.end)
        ):
            continue
        order = swapped(range(len(sentence_units)), position, position + 2)
        return render_order(sentence_units, order), f"{left.text} <-> {right.text}"
    return None


def without_punctuation(tokens: Sequence[Token]) -> str | None:
    """The sentence without its commas and its final full stop, or None when it has neither."""
    kept: list[list[str]] = []
    removed = False
    for index, token in enumerate(tokens):
        final_stop = index == len(tokens) - 1 and token.text == "."
        if token.tag == "," or final_stop:
            removed = True
            if kept:
                kept[-1][1] = token.whitespace
            continue
        kept.append([token.text, token.whitespace])
    if not removed or not kept:
        return None
    return "".join(text + space for text, space in kept).strip()


def _replace(tokens: Sequence[Token], index: int, text: str) -> str:
    return render([*tokens[:index], _with_text(tokens[index], text), *tokens[index + 1 :]])


def _with_text(token: Token, text: str) -> Token:
    return Token(
        text, token.whitespace, token.tag, token.pos, token.dep, token.lemma, token.head, token.ent_type, token.ent_iob
    )


def changed_number(tokens: Sequence[Token], rng: random.Random) -> tuple[str, str] | None:
    """One number written in digits (outside dates and times) with its leading digit changed."""
    candidates = [
        i
        for i, token in enumerate(tokens)
        if token.tag == "CD" and token.ent_type not in ("DATE", "TIME") and any(c.isdigit() for c in token.text)
    ]
    if not candidates:
        return None
    index = rng.choice(candidates)
    text = tokens[index].text
    at = next(i for i, c in enumerate(text) if c.isdigit())
    # 1-9 only, so that no zero comes to lead the number.
    digits = [d for d in "123456789" if d != text[at]]
    new = text[:at] + rng.choice(digits) + text[at + 1 :]
    return _replace(tokens, index, new), f"{text} -> {new}"


def changed_date(tokens: Sequence[Token], rng: random.Random) -> tuple[str, str] | None:
    """One date changed: a month name for another month, else a weekday, else a year (±1-3)."""
    in_dates = [i for i, token in enumerate(tokens) if token.ent_type == "DATE"]
    for names in (MONTHS, WEEKDAYS):
        found = [i for i in in_dates if tokens[i].text in names]
        if found:
            index = rng.choice(found)
            old = tokens[index].text
            new = rng.choice([name for name in names if name != old])
            return _replace(tokens, index, new), f"{old} -> {new}"
    years = [
        i
        for i in in_dates
        if tokens[i].text.isdigit() and len(tokens[i].text) == 4 and 1000 <= int(tokens[i].text) < 3000
    ]
    if not years:
        return None
    index = rng.choice(years)
    old = tokens[index].text
    new = str(int(old) + rng.choice((-3, -2, -1, 1, 2, 3)))
    return _replace(tokens, index, new), f"{old} -> {new}"


def changed_negation(tokens: Sequence[Token]) -> tuple[str, str] | None:
    """The sentence's negation removed, or "not" added to its main verb; None if neither applies."""
    for index, token in enumerate(tokens):
        if token.dep == "neg" and token.text.lower() in ("not", "n't", "never"):
            rest = [list((t.text, t.whitespace)) for t in tokens]
            if index > 0:
                rest[index - 1][1] = token.whitespace
                if token.text.lower() == "n't":
                    host = tokens[index - 1].text
                    rest[index - 1][0] = CONTRACTED_HOSTS.get(host.lower(), host)
            del rest[index]
            return "".join(text + space for text, space in rest).strip(), f"-{token.text}"
    root = next((i for i, token in enumerate(tokens) if token.dep == "ROOT"), None)
    if root is None or root == 0:
        return None
    auxiliaries = [
        i for i, token in enumerate(tokens) if token.head == root and token.dep in ("aux", "auxpass") and i < root
    ]
    if auxiliaries:
        at = auxiliaries[0]
    elif tokens[root].pos == "AUX":
        at = root
    else:
        at = -1
    if at >= 0:
        parts = [list((t.text, t.whitespace)) for t in tokens]
        parts.insert(at + 1, ["not", parts[at][1] or " "])
        parts[at][1] = " "
        return "".join(text + space for text, space in parts).strip(), "+not"
    verb = tokens[root]
    if verb.pos != "VERB" or verb.tag not in DO_SUPPORT:
        return None
    return _replace(tokens, root, f"{DO_SUPPORT[verb.tag]} not {verb.lemma}"), f"+{DO_SUPPORT[verb.tag]} not"


def padded(text: str, tokens: Sequence[Token], rng: random.Random) -> tuple[str, str]:
    """The sentence after a meaning-neutral opening clause."""
    opening = rng.choice(PADDING)
    first = tokens[0] if tokens else None
    # Only a name keeps its capital ("At least five" is an entity, not a name).
    keep_capital = first is not None and (first.pos == "PROPN" or first.text == "I")
    body = text if keep_capital else text[:1].lower() + text[1:]
    return opening + body, opening.strip()


def build_probes(parsed: Iterable[ParsedPair], kinds: Sequence[ProbeKind], seed: int) -> list[Probe]:
    """Every probe of ``kinds`` for each parsed pair (with the originals and controls they need)."""
    wanted = set(kinds)
    probes: list[Probe] = []
    for item in parsed:
        probes.extend(_group_probes(item, wanted, seed))
    return probes


def _group_probes(item: ParsedPair, wanted: set[ProbeKind], seed: int) -> list[Probe]:
    pair = item.pair
    group = pair.key
    label = pair.label
    made: list[Probe] = []

    def add(
        kind: ProbeKind, source: str, hypothesis: str, expected: bool | None, detail: str, swaps: int | None = None
    ) -> None:
        made.append(Probe(group, kind, source, hypothesis, expected, swaps, detail))

    if ProbeKind.MULTI_SWAP in wanted and label is not False:
        for count, (text, detail) in enumerate(
            multi_swaps(item.hypothesis_tokens, group_random(seed, group, "multi_swap")), start=1
        ):
            add(ProbeKind.MULTI_SWAP, pair.source, text, False, detail, count)
    single: list[tuple[ProbeKind, Callable[[], tuple[str, str] | None]]] = [
        (ProbeKind.PAWS_SWAP, lambda: paws_swap(item.source_tokens, group_random(seed, group, "paws_swap"))),
        (ProbeKind.NUMBER, lambda: changed_number(item.source_tokens, group_random(seed, group, "number"))),
        (ProbeKind.DATE, lambda: changed_date(item.source_tokens, group_random(seed, group, "date"))),
        (ProbeKind.NEGATION, lambda: changed_negation(item.source_tokens)),
    ]
    for kind, make in single:
        if kind in wanted:
            result = make()
            if result is not None and result[0] != pair.source:
                add(kind, pair.source, result[0], False, result[1])
    if any(probe.kind in AGAINST_CONTROL for probe in made):
        add(ProbeKind.CONTROL, pair.source, pair.source, True, "identity")
        for detail, text in (
            ("coordination", (coordination_swap(item.source_tokens) or ("", ""))[0]),
            ("punctuation", without_punctuation(item.source_tokens) or ""),
            ("case", pair.source.lower()),
        ):
            if text and text != pair.source:
                add(ProbeKind.CONTROL, pair.source, text, True, detail)
    if ProbeKind.REVERSED in wanted:
        add(ProbeKind.REVERSED, pair.hypothesis, pair.source, label, "reversed")
    if ProbeKind.PADDED in wanted and item.hypothesis_tokens:
        text, detail = padded(pair.hypothesis, item.hypothesis_tokens, group_random(seed, group, "padded"))
        add(ProbeKind.PADDED, pair.source, text, label, detail)
    if any(probe.kind in (ProbeKind.MULTI_SWAP, ProbeKind.REVERSED, ProbeKind.PADDED) for probe in made):
        made.insert(0, Probe(group, ProbeKind.ORIGINAL, pair.source, pair.hypothesis, label, 0, "original"))
    return made
