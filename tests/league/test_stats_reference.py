"""The league's hand-written statistics agree with SciPy's (see league/stats.py for
why the league does not import SciPy itself)."""

from __future__ import annotations

import random

import pytest
from scipy import special
from scipy import stats as sp
from twistarena.league.stats import (
    betainc,
    mean_ci,
    paired_test,
    sign_test,
    t_quantile,
    t_sf2,
    wilson_ci,
)

DFS = [1, 2, 3, 5, 8, 13, 30, 100, 1000]


@pytest.mark.parametrize("df", DFS)
def test_student_t_tails_and_quantiles(df: int) -> None:
    for t in (0.0, 0.1, 0.5, 1.0, 1.96, 2.5, 4.0, 10.0):
        assert t_sf2(t, df) == pytest.approx(2 * sp.t.sf(t, df), rel=1e-9, abs=1e-12)
    for p in (0.6, 0.9, 0.95, 0.975, 0.995, 0.9995):
        assert t_quantile(p, df) == pytest.approx(sp.t.ppf(p, df), rel=1e-8)


def test_incomplete_beta() -> None:
    rng = random.Random(7)
    for _ in range(300):
        a, b, x = rng.uniform(0.1, 60), rng.uniform(0.1, 60), rng.random()
        assert betainc(a, b, x) == pytest.approx(special.betainc(a, b, x), rel=1e-8, abs=1e-12)


def test_intervals_and_tests_on_samples() -> None:
    rng = random.Random(11)
    for n in (2, 3, 5, 10, 40):
        xs = [rng.gauss(3, 5) for _ in range(n)]
        ys = [x + rng.gauss(0.5, 2) for x in xs]
        low, high = mean_ci(xs, 0.95)
        ref = sp.t.interval(0.95, n - 1, loc=sp.tmean(xs), scale=sp.sem(xs))
        assert (low, high) == pytest.approx(ref, rel=1e-8)
        test = paired_test(ys, xs)
        ref_t = sp.ttest_rel(ys, xs)
        assert test.t == pytest.approx(ref_t.statistic, rel=1e-8)
        assert test.t_p == pytest.approx(ref_t.pvalue, rel=1e-7, abs=1e-12)


def test_sign_test_is_the_exact_binomial_test() -> None:
    for wins in range(0, 15):
        for losses in range(0, 15):
            if wins + losses == 0:
                continue
            ref = sp.binomtest(wins, wins + losses, 0.5).pvalue
            assert sign_test(wins, losses) == pytest.approx(ref, rel=1e-9)


def test_wilson_interval() -> None:
    for successes, n in ((0, 10), (3, 10), (5, 10), (10, 10), (7, 41)):
        ref = sp.binomtest(successes, n).proportion_ci(0.95, method="wilson")
        assert wilson_ci(successes, n) == pytest.approx((ref.low, ref.high), rel=1e-7)
