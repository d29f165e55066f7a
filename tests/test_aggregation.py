"""The pair label from several judges: majority, ties, Don't know, mean ordinal."""

from annotate.aggregation import verdict
from annotate.labels import Label, is_paraphrase, ordinal


def test_binary_and_ordinal_readings_of_the_five_answers():
    assert [is_paraphrase(label) for label in Label] == [False, False, True, True, None]
    assert [ordinal(label) for label in Label] == [1, 2, 3, 4, None]


def test_single_judge():
    result = verdict(["mostly_similar"])
    assert result.majority_label is Label.MOSTLY_SIMILAR
    assert result.is_paraphrase is True
    assert result.mean_ordinal == 3
    assert not result.label_tie and not result.binary_tie


def test_majority_of_three_with_dont_know_left_out():
    result = verdict(["same_meaning", "same_meaning", "slightly_similar", "dont_know"])
    assert result.judgements == 4 and result.graded == 3
    assert result.majority_label is Label.SAME_MEANING
    assert result.is_paraphrase is True
    assert result.mean_ordinal == (4 + 4 + 2) / 3


def test_ties_have_no_label_but_keep_the_mean():
    result = verdict(["very_different", "same_meaning"])
    assert result.label_tie and result.majority_label is None
    assert result.binary_tie and result.is_paraphrase is None
    assert result.mean_ordinal == 2.5


def test_label_tie_but_clear_binary_majority():
    result = verdict(["mostly_similar", "same_meaning", "very_different"])
    assert result.label_tie and result.majority_label is None
    assert result.is_paraphrase is True and not result.binary_tie


def test_only_dont_know_or_nothing():
    for labels in (["dont_know", "dont_know"], []):
        result = verdict(labels)
        assert result.majority_label is None and result.is_paraphrase is None
        assert result.mean_ordinal is None and not result.binary_tie
