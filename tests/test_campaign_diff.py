"""The yellow word-difference highlighter (annotate.diff)."""

from __future__ import annotations

import random

import pytest
from django.template.loader import render_to_string

from annotate.diff import Segment, changed_words, highlight
from annotate.guidelines import highlighted_examples


def joined(segments: list[Segment]) -> str:
    return "".join(segment.text for segment in segments)


def both_changed(first: str, second: str) -> tuple[list[str], list[str]]:
    a, b = highlight(first, second)
    assert joined(a) == first
    assert joined(b) == second
    return changed_words(a), changed_words(b)


def test_identical_sentences_have_no_highlight() -> None:
    assert both_changed("The cat drinks water.", "The cat drinks water.") == ([], [])


def test_reordered_words_are_differences_in_both_sentences() -> None:
    # The PAWS trap: same words, different meaning. A bag-of-words diff would show nothing.
    first, second = both_changed(
        "Are there any flights from New York to Florida tomorrow?",
        "Are there any flights from Florida to New York tomorrow?",
    )
    # Changed on purpose (was "to Florida" / "Florida to", which left the moved "New York"
    # plain): the two places swapped around "to", so both are yellow in both sentences.
    assert first == ["New York", "Florida"]
    assert second == ["Florida", "New York"]


def test_swapped_phrases_are_marked_in_both_sentences_and_the_anchor_stays_plain() -> None:
    first, second = both_changed(
        "The museum is open on weekdays but closed at weekends.",
        "The museum is open at weekends but closed on weekdays.",
    )
    assert first == ["on weekdays", "at weekends"]
    assert second == ["at weekends", "on weekdays"]
    # Same shape from the demo campaign: "Heavy rain" and "the outdoor concert" trade places
    # around "the organisers", which keeps its place between them.
    first, second = both_changed(
        "Heavy rain forced the organisers to cancel the outdoor concert.",
        "The outdoor concert was called off by the organisers because of heavy rain.",
    )
    assert first == ["Heavy rain forced", "to cancel the outdoor concert"]
    assert second == ["The outdoor concert was called off by", "because of heavy rain"]


def test_swapped_subject_and_object() -> None:
    first, second = both_changed("The cat chases the dog.", "The dog chases the cat.")
    # "chases the" keeps its place; the swapped nouns are marked in both.
    assert first == ["cat", "dog"]
    assert second == ["dog", "cat"]


def test_two_words_that_trade_places_are_both_marked() -> None:
    # Neither "red" nor "big" stayed while the other moved: both are yellow, never one half.
    assert both_changed("The red big car.", "The big red car.") == (["red big"], ["big red"])
    assert both_changed("Anna lent Paul 200 euros.", "Paul lent Anna 200 euros.") == (
        ["Anna", "Paul"],
        ["Paul", "Anna"],
    )


def test_a_phrase_that_moved_is_marked_in_both_sentences_and_the_rest_stays_plain() -> None:
    first, second = both_changed("He went to the store to buy milk", "To buy milk, he went to the shop")
    assert first == ["store to buy milk"]
    assert second == ["To buy milk", "shop"]
    # A short phrase moved across a long one: the long one stays plain.
    first, second = both_changed("the old man in the grey coat sat down", "sat down the old man in the grey coat")
    assert (first, second) == (["sat down"], ["sat down"])


@pytest.mark.parametrize(
    ("number", "first", "second"),
    [
        (1, ["drinks water"], ["eats kibble"]),
        (2, ["milk"], ["water"]),
        (3, ["drinks water"], ["quenches its thirst"]),
        # Subject and object trade places around "the" and the verb turns passive.
        (4, ["cat eats", "mouse"], ["mouse is eaten by", "cat"]),
        # Every word of the second is in the first: only what it lacks is marked.
        (5, ["The", "drinks"], []),
    ],
)
def test_the_guideline_cat_examples(number: int, first: list[str], second: list[str]) -> None:
    example = highlighted_examples()[number - 1]
    assert joined(example.first) == example.example.first
    assert joined(example.second) == example.example.second
    assert (changed_words(example.first), changed_words(example.second)) == (first, second)


def test_repeated_words_only_the_extra_occurrence_is_marked() -> None:
    first, second = both_changed("the cat saw the cat", "the cat saw the")
    assert first == ["cat"]
    assert second == []
    a, _ = highlight("the cat saw the cat", "the cat saw the")
    # It is the last "cat" that has no counterpart, not the first.
    assert a[-1] == Segment("cat", True)


def test_punctuation_attached_to_a_word_does_not_make_it_different() -> None:
    assert both_changed("The cat.", "the cat") == ([], [])
    assert both_changed("Yes, the cat!", "yes the cat") == ([], [])
    # ...and punctuation is never highlighted by itself.
    first, second = both_changed("The cat drinks water.", "The cat quenches its thirst.")
    assert first == ["drinks water"]
    assert second == ["quenches its thirst"]


def test_matching_ignores_case() -> None:
    assert both_changed("NEW YORK is big", "New York is big") == ([], [])


