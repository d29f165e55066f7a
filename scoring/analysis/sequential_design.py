"""The power of the stopping rules, and the group-sequential plan's boundaries.

Two rules may stop a campaign (:mod:`scoring.analysis.sequential`): the always-valid
**confidence sequence**, read after every labelled pair, and a **group-sequential
alpha-spending plan** (Lan & DeMets 1983, with the O'Brien-Fleming-like spending function, alpha / 2 per side
spent as 2 - 2 Phi(z_{alpha/4} / sqrt(t))), which decides only at K looks fixed in advance at
labelled-pair counts n_k = round(k N / K), N its maximum size. A fixed-design power (the
planner's) is neither rule's power: this module computes each rule's own.

The model: the estimated difference after n labelled pairs is the mean of n independent
contributions with mean ``difference`` and standard deviation ``spread`` (the Hoeffding
projection of DeLong's statistic, or the influence function of Pearson r), so its sum
S_n = n x estimate, in units of ``spread``, is a Gaussian random walk with drift
theta = difference / spread per pair and unit variance per step. Each rule stops when |S_n|
leaves a boundary: the confidence sequence at ``ratio`` x sqrt(n) x its multiplier (``ratio``:
the standard error the rule computes over ``spread``; they differ when the pairs are a large
share of a finite pool), the group-sequential plan at ``ratio`` x sqrt(n_k) x c_k at its looks.

The probability that the walk has left the boundary by n is computed by the recursive
numerical integration of Armitage, McPherson & Rowe (1969): the density of S on a grid of the
continuation region, carried from look to look by convolution with the Gaussian increment and
cut at each boundary. For the group-sequential plan (a few looks) the grid spans each look's
continuation region with Simpson's rule (Jennison & Turnbull 2000, ch. 19), the same recursion
that finds the boundaries c_k from the spending function (each look spends
alpha(t_k) - alpha(t_{k-1}) under no difference). For the confidence sequence (a look at every
labelled pair) one fixed grid of step ``GRID_STEP`` and a truncated Gaussian kernel carry the
density; the tests check both against Monte-Carlo walks written in the tests.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import optimize, stats

FloatArray = NDArray[np.float64]

DEFAULT_LOOKS = 5
MAX_LOOKS = 20
TARGET_POWER = 0.8
# The confidence sequence's grid: step (in standard deviations of one pair's contribution) and the
# kernel's reach. The Gaussian kernel is smooth, so the trapezoid rule is accurate far beyond h^2.
GRID_STEP = 0.2
KERNEL_REACH = 8.0
# Simpson points across one look's continuation region (odd).
SIMPSON_POINTS = 201


def rho_squared(alpha: float, planned: int) -> float:
    """rho^2 minimising the confidence sequence's width at n = ``planned`` (Waudby-Smith et al.
    2021, Sec. 2): (-2 log alpha + log(-2 log alpha + 1)) / planned."""
    k = -2 * math.log(alpha)
    return (k + math.log(k + 1)) / planned


def multiplier(n: NDArray[np.float64] | NDArray[np.int64] | float, alpha: float, planned: int) -> FloatArray:
    """What replaces the normal quantile (1.96) in the confidence sequence after n labelled pairs:
    the half-width divided by the standard error,
    sqrt((n rho^2 + 1) / (n rho^2) * 2 log(sqrt(n rho^2 + 1) / alpha))."""
    r2 = rho_squared(alpha, planned)
    nr = np.asarray(n, dtype=np.float64) * r2
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = np.sqrt((nr + 1) / nr * 2 * np.log(np.sqrt(nr + 1) / alpha))
    return out


def obf_spending(t: FloatArray | float, alpha: float) -> FloatArray:
    """Lan-DeMets O'Brien-Fleming-like spending, symmetric two-sided: the type I error spent by
    information fraction t, alpha / 2 per side spent as 2 - 2 Phi(z_{alpha/4} / sqrt(t)) (the
    convention of the published tables, e.g. gsDesign's ``sfLDOF`` at one-sided alpha / 2): in
    all 4 - 4 Phi(z_{alpha/4} / sqrt(t)), 0 at t = 0 and alpha at t = 1."""
    z = float(stats.norm.isf(alpha / 4))
    t = np.asarray(t, dtype=np.float64)
    with np.errstate(divide="ignore"):
        out: FloatArray = np.where(t > 0, 4 * stats.norm.sf(z / np.sqrt(np.maximum(t, 1e-300))), 0.0)
    return out


def _simpson(points: int, low: float, high: float) -> tuple[FloatArray, FloatArray]:
    x = np.linspace(low, high, points)
    h = (high - low) / (points - 1)
    w = np.full(points, 2.0)
    w[1::2] = 4.0
    w[0] = w[-1] = 1.0
    return x, w * h / 3


@dataclass
class _Walk:
    """The sub-density of the walk (not yet stopped) on a grid, in standardized time units."""

    x: FloatArray | None  # None: the walk is still at its start, 0
    density: FloatArray  # values of the density at x, times the Simpson weights (mass per point)
    time: float = 0.0


def _step(walk: _Walk, time: float, drift: float, bound: float, points: int) -> tuple[_Walk, float]:
    """Carry the walk from ``walk.time`` to ``time`` (drift per unit time), cut at |S| >= bound:
    the walk after the look and the probability of stopping at it."""
    var = time - walk.time
    sd = math.sqrt(var)
    mean = drift * var
    if walk.x is None:
        starts, mass = np.zeros(1), np.ones(1)
    else:
        starts, mass = walk.x, walk.density
    crossed = float(
        mass @ (stats.norm.sf((bound - starts - mean) / sd) + stats.norm.cdf((-bound - starts - mean) / sd))
    )
    x, w = _simpson(points, -bound, bound)
    u = (x[:, None] - starts[None, :] - mean) / sd
    kernel = np.exp(-0.5 * u * u) / (sd * math.sqrt(2 * math.pi))
    return _Walk(x, (kernel @ mass) * w, time), crossed


def group_sequential_crossings(
    times: FloatArray, bounds: FloatArray, drift: float, points: int = SIMPSON_POINTS
) -> FloatArray:
    """P(the walk first leaves |S| < bounds[k] at look k), looks at ``times`` (increasing, > 0);
    ``bounds`` on the scale of S (a Z boundary c_k is c_k sqrt(times[k]))."""
    walk = _Walk(None, np.ones(1))
    out = np.zeros(len(times))
    for k, (time, bound) in enumerate(zip(times, bounds, strict=True)):
        walk, out[k] = _step(walk, float(time), drift, float(bound), points)
    return out


def spending_boundaries(fractions: FloatArray, alpha: float, points: int = SIMPSON_POINTS) -> FloatArray:
    """The two-sided Z boundaries c_k of the O'Brien-Fleming-like Lan-DeMets plan at the
    information ``fractions`` (increasing, the last 1): P(|Z_k| >= c_k first at look k | no
    difference) = alpha(t_k) - alpha(t_{k-1}), found look by look by the recursion."""
    t = np.asarray(fractions, dtype=np.float64)
    if len(t) < 1 or np.any(np.diff(t) <= 0) or t[0] <= 0 or abs(t[-1] - 1) > 1e-9:
        raise ValueError(f"information fractions must increase from above 0 to 1, got {list(t)}")
    spent = np.diff(np.concatenate([[0.0], obf_spending(t, alpha)]))
    walk = _Walk(None, np.ones(1))
    out = np.zeros(len(t))
    for k, time in enumerate(t):
        target = float(spent[k])
        current = walk

        def excess(c: float, time: float = float(time), current: _Walk = current, target: float = target) -> float:
            return _step(current, time, 0.0, c * math.sqrt(time), 3)[1] - target

        # Spending less than a boundary at 12 would (a tiny fraction): no stop possible there.
        c = math.inf if excess(12.0) > 0 else float(optimize.brentq(excess, 0.0, 12.0, xtol=1e-10))
        out[k] = c
        walk, _ = _step(current, float(time), 0.0, min(c, 12.0) * math.sqrt(time), points)
    return out


@dataclass(frozen=True)
class GroupSequentialPlan:
    """K looks at labelled-pair counts fixed in advance; the plan rejects at look k when the
    |Z| of the difference (estimate / standard error) reaches ``boundaries[k]``."""

    alpha: float
    max_pairs: int
    looks: tuple[int, ...]  # labelled pairs at each look, the last ``max_pairs``
    boundaries: tuple[float, ...]  # on |Z|


def look_counts(max_pairs: int, looks: int) -> tuple[int, ...]:
    """Equal information fractions: round(k N / K), k = 1..K."""
    if not 1 <= looks <= MAX_LOOKS:
        raise ValueError(f"looks: from 1 to {MAX_LOOKS}, got {looks}")
    if max_pairs < looks:
        raise ValueError(f"the maximum size ({max_pairs} pairs) must be at least the number of looks ({looks})")
    counts = tuple(max(1, round(k * max_pairs / looks)) for k in range(1, looks + 1))
    if len(set(counts)) != len(counts):
        raise ValueError(f"{looks} looks do not fit in {max_pairs} pairs")
    return counts


@functools.lru_cache(maxsize=256)
def _cached_boundaries(fractions: tuple[float, ...], alpha: float) -> tuple[float, ...]:
    return tuple(float(c) for c in spending_boundaries(np.array(fractions), alpha))


@functools.lru_cache(maxsize=64)
def inflation(looks: int, alpha: float, power: float = TARGET_POWER) -> float:
    """The maximum size over the fixed design's size for the same power (equal fractions): R =
    (eta / (z_{alpha/2} + z_power))^2, eta the drift of the standardized walk over the whole plan
    that gives the plan ``power``."""
    fractions = np.arange(1, looks + 1) / looks
    c = spending_boundaries(fractions, alpha)
    bounds = c * np.sqrt(fractions)

    def shortfall(eta: float) -> float:
        return float(group_sequential_crossings(fractions, bounds, eta).sum()) - power

    fixed = float(stats.norm.isf(alpha / 2) + stats.norm.isf(1 - power))
    eta = float(optimize.brentq(shortfall, fixed * 0.9, fixed * 2, xtol=1e-10))
    return (eta / fixed) ** 2


def group_sequential_plan(
    planned_pairs: int, looks: int, alpha: float, power: float = TARGET_POWER
) -> GroupSequentialPlan:
    """The plan for a campaign planned at ``planned_pairs`` labelled pairs (the fixed design's
    size): maximum ceil(planned x :func:`inflation`), ``looks`` equally spaced looks."""
    if planned_pairs < 1:
        raise ValueError(f"planned_pairs must be at least 1, got {planned_pairs}")
    max_pairs = math.ceil(planned_pairs * inflation(looks, alpha, power) - 1e-9)
    counts = look_counts(max_pairs, looks)
    boundaries = _cached_boundaries(tuple(count / max_pairs for count in counts), alpha)
    return GroupSequentialPlan(alpha, max_pairs, counts, boundaries)


def group_sequential_power(plan: GroupSequentialPlan, theta: float, ratio: float = 1.0) -> float:
    """P(the plan rejects at some look) when the walk's drift is ``theta`` per labelled pair (the
    difference over the spread of one pair's contribution) and the rule's standard error is
    ``ratio`` times the spread."""
    times = np.array(plan.looks, dtype=np.float64)
    bounds = ratio * np.array(plan.boundaries) * np.sqrt(times)
    return float(group_sequential_crossings(times, bounds, theta).sum())


def sequence_crossing_curve(
    theta: float, until: int, alpha: float, planned: int, ratio: float = 1.0, start: int = 1
) -> FloatArray:
    """P(the confidence sequence tuned at ``planned`` pairs has left 0 by n labelled pairs), for
    n = 1..``until`` (index n - 1), looking after every pair from ``start`` on (the rule's
    ``min_per_class`` wait): the walk's drift ``theta`` per pair, boundary
    ratio x sqrt(n) x multiplier(n)."""
    if until < 1:
        raise ValueError(f"until must be at least 1, got {until}")
    n = np.arange(1, until + 1, dtype=np.float64)
    bounds = ratio * np.sqrt(n) * multiplier(n, alpha, planned)
    h = GRID_STEP
    reach = math.ceil(KERNEL_REACH / h)
    offsets = np.arange(-reach, reach + 1) * h
    # The increment's density at the grid offsets, drift included, times the step (trapezoid).
    kernel = stats.norm.pdf(offsets - theta) * h
    kernel /= kernel.sum()
    first = max(1, min(start, until))
    half = (math.ceil(float(bounds[first - 1 :].max()) / h)) + 1
    x = np.arange(-half, half + 1) * h
    # Before the first look the walk is free: S_{first} ~ N(theta first, first).
    mass = stats.norm.pdf((x - theta * first) / math.sqrt(first)) / math.sqrt(first) * h
    mass /= mass.sum()
    crossed = np.zeros(until)
    alive = 1.0
    for step in range(first, until + 1):
        if step > first:
            mass = np.convolve(mass, kernel, mode="same")
        out = np.abs(x) >= bounds[step - 1]
        alive = float(mass[~out].sum())
        mass = np.where(out, 0.0, mass)
        crossed[step - 1] = 1.0 - alive
    return crossed


def smallest_size(power_at: Callable[[int], float], low: int, limit: int, target: float = TARGET_POWER) -> int | None:
    """The smallest n from ``low`` to ``limit`` with power_at(n) >= target, assuming power grows
    with n: doubling from ``low`` to bracket it, then steps guessed by interpolating the normal
    quantile of the power linearly in sqrt(n) (nearly linear for these tests: few evaluations),
    each checked with its neighbour, bisection when a guess does not finish;
    None when even ``limit`` falls short."""
    seen: dict[int, float] = {}

    def power(n: int) -> float:
        if n not in seen:
            seen[n] = power_at(n)
        return seen[n]

    if power(low) >= target:
        return low
    high = low
    while True:
        low, high = high, min(2 * high, limit)
        if power(high) >= target:
            break
        if high >= limit:
            return None
    goal = float(stats.norm.ppf(target))
    for attempt in range(40):
        if high - low <= 1:
            return high
        p_low, p_high = (float(stats.norm.ppf(min(max(power(n), 1e-12), 1 - 1e-12))) for n in (low, high))
        guess = (low + high) // 2
        if attempt < 4 and p_high > p_low:
            root = math.sqrt(low) + (goal - p_low) * (math.sqrt(high) - math.sqrt(low)) / (p_high - p_low)
            guess = round(root**2)
        guess = min(max(guess, low + 1), high - 1)
        if power(guess) >= target:
            high = guess
            if guess - 1 > low and power(guess - 1) < target:
                low = guess - 1
        else:
            low = guess
            if guess + 1 < high and power(guess + 1) >= target:
                high = guess + 1
    return high
