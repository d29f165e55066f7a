"""Word differences between two sentences, for the yellow highlights of the campaign page.

Pure Python (no Django import). Each sentence is cut into segments that, joined, give back the
original text exactly (whitespace and punctuation included); a segment is ``changed`` when it
holds words that are yellow: words with no counterpart in the other sentence, and phrases that
moved.

- Word level: the unit is a word, never a character. Numbers with inner separators ("3.5",
  "1,000", "5:30") and dotted abbreviations or initials ("p.m.", "U.S.", "J.R.R.") are one word
  each, highlighted whole; an abbreviation matches its undotted form ("U.S." = "US" = "us":
  dots are punctuation; the clash with the pronoun "us" is accepted).
- Punctuation-aware: punctuation is never a word, so "cat." matches "cat" and a comma is not
  highlighted on its own.
- Case-insensitive and Unicode-normalised matching (NFKC + casefold, typographic apostrophes
  read as "'"), so "Café" matches "cafe\u0301" and "don't" matches "don\u2019t".

How the words are aligned (what a careful reader marks by hand):

1. The common beginning and end stay plain.
2. The rest is cut into *tiles*, common runs of words taken longest first (greedy string
   tiling), so a phrase that moved ("New York") is one tile, not two loose words.
3. The tiles that stay in place form the chain that needs the fewest moves (most tiles kept in
   the same order in both sentences); among those, the one whose words shift the least, then
   the one that keeps the most words. Every tile outside that chain is a phrase that moved: it
   is yellow in *both* sentences.
4. A tile stays plain only when every best chain keeps it. When two phrases simply trade places
   ("red big" / "big red") neither is the one that "stayed", so both are yellow in both
   sentences: half of a swap is never hidden.

So "open on weekdays but closed at weekends" / "open at weekends but closed on weekdays" marks
"on weekdays" and "at weekends" in both and leaves "but closed" plain; "flights from New York to
Florida" / "flights from Florida to New York" marks "New York" and "Florida" in both and leaves
"to" plain: two places swapped around "to", as a reader would describe it. A plain longest
common subsequence kept "New York" plain (it is two words to the one of "to") and marked
"to Florida" / "Florida to", which hides that New York moved.

Why fewest moves before most words: a reader describes a reordering by what moved, and a phrase
that moved is one move whatever its length. So when two phrases trade places around a word that
changed ("My grandmother wrote this letter" / "This letter was written by my grandmother"), both
are yellow in both sentences, though that leaves little plain: it is what happened.

The segments carry plain text; the template escapes it (a sentence with ``<script>`` or ``&``
shows as text).
"""

from __future__ import annotations

import heapq
import unicodedata
from dataclasses import dataclass

import regex

# A word, in order of preference:
# - a dotted abbreviation or initials: single letters joined by dots, with the final dot
#   ("p.m.", "U.S.", "e.g."), not followed by a letter (so "a.mean" is not one);
# - a number with inner separators ("500.22", "1,000", "5:30");
# - runs of letters, digits and combining marks (so "cafe" + U+0301 and Devanagari or Thai
#   words stay whole; the standard ``re`` has no \p{M}), joined by inner apostrophes or hyphens
#   ("don't", "well-known").
# Anything else (spaces, punctuation, symbols) lies between words and is never highlighted by
# itself. Inner joiners: ' and its typographic forms U+2019, U+2018, U+02BC; - and U+2010.
_ABBREVIATION = r"\p{L}\p{M}*(?:\.\p{L}\p{M}*)+\.?(?![\w\p{M}])"
_WORD = regex.compile(_ABBREVIATION + r"|\d+(?:[.,:]\d+)+|[\w\p{M}]+(?:['\u2019\u2018\u02bc\-\u2010][\w\p{M}]+)*")
_IS_ABBREVIATION = regex.compile(_ABBREVIATION)
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


@dataclass(frozen=True)
class _Tile:
    """A common run of ``length`` words: a[a_start:a_start+length] == b[b_start:b_start+length]."""

    a_start: int
    b_start: int
    length: int

    @property
    def offset(self) -> int:
        return self.b_start - self.a_start


def _normalise(word: str) -> str:
    key = unicodedata.normalize("NFKC", word).translate(_APOSTROPHES).casefold()
    if "." in word and _IS_ABBREVIATION.fullmatch(word):
        key = key.replace(".", "")  # "U.S." = "US": the dots are punctuation
    return key


def _words(text: str) -> list[_Token]:
    return [_Token(m.start(), m.end(), _normalise(m.group())) for m in _WORD.finditer(text)]


def _changed_flags(a: list[_Token], b: list[_Token]) -> tuple[list[bool], list[bool]]:
    """Mark, in each sentence, the words that are yellow (see the module docstring)."""
    keys_a = [token.key for token in a]
    keys_b = [token.key for token in b]
    changed_a = [True] * len(a)
    changed_b = [True] * len(b)
    # The common prefix and suffix match as they are; only the middle needs tiling.
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
    for tile in _kept_tiles(_tiles(middle_a, middle_b), len(middle_a), len(middle_b)):
        for k in range(tile.length):
            changed_a[start + tile.a_start + k] = changed_b[start + tile.b_start + k] = False
    return changed_a, changed_b


