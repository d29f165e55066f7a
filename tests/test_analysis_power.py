"""Power of every paired test at the sample sizes of the study.

A metric that is a noisy copy of the human scale must be separated from one with half the
signal, on every statistic, at 2,000 pairs (a random MRPC sample) and 5,801 pairs (all
of MRPC); two identical metrics must never be separated. The human scale is what a campaign
produces: the mean of three judges' 4-point answers around a latent meaning similarity, and the
binary label their majority.
"""

from __future__ import annotations

import numpy as np
import pytest

from scoring.analysis import paired as P


def campaign(n: int, seed: int) -> tuple[P.PairedInput, dict[str, int]]:
    rng = np.random.default_rng(seed)
    latent = rng.normal(0, 1, n)
    answers = np.clip(np.round(2.5 + latent[:, None] + rng.normal(0, 0.7, (n, 3))), 1, 4)
    graded = answers.mean(axis=1)
    binary = ((answers >= 3).sum(axis=1) >= 2).astype(np.int8)
    human = (graded - graded.mean()) / graded.std()
    copy = human + rng.normal(0, 1, n)  # a noisy copy of the human scale
    half = 0.5 * human + rng.normal(0, 1, n)  # half the signal, the same noise
    scores = np.vstack([copy, half, copy.copy()])  # the third: identical to the first
    # Decisions at a threshold fixed in advance (the natural one) and one chosen elsewhere (CV):
    # both at the median of each metric's scores here.
    correct = np.vstack([(row >= np.median(row)) == (binary == 1) for row in scores]).astype(float)
    data = P.PairedInput([1, 2, 3], scores, binary, graded, correct, correct.copy())
    return data, {"copy": 1, "half": 2, "twin": 3}


@pytest.mark.parametrize(("n", "seed"), [(2000, 1), (5801, 2)])
def test_a_noisy_copy_beats_half_the_signal_on_every_statistic_and_a_twin_never_differs(n, seed):
    data, ids = campaign(n, seed)
    tests = P.compare(data, P.PairedOptions(resamples=200, seed=7))
    by = {(test.statistic, test.metric_a, test.metric_b): test for test in tests}
    for statistic in P.Statistic:
        better = by[(statistic, ids["copy"], ids["half"])]
        assert better.reason is None and better.difference is not None and better.difference > 0, statistic
        # The primary test (DeLong, exact McNemar, Williams, permutation, jackknife) after Holm; the
        # Spearman permutation sits at its floor, alpha / 5 (its resamples are chosen for that).
        assert better.p_holm is not None and better.p_holm <= 0.01, (statistic, better)
        twin = by[(statistic, ids["copy"], ids["twin"])]
        assert twin.difference == 0 and twin.p_value == 1.0 and twin.p_holm == 1.0, (statistic, twin)
