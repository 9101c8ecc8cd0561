"""The deep tail (issue 29, item 5): the certified curve against an independent
high-precision reference at FPRs far below 1e-13, where FFT-composed references are noise.

Two steps of the Poisson subsampled Gaussian (sigma 0.5, q 0.5), remove direction: the null
is N(0, 1) per step, the alternative (1 - q) N(0, 1) + q N(mu, 1) with mu = 1 / sigma, and
the privacy loss of one step is L(x) = ln((1 - q) + q e^{mu x - mu^2 / 2}), increasing in x.
The Neyman-Pearson test rejecting for L(x_1) + L(x_2) >= c has

    FPR(c) = E_{x ~ N(0,1)} Q[L >= c - L(x)],   TPR(c) = E_{x ~ P} P[L >= c - L(x)],

one-dimensional integrals of normal tails, evaluated by mpmath at 30 digits. Each such
point lies on the true curve, so the certified TPR at FPR(c) must be at least TPR(c)."""

import mpmath as mp
import pytest

import fdpkit as fp
from fdpkit.accounting import account

SIGMA, Q, STEPS, DISC = 0.5, 0.5, 2, 1e-3
DIGITS = 30
#: thresholds c: FPR about 1.4e-19, 3.3e-36 and 3.0e-58
THRESHOLDS = (20, 30, 40)
#: the certified TPR may exceed the exact one by at most this factor plus the curve's
#: +inf mass (tightness; soundness is the one-sided check)
TPR_FACTOR = 2.0


def _exact_point(c: float) -> tuple[mp.mpf, mp.mpf]:
    mu, q = 1 / mp.mpf(SIGMA), mp.mpf(Q)

    def sf(z):
        return mp.erfc(z / mp.sqrt(2)) / 2

    def phi(x):
        return mp.exp(-x * x / 2) / mp.sqrt(2 * mp.pi)

    def loss(x):
        return mp.log((1 - q) + q * mp.exp(mu * x - mu**2 / 2))

    def x_of(v):  # the x with L(x) = v; -inf below L's infimum ln(1 - q)
        ev = mp.exp(v)
        return mp.ninf if ev <= 1 - q else (mp.log((ev - (1 - q)) / q) + mu**2 / 2) / mu

    def null_tail(v):
        x = x_of(v)
        return mp.mpf(1) if x == mp.ninf else sf(x)

    def alt_tail(v):
        x = x_of(v)
        return mp.mpf(1) if x == mp.ninf else (1 - q) * sf(x) + q * sf(x - mu)

    cuts = [-mp.inf, -5, 0, 5, 10, 20, mp.inf]
    fpr = mp.quad(lambda x: phi(x) * null_tail(c - loss(x)), cuts)
    tpr = mp.quad(lambda x: ((1 - q) * phi(x) + q * phi(x - mu)) * alt_tail(c - loss(x)), cuts)
    return fpr, tpr


def test_certified_curve_below_mpmath_in_the_deep_tail():
    acc = account(fp.dpsgd(SIGMA, Q, STEPS), discretization=DISC)
    inf_mass = float(acc.curve.tpr(0.0))
    with mp.workdps(DIGITS):
        for c in THRESHOLDS:
            fpr, tpr = _exact_point(c)
            assert 0 < fpr < 1e-18
            cert = float(acc.curve.tpr(float(fpr)))
            assert cert >= float(tpr) * (1 - 1e-12), (c, fpr, tpr, cert)  # sound
            assert cert <= TPR_FACTOR * float(tpr) + 10 * inf_mass, (c, fpr, tpr, cert)


@pytest.mark.parametrize("c", [10])
def test_reference_agrees_with_the_curve_in_the_body(c):
    # where FFT composition is accurate, the reference and the certified curve agree closely
    acc = account(fp.dpsgd(SIGMA, Q, STEPS), discretization=DISC)
    with mp.workdps(DIGITS):
        fpr, tpr = _exact_point(c)
    assert float(acc.curve.tpr(float(fpr))) == pytest.approx(float(tpr), rel=1e-5)