def _tiles(a: list[str], b: list[str]) -> list[_Tile]:
    """Common runs of words, longest first, no word in two tiles (greedy string tiling).

    Hand-written: difflib's ``SequenceMatcher`` also takes the longest block first, but then
    only looks for further blocks on each side of it *in order*, so it cannot see a phrase that
    moved (and it drifts on repetitive text); tiling finds blocks in any order, which is what
    step 3 needs. Equal lengths: the run nearest the diagonal first (the same relative place in
    both sentences), so a repeated word pairs with its closest counterpart. Runs are indexed by
    equal word pairs only, so the cost follows the number of shared words, not len(a) * len(b).
    """
    if not a or not b:
        return []
    n, m = len(a), len(b)
    positions: dict[str, list[int]] = {}
    for j, key in enumerate(b):
        positions.setdefault(key, []).append(j)
    run: dict[tuple[int, int], int] = {}  # (i, j) -> length of the common run from a[i], b[j]
    for i in range(n - 1, -1, -1):
        for j in positions.get(a[i], ()):
            run[i, j] = run.get((i + 1, j + 1), 0) + 1
    # Heap of candidate runs: longest, then nearest the diagonal, then leftmost.
    heap = [(-length, abs(i * m - j * n), i, j) for (i, j), length in run.items() if (i - 1, j - 1) not in run]
    heapq.heapify(heap)
    free_a, free_b = [True] * n, [True] * m
    tiles = []
    while heap:
        negative_length, _, i, j = heapq.heappop(heap)
        length = -negative_length
        # The stretches of this run whose words are still free on both sides.
        pieces = []
        k = 0
        while k < length:
            if free_a[i + k] and free_b[j + k]:
                first = k
                while k < length and free_a[i + k] and free_b[j + k]:
                    k += 1
                pieces.append((first, k - first))
            else:
                k += 1
        if pieces == [(0, length)]:
            tiles.append(_Tile(i, j, length))
            for k in range(length):
                free_a[i + k] = free_b[j + k] = False
        else:  # partly taken: its free stretches compete again at their own, shorter, length
            for first, size in pieces:
                heapq.heappush(heap, (-size, abs((i + first) * m - (j + first) * n), i + first, j + first))
    return sorted(tiles, key=lambda tile: tile.a_start)


def _kept_tiles(tiles: list[_Tile], n: int, m: int) -> list[_Tile]:
    """The tiles kept by every best in-order chain (the others moved).

    A chain is a list of tiles in the same order in both sentences. Best = most tiles (fewest
    moves), then least shift (sum of the changes of offset b - a between consecutive tiles,
    from offset 0 at the start to m - n at the end), then most words. The three criteria are
    packed into one integer so the dynamic programme over the tiles (O(tiles^2), tiles are few)
    adds plain numbers; it also counts the best chains, and a tile is kept when it lies on all
    of them.
    """
    if not tiles:
        return []
    count = len(tiles)
    words_weight = n + 1  # more than any number of words
    shift_weight = (count + 1) * (n + m) + 1  # more than any total shift
    # Plain lists and inlined arithmetic: this double loop is the hot spot on long sentences.
    a_start = [tile.a_start for tile in tiles]
    b_start = [tile.b_start for tile in tiles]
    a_end = [tile.a_start + tile.length for tile in tiles]
    b_end = [tile.b_start + tile.length for tile in tiles]
    offset = [tile.b_start - tile.a_start for tile in tiles]
    # Entering a tile: +1 tile, + its words, - the change of offset (times words_weight).
    base = [shift_weight * words_weight + tile.length for tile in tiles]
    end_offset = m - n

    # forward[u]: best chain ending with tile u (u included); backward[u]: best continuation
    # after u to the end (u excluded). Each with the number of chains that reach it.
    forward = [0] * count
    forward_ways = [0] * count
    for u in range(count):
        au, bu, ou, gain = a_start[u], b_start[u], offset[u], base[u]
        best, ways = gain - abs(ou) * words_weight, 1
        for t in range(u):
            if a_end[t] <= au and b_end[t] <= bu:
                score = forward[t] + gain - abs(ou - offset[t]) * words_weight
                if score > best:
                    best, ways = score, forward_ways[t]
                elif score == best:
                    ways += forward_ways[t]
        forward[u] = best
        forward_ways[u] = ways
    backward = [0] * count
    backward_ways = [0] * count
    for u in range(count - 1, -1, -1):
        ae, be, ou = a_end[u], b_end[u], offset[u]
        best, ways = -abs(end_offset - ou) * words_weight, 1
        for v in range(u + 1, count):
            if ae <= a_start[v] and be <= b_start[v]:
                score = base[v] - abs(offset[v] - ou) * words_weight + backward[v]
                if score > best:
                    best, ways = score, backward_ways[v]
                elif score == best:
                    ways += backward_ways[v]
        backward[u] = best
        backward_ways[u] = ways
    empty = -abs(end_offset) * words_weight
    best = max([empty, *(forward[u] + backward[u] for u in range(count))])
    # Every best chain counted once, by its first tile (or none: the empty chain).
    ways = int(empty == best) + sum(
        backward_ways[u] for u in range(count) if base[u] - abs(offset[u]) * words_weight + backward[u] == best
    )
    # A tile lies on every best chain when the best chains through it are all of them.
    return [
        tile
        for u, tile in enumerate(tiles)
        if forward[u] + backward[u] == best and forward_ways[u] * backward_ways[u] == ways
    ]


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
