"""The yellow word-difference highlighter (annotate.diff)."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string

from annotate.diff import Segment, changed_words, highlight


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
    first, second = both_changed("flights from New York to Florida", "flights from Florida to New York")
    assert first == ["to Florida"]
    assert second == ["Florida to"]


def test_swapped_subject_and_object() -> None:
    first, second = both_changed("The cat chases the dog.", "The dog chases the cat.")
    # A longest common subsequence keeps "The … chases the …" and marks the swapped nouns.
    assert first == ["cat", "dog"]
    assert second == ["dog", "cat"]


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


def test_long_sentences_with_frequent_words_still_align() -> None:
    # Repetitive text: a greedy longest-block matcher (difflib) drifts here; an LCS does not.
    words = ["the", "cat"] * 120
    first = " ".join(words)
    second = " ".join([*words[:100], "dog", *words[100:]])
    assert both_changed(first, second) == ([], ["dog"])
