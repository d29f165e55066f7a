"""Word differences between two sentences, for the yellow highlights of the campaign page.

Pure Python (no Django import). Each sentence is cut into segments that, joined, give back the
original text exactly (whitespace and punctuation included); a segment is ``changed`` when it
holds words that have no counterpart in the other sentence.

- Word level: the unit is a word, never a character.
- Punctuation-aware: punctuation is never a word, so "cat." matches "cat" and a comma is not
  highlighted on its own.
- Case-insensitive and Unicode-normalised matching (NFKC + casefold, typographic apostrophes
  read as "'"), so "Café" matches "cafe\u0301" and "don't" matches "don\u2019t".
- Alignment by a longest common subsequence of the words: moved words show as differences,
  so "flights from New York to Florida" against "flights from Florida to New York"
  highlights "to Florida" in one and "Florida to" in the other.

The segments carry plain text; the template escapes it (a sentence with ``<script>`` or ``&``
shows as text).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import regex

# A word: runs of letters, digits and combining marks (so "cafe" + U+0301 and Devanagari or
# Thai words stay whole; the standard ``re`` has no \p{M}), joined by inner apostrophes or
# hyphens ("don't", "well-known"), or a number with inner separators ("500.22", "1,000").
# Anything else (spaces, punctuation, symbols) lies between words and is never highlighted
# by itself.
# Inner joiners: ' and its typographic forms U+2019, U+2018, U+02BC; - and U+2010.
_WORD = regex.compile(r"\d+(?:[.,]\d+)+|[\w\p{M}]+(?:['\u2019\u2018\u02bc\-\u2010][\w\p{M}]+)*")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2010": "-"})


@dataclass(frozen=True)
class Segment:
    """A piece of a sentence; ``changed`` pieces are highlighted."""

    text: str
    changed: bool


@dataclass(frozen=True)
class _Token:
    start: int
    end: int
    key: str


def _normalise(word: str) -> str:
    return unicodedata.normalize("NFKC", word).translate(_APOSTROPHES).casefold()


def _words(text: str) -> list[_Token]:
    return [_Token(m.start(), m.end(), _normalise(m.group())) for m in _WORD.finditer(text)]


def _changed_flags(a: list[_Token], b: list[_Token]) -> tuple[list[bool], list[bool]]:
    """Mark, in each sentence, the words outside a longest common subsequence."""
    keys_a = [token.key for token in a]
    keys_b = [token.key for token in b]
    changed_a = [True] * len(a)
    changed_b = [True] * len(b)
    # The common prefix and suffix match as they are; only the middle needs the table.
    start = 0
    while start < len(keys_a) and start < len(keys_b) and keys_a[start] == keys_b[start]:
        changed_a[start] = changed_b[start] = False
        start += 1
    end_a, end_b = len(keys_a), len(keys_b)
    while end_a > start and end_b > start and keys_a[end_a - 1] == keys_b[end_b - 1]:
        end_a -= 1
        end_b -= 1
        changed_a[end_a] = changed_b[end_b] = False
    middle_a, middle_b = keys_a[start:end_a], keys_b[start:end_b]
    for i, j in _lcs(middle_a, middle_b):
        changed_a[start + i] = changed_b[start + j] = False
    return changed_a, changed_b


def _lcs(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """Index pairs of a longest common subsequence (dynamic programming, O(len(a) * len(b))).

    Not ``difflib.SequenceMatcher``: it takes the longest contiguous block first, which is not
    an LCS ("The cat chases the dog" / "The dog chases the cat" would keep only "The cat" and
    mark "chases the dog"), and it drifts on repetitive text. Sentences are short (the
    importer caps their length), so the table stays small.
    """
    if not a or not b:
        return []
    n, m = len(a), len(b)
    # suffix[i][j]: LCS length of a[i:] and b[j:].
    suffix = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = suffix[i], suffix[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if a[i] == b[j] else max(below[j], row[j + 1])
    pairs = []
    i = j = 0
    while i < n and j < m:
        if a[i] == b[j]:  # taking an equal pair is always part of some LCS
            pairs.append((i, j))
            i += 1
            j += 1
        elif suffix[i + 1][j] >= suffix[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def _segments(text: str, tokens: list[_Token], changed: list[bool]) -> list[Segment]:
    """Cut ``text`` into alternating plain / changed segments.

    Consecutive changed words are merged with the whitespace between them ("New York" is one
    highlight, not two); punctuation between them ends the highlight.
    """
    segments: list[Segment] = []
    cursor = 0
    index = 0
    while index < len(tokens):
        if not changed[index]:
            index += 1
            continue
        start = tokens[index].start
        end = tokens[index].end
        index += 1
        while index < len(tokens) and changed[index] and text[end : tokens[index].start].isspace():
            end = tokens[index].end
            index += 1
        if start > cursor:
            segments.append(Segment(text[cursor:start], False))
        segments.append(Segment(text[start:end], True))
        cursor = end
    if cursor < len(text):
        segments.append(Segment(text[cursor:], False))
    return segments


def highlight(first: str, second: str) -> tuple[list[Segment], list[Segment]]:
    """Return the segments of ``first`` and of ``second``, their differing words marked changed."""
    words_first, words_second = _words(first), _words(second)
    changed_first, changed_second = _changed_flags(words_first, words_second)
    return _segments(first, words_first, changed_first), _segments(second, words_second, changed_second)


def changed_words(segments: list[Segment]) -> list[str]:
    """The highlighted pieces of a sentence, in order (handy for tests and exports)."""
    return [segment.text for segment in segments if segment.changed]


__all__ = ["Segment", "changed_words", "highlight"]
