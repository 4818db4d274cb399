"""Small-sample statistics: Student t intervals and tests, the exact sign test and
Wilson intervals. Tournaments have tens of games per entrant, where normal
approximations are too optimistic.

Written out here rather than taken from ``scipy.stats``, on a measurement:
importing ``scipy.stats`` took 4.7 to 6.0 s on the project's 2-core machine
(``python -X importtime -c "import scipy.stats"``; ``scipy.special`` alone 1.1
to 2.7 s) and SciPy with NumPy adds over 200 MB to an install. The server
computes standings in its event loop, where a first call paying that import
would stall every match of the node for seconds, and every ``twistarena``
command would start that much slower. ``tests/league/test_stats_reference.py``
checks these functions against SciPy (a development dependency) instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


def mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def stdev(xs: Sequence[float]) -> float:
    """Sample standard deviation (n - 1); 0 for fewer than two values."""
    n = len(xs)
    if n < 2:
        return 0.0
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-14:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_sf2(t: float, df: float) -> float:
    """Two-sided tail probability P(|T| >= |t|) of Student's t with ``df`` degrees."""
    if df <= 0:
        return 1.0
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile (p > 0.5) of Student's t, by bisection on the tail."""
    if not 0.5 < p < 1.0:
        raise ValueError("p must be in (0.5, 1)")
    target = 2.0 * (1.0 - p)
    lo, hi = 0.0, 1.0
    while t_sf2(hi, df) > target:
        hi *= 2.0
    for _ in range(100):
        mid = (lo + hi) / 2.0
        if t_sf2(mid, df) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def mean_ci(xs: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """Student t confidence interval of the mean (a point for fewer than two values)."""
    m = mean(xs)
    n = len(xs)
    if n < 2:
        return (m, m)
    half = t_quantile(0.5 + level / 2.0, n - 1) * stdev(xs) / math.sqrt(n)
    return (m - half, m + half)


def wilson_ci(successes: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion; shared wins make ``successes`` fractional."""
    if n <= 0:
        return (0.0, 1.0)
    z = _normal_quantile(0.5 + level / 2.0)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2.0 * n)) / denom
    half = z * math.sqrt(max(p * (1.0 - p) / n + z * z / (4.0 * n * n), 0.0)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def _normal_quantile(p: float) -> float:
    lo, hi = -10.0, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2.0
        if 0.5 * math.erfc(-mid / math.sqrt(2.0)) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


@dataclass(frozen=True, slots=True)
class PairedTest:
    """A paired comparison of A and B over blocks (duplicate deals): A - B per block."""

    n: int
    mean_diff: float
    ci_low: float
    ci_high: float
    t: float
    t_p: float
    wins: int
    losses: int
    ties: int
    sign_p: float


def paired_test(a: Sequence[float], b: Sequence[float], level: float = 0.95) -> PairedTest:
    """Paired t-test and exact two-sided sign test of per-block differences ``a - b``."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    n = len(diffs)
    m = mean(diffs)
    sd = stdev(diffs)
    if n >= 2 and sd > 0:
        t = m / (sd / math.sqrt(n))
        p = t_sf2(t, n - 1)
    elif n >= 2 and m != 0:
        t, p = math.copysign(math.inf, m), 0.0
    else:
        t, p = 0.0, 1.0
    low, high = mean_ci(diffs, level)
    wins = sum(1 for d in diffs if d > 0)
    losses = sum(1 for d in diffs if d < 0)
    return PairedTest(n, m, low, high, t, p, wins, losses, n - wins - losses,
                      sign_test(wins, losses))


def sign_test(wins: int, losses: int) -> float:
    """Exact two-sided binomial p-value of ``wins`` against ``losses`` (ties dropped)."""
    n = wins + losses
    if n == 0:
        return 1.0
    k = min(wins, losses)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0 ** n
    return min(1.0, 2.0 * tail)
