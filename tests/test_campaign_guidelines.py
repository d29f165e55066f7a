"""The guidelines' texts are data (annotate/guideline_texts/<language>.json): the paper's English
verbatim, the French with the same examples and answers, and nothing else needed to add a language."""

from __future__ import annotations

import json

from annotate import guidelines
from annotate.labels import Label


def test_the_english_text_is_the_papers_appendix_a2() -> None:
    assert guidelines.introduction("en") == (
        "You are going to see two sentences. You are asked to estimate the extent to which the two "
        "sentences share a common meaning. To help you, the differences between the sentences are "
        "highlighted in yellow of which several examples are shown below."
    )
    assert [(e.first, e.second) for e in guidelines.EXAMPLES] == [
        ("The cat drinks water.", "The cat eats kibble."),
        ("The cat drinks milk.", "The cat drinks water."),
        ("The cat drinks water.", "The cat quenches its thirst."),
        ("The cat eats the mouse.", "The mouse is eaten by the cat."),
        ("The cat drinks tomato soup.", "Cat tomato soup."),
    ]


def test_every_language_has_the_five_examples_with_the_papers_answers_in_order() -> None:
    assert set(guidelines.GUIDELINES) >= {"en", "fr"}
    expected = [Label.VERY_DIFFERENT, Label.SLIGHTLY_SIMILAR, Label.MOSTLY_SIMILAR, Label.SAME_MEANING, Label.DONT_KNOW]
    for language, entry in guidelines.GUIDELINES.items():
        assert entry.language == language
        assert [example.label for example in entry.examples] == expected, language
        assert all(example.explanation for example in entry.examples)
    assert guidelines.introduction("fr").startswith("Vous allez voir deux phrases.")
    # A language without a file falls back to English.
    assert guidelines.introduction("de") == guidelines.INTRODUCTION


def test_a_language_file_is_all_it_takes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    data = json.loads((guidelines.TEXTS_DIR / "en.json").read_text())
    data["language"] = "xx"
    data["introduction"] = "Zwei Sätze."
    path = tmp_path / "xx.json"
    path.write_text(json.dumps(data))
    loaded = guidelines._load(path)
    assert loaded.introduction == "Zwei Sätze." and len(loaded.examples) == 5