def test_unicode_words_and_normalisation() -> None:
    # Composed and decomposed accents, typographic apostrophes: the same words.
    assert both_changed("Le café n\u2019est pas froid", "le cafe\u0301 n'est pas froid") == ([], [])
    first, second = both_changed("Der Hund läuft schnell 🐕", "Der Hund geht schnell 🐕")
    assert (first, second) == (["läuft"], ["geht"])
    first, second = both_changed("मैं घर जा रहा हूँ", "मैं स्कूल जा रहा हूँ")
    assert (first, second) == (["घर"], ["स्कूल"])
    assert both_changed("東京 大阪", "東京 京都") == (["大阪"], ["京都"])


def test_numbers_with_separators_are_single_words() -> None:
    first, second = both_changed("Volume was 500.22 million.", "Volume was 611.45 million.")
    assert (first, second) == (["500.22"], ["611.45"])
    assert both_changed("It costs 3.5 euros", "It costs 35 euros") == (["3.5"], ["35"])
    assert both_changed("at 7:15 and 9:40", "at 9:40 and 7:15") == (["7:15", "9:40"], ["9:40", "7:15"])


def test_abbreviations_and_initials_are_single_words() -> None:
    assert both_changed("We meet at 5 p.m. today", "We meet at 6 p.m. today") == (["5"], ["6"])
    # A differing abbreviation is highlighted whole, dots included.
    assert both_changed("We meet at 5 p.m. today", "We meet at 5 a.m. today") == (["p.m."], ["a.m."])
    assert both_changed("The U.S. team won", "The U.K. team won") == (["U.S."], ["U.K."])
    # Dots are punctuation: "U.S." is the same word as "US".
    assert both_changed("The U.S. team won", "The US team won") == ([], [])
    assert both_changed("a book by J.R.R. Tolkien", "a book by J.K. Rowling") == (
        ["J.R.R. Tolkien"],
        ["J.K. Rowling"],
    )
    # A sentence-final abbreviation keeps its dot; a word joined to the next by a dot does not
    # become an abbreviation.
    assert both_changed("She lives in the U.S.", "She lives in the U.K.") == (["U.S."], ["U.K."])
    assert both_changed("see data.mean now", "see data.median now") == (["mean"], ["median"])


def test_whitespace_and_text_are_preserved_exactly() -> None:
    first = "  Two  spaces\tand a tab \n here. "
    second = "Two spaces and a newline here"
    a, b = highlight(first, second)
    assert joined(a) == first
    assert joined(b) == second
    assert changed_words(a) == ["tab"]
    assert changed_words(b) == ["newline"]


@pytest.mark.parametrize(("first", "second"), [("", ""), ("", "Only here."), ("...", "!!!")])
def test_empty_or_wordless_sentences(first: str, second: str) -> None:
    a, b = highlight(first, second)
    assert joined(a) == first and joined(b) == second
    assert changed_words(a) == []


def test_html_in_a_sentence_is_rendered_as_text() -> None:
    first = 'Tom & Jerry <script>alert("x")</script> <b>bold</b>'
    second = "Tom & Jerry bold"
    a, _ = highlight(first, second)
    html = render_to_string("annotate/_sentence.html", {"segments": a})
    assert "<script>" not in html and "<b>" not in html
    assert "Tom &amp; Jerry" in html
    assert '<mark class="diff">alert</mark>' in html
    visible = html.replace('<mark class="diff">', "").replace("</mark>", "")
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in visible


def test_a_repeated_word_pairs_with_its_counterpart_in_the_same_place() -> None:
    # "her" is twice in the second sentence: it pairs with the one after "to", where it is in
    # the first, so it stays plain; the other "Her" is the added one.
    first, second = both_changed(
        "He gave the book to her yesterday.", "Her brother says he gave the book to, er, her today."
    )
    assert first == ["yesterday"]
    assert second == ["Her brother says", "er", "today"]


def test_plain_words_are_the_same_in_both_sentences_in_the_same_order() -> None:
    # Whatever the pair, what stays plain is a common subsequence: the same words, in the same
    # order, in both sentences; a word missing from the other sentence is always yellow.
    rng = random.Random(7)
    vocabulary = ["the", "cat", "dog", "saw", "a", "big", "red", "car", "and", "then", "left"]
    for _ in range(300):
        first = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 12)))
        second = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 12)))
        a, b = highlight(first, second)
        assert joined(a) == first and joined(b) == second
        plain_a = " ".join(segment.text for segment in a if not segment.changed).split()
        plain_b = " ".join(segment.text for segment in b if not segment.changed).split()
        assert plain_a == plain_b, (first, second)
        assert not (set(first.split()) - set(second.split())) & set(plain_a)


def test_long_sentences_with_frequent_words_still_align() -> None:
    # Repetitive text: a greedy longest-block matcher (difflib) drifts here; an LCS does not.
    words = ["the", "cat"] * 120
    first = " ".join(words)
    second = " ".join([*words[:100], "dog", *words[100:]])
    assert both_changed(first, second) == ([], ["dog"])
