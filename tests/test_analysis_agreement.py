"""Agreement coefficients on published worked examples and hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.analysis.agreement import (
    NOT_MEASURABLE,
    category_counts,
    cohen_kappa,
    first_two,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
    leave_one_out_agreement,
)

# Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed., p. 120 (irrCAC's cac.raw4raters):
# 4 raters, 12 units, 5 categories, gaps. Published: Fleiss' kappa 0.76117 (p_a 0.81818,
# p_e 0.23872) and Gwet's AC1 0.77544 (p_e 0.19032).
RAW_4_RATERS = [
    [1, 1, None, 1],
    [2, 2, 3, 2],
    [3, 3, 3, 3],
    [3, 3, 3, 3],
    [2, 2, 2, 2],
    [1, 2, 3, 4],
    [4, 4, 4, 4],
    [1, 1, 2, 1],
    [2, 2, 2, 2],
    [None, 5, 5, 5],
    [None, None, 1, 1],
    [None, None, 3, None],
]


def _counts_from_raw(raw: list[list[int | None]], categories: int) -> np.ndarray:
    units, values = [], []
    for unit, ratings in enumerate(raw):
        for rating in ratings:
            if rating is not None:
                units.append(unit)
                values.append(rating - 1)
    return category_counts(np.array(units), np.array(values), len(raw), categories)


def test_fleiss_kappa_gwet_handbook_example_with_gaps():
    result = fleiss_kappa(_counts_from_raw(RAW_4_RATERS, 5))
    assert result.value == pytest.approx(0.76117, abs=5e-6)
    assert result.observed == pytest.approx(0.81818, abs=5e-6)  # 9 / 11 units with 2+ ratings
    assert result.chance == pytest.approx(0.23872, abs=5e-6)
    assert result.units == 11  # unit 12 has a single rating


def test_gwet_ac1_gwet_handbook_example_with_gaps():
    result = gwet_ac1(_counts_from_raw(RAW_4_RATERS, 5))
    assert result.value == pytest.approx(0.77544, abs=5e-6)
    assert result.chance == pytest.approx(0.19032, abs=5e-6)


def test_fleiss_kappa_wikipedia_example():
    # Wikipedia "Fleiss' kappa" worked example: 10 subjects, 14 raters, 5 categories.
    # P-bar = 0.378, P-bar_e = 0.213, kappa = 0.210.
    counts = np.array(
        [
            [0, 0, 0, 0, 14],
            [0, 2, 6, 4, 2],
            [0, 0, 3, 5, 6],
            [0, 3, 9, 2, 0],
            [2, 2, 8, 1, 1],
            [7, 7, 0, 0, 0],
            [3, 2, 6, 3, 0],
            [2, 5, 3, 2, 2],
            [6, 5, 2, 1, 0],
            [0, 2, 2, 3, 7],
        ]
    )
    result = fleiss_kappa(counts)
    assert result.observed == pytest.approx(0.378, abs=5e-4)
    assert result.chance == pytest.approx(0.213, abs=5e-4)
    assert result.value == pytest.approx(0.210, abs=5e-4)


# Gwet (2014) / irrCAC cont3x3abstractors: two abstractors classify 100 pregnancies.
# Published: Cohen's kappa 0.7964094, Scott's pi 0.7962397 (= Fleiss with two raters),
# Gwet's AC1 0.8493305, percent agreement 0.89.
ABSTRACTORS = np.array([[13, 0, 0], [0, 20, 7], [0, 4, 56]])


def _two_rater_sequences() -> tuple[np.ndarray, np.ndarray]:
    first, second = [], []
    for row in range(3):
        for column in range(3):
            first += [row] * int(ABSTRACTORS[row, column])
            second += [column] * int(ABSTRACTORS[row, column])
    return np.array(first), np.array(second)


def test_two_raters_published_values():
    first, second = _two_rater_sequences()
    units = np.repeat(np.arange(100), 2)
    counts = category_counts(units, np.column_stack([first, second]).ravel(), 100, 3)
    assert gwet_ac1(counts).value == pytest.approx(0.8493305, abs=1e-7)
    assert gwet_ac1(counts).observed == pytest.approx(0.89)
    assert fleiss_kappa(counts).value == pytest.approx(0.7962397, abs=1e-7)
    # Cohen's kappa (scikit-learn) on the same data, binary codes reused as categories.
    from sklearn.metrics import cohen_kappa_score

    assert cohen_kappa_score(first, second) == pytest.approx(0.7964094, abs=1e-7)


def test_cohen_kappa_binary_hand_case():
    # A: 1 1 0 0 1 ; B: 1 0 0 0 1. Observed 4/5 = .8. Marginals A: 3/5 yes, B: 2/5 yes;
    # chance = .6*.4 + .4*.6 = .48; kappa = (.8 - .48) / (1 - .48) = .32 / .52 = 0.615384...
    result = cohen_kappa(np.array([1, 1, 0, 0, 1]), np.array([1, 0, 0, 0, 1]))
    assert result.value == pytest.approx(0.32 / 0.52)
    assert result.observed == pytest.approx(0.8)
    assert result.chance == pytest.approx(0.48)
    assert result.units == 5


def test_krippendorff_ordinal_hand_case():
    # Units (values): (1,1), (1,3), (3,3), (2,2). Value totals n1=3, n2=2, n3=3, n=8.
    # Ordinal distances: d(1,2) = (n1+n2 - (n1+n2)/2)^2 = 2.5^2 = 6.25; d(2,3) = 6.25;
    # d(1,3) = (n1+n2+n3 - (n1+n3)/2)^2 = 5^2 = 25. Observed coincidences off the diagonal:
    # o13 = o31 = 1 -> sum o*d = 50. Expected: sum n_c n_k d = 2*(3*2*6.25 + 3*3*25 + 2*3*6.25) = 600.
    # alpha = 1 - (n - 1) * 50 / 600 = 1 - 350/600 = 5/12. Nominal would give 1 - 7*2/42 = 2/3.
    counts = np.array([[2, 0, 0, 0], [1, 0, 1, 0], [0, 0, 2, 0], [0, 2, 0, 0]])
    assert krippendorff_alpha(counts, [1, 2, 3, 4]).value == pytest.approx(5 / 12)
    assert krippendorff_alpha(counts, [1, 2, 3, 4], level="nominal").value == pytest.approx(2 / 3)


def test_krippendorff_package_documented_example():
    # The krippendorff package's own example (Krippendorff's reliability data): nominal 0.691358.
    value_counts = np.array(
        [
            [1, 0, 0, 0],
            [0, 0, 0, 0],
            [0, 2, 0, 0],
            [2, 0, 0, 0],
            [0, 0, 2, 0],
            [0, 0, 2, 1],
            [0, 0, 0, 3],
            [1, 0, 1, 0],
            [0, 2, 0, 0],
            [2, 0, 0, 0],
            [2, 0, 0, 0],
            [0, 0, 2, 0],
            [0, 0, 2, 0],
            [0, 0, 0, 0],
            [0, 0, 1, 1],
        ]
    )
    alpha = krippendorff_alpha(value_counts, [0, 1, 2, 3], level="nominal")
    assert alpha.value == pytest.approx(0.691358, abs=1e-6)


def test_one_judge_per_pair_is_not_measurable():
    counts = category_counts(np.array([0, 1, 2]), np.array([0, 1, 1]), 3, 2)
    for result in (fleiss_kappa(counts), gwet_ac1(counts), krippendorff_alpha(counts, [0, 1])):
        assert result.value is None
        assert result.reason == NOT_MEASURABLE
    assert cohen_kappa(np.array([], dtype=int), np.array([], dtype=int)).value is None


def test_everyone_in_one_category():
    # Perfect agreement but no variation: kappa and alpha are 0/0, AC1 is defined (= 1).
    counts = np.array([[3, 0], [2, 0]])
    assert fleiss_kappa(counts).value is None and "same category" in fleiss_kappa(counts).reason
    assert krippendorff_alpha(counts, [0, 1]).value is None
    assert gwet_ac1(counts).value == pytest.approx(1.0)
    assert cohen_kappa(np.array([1, 1]), np.array([1, 1])).value is None


def test_missing_ratings_are_dropped():
    # Category -1 (Don't know) is missing: unit 0 keeps two ratings.
    counts = category_counts(np.array([0, 0, 0, 1]), np.array([1, 1, -1, 0]), 2, 2)
    assert counts.tolist() == [[0, 2], [1, 0]]


def test_first_two_orders_by_answer_time():
    # Unit 0: answers at t=5 (label 1) and t=2 (label 0) -> (0, 1). Unit 1 has three answers
    # (excluded); unit 2 has one answer plus a Don't know (-1) (excluded).
    unit = np.array([0, 0, 1, 1, 1, 2, 2])
    label = np.array([1, 0, 1, 1, 0, 1, -1])
    when = np.array([5.0, 2.0, 1.0, 2.0, 3.0, 1.0, 2.0])
    first, second = first_two(unit, label, when)
    assert first.tolist() == [0] and second.tolist() == [1]


def test_leave_one_out_agreement_hand_case():
    # Pair 0: yes, yes, no. The two "yes" judges each see others = (1 yes, 1 no): a tie, not
    # compared. The "no" judge sees 2 yes: compared, disagrees.
    # Pair 1: yes, yes. Each sees 1 yes: compared, agrees.
    # Pair 2: no, Don't know. The "no" judge sees nobody with a label: not compared; the
    # Don't know judgement is never compared.
    unit = np.array([0, 0, 0, 1, 1, 2, 2])
    binary = np.array([1, 1, 0, 1, 1, 0, -1], dtype=np.int8)
    result = leave_one_out_agreement(unit, binary, 3)
    assert result.compared.tolist() == [False, False, True, True, True, False, False]
    assert result.agrees.tolist() == [False, False, False, True, True, False, False]
