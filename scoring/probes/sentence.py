"""A parsed sentence as plain data, cut into the units a swap exchanges.

A unit is a named entity (kept whole: "New York", "March 3, 2004") or a single token. A swap
exchanges the texts of two units and leaves every position's trailing whitespace where it was,
so the sentence keeps its spacing and its length in tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# The swap tags (paper 004, section 4): verbs and nouns are not split by fine tag (VBZ/VBD,
# NN/NNP…), "to be" verbs are left out (swapping them need not change the meaning), and a named
# entity's label replaces the part of speech of its words.
NOUN, VERB, ADJECTIVE, ADVERB = "NOUN", "VERB", "ADJ", "ADV"
NEGATIONS = frozenset({"not", "n't", "never"})


@dataclass(frozen=True)
class Token:
    """One token as the parser saw it (spaCy's attributes of the same names)."""

    text: str
    whitespace: str
    tag: str
    pos: str
    dep: str
    lemma: str
    head: int
    ent_type: str = ""
    ent_iob: str = "O"


@dataclass(frozen=True)
class Unit:
    """A span of tokens that moves as one (an entity or one token)."""

    start: int
    end: int
    text: str
    whitespace: str
    swap_tag: str
    proper: bool


def render(tokens: Sequence[Token]) -> str:
    """The sentence text of ``tokens`` (each token followed by its whitespace)."""
    return "".join(token.text + token.whitespace for token in tokens).strip()


def swap_tag(token: Token) -> str:
    """The swap tag of a token outside an entity; "" for a word that is never swapped."""
    lower = token.text.lower()
    if token.tag.startswith("NN"):
        return NOUN
    if token.pos == "VERB" and token.lemma.lower() != "be":
        return VERB
    if token.tag.startswith("JJ"):
        return ADJECTIVE
    if token.tag.startswith("RB") and token.dep != "neg" and lower not in NEGATIONS and token.text.isalpha():
        return ADVERB
    return ""


def units(tokens: Sequence[Token]) -> list[Unit]:
    """The sentence cut into units: each entity one unit, every other token one unit."""
    result: list[Unit] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        end = index + 1
        if token.ent_iob == "B" and token.ent_type:
            while end < len(tokens) and tokens[end].ent_iob == "I":
                end += 1
        span = tokens[index:end]
        text = "".join(t.text + t.whitespace for t in span[:-1]) + span[-1].text
        if end - index > 1 or (token.ent_type and token.ent_iob == "B"):
            tag = f"ENT:{token.ent_type}"
            proper = True
        else:
            tag = swap_tag(token)
            proper = token.pos == "PROPN" or token.text == "I"
        result.append(Unit(index, end, text, span[-1].whitespace, tag, proper))
        index = end
    return result


def swap_groups(sentence_units: Sequence[Unit]) -> dict[str, list[int]]:
    """Unit positions by swap tag, without repeated texts, keeping the tags with two units or more."""
    groups: dict[str, list[int]] = {}
    seen: dict[str, set[str]] = {}
    for position, unit in enumerate(sentence_units):
        if not unit.swap_tag:
            continue
        key = unit.text.lower()
        if key in seen.setdefault(unit.swap_tag, set()):
            continue
        seen[unit.swap_tag].add(key)
        groups.setdefault(unit.swap_tag, []).append(position)
    return {tag: members for tag, members in groups.items() if len(members) >= 2}


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _decapitalised(text: str) -> str:
    # "NASA" or "US" keep their capitals; "The" becomes "the".
    if len(text) > 1 and text[1:2].isupper():
        return text
    return text[:1].lower() + text[1:]


def render_order(sentence_units: Sequence[Unit], order: Sequence[int]) -> str:
    """The sentence with position i holding the text of unit ``order[i]``.

    The sentence's first word keeps its capital wherever it lands: a common word that leaves
    the first position loses it, the word that arrives there gains it.
    """
    parts = []
    for position, original in enumerate(order):
        text = sentence_units[original].text
        if original != position:
            if position == 0:
                text = _capitalised(text)
            elif original == 0 and not sentence_units[0].proper:
                text = _decapitalised(text)
        parts.append(text + sentence_units[position].whitespace)
    return "".join(parts).strip()
