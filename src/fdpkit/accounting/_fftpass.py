"""One tilted FFT pass of :mod:`fdpkit.accounting.tilted` (its Step 3): the computed
circular convolution of the tilted factors on a window, and its rigorous round-off bounds
(Eqs. 3-5 of that module's documentation), plus the input-rounding factors of Eq. (6).

Two bounds on the error vector e = y^ - circ(c) are returned. The per-point one, eps_theta
of Eq. (5), bounds max_L |e_L| through the l1-norm of the spectrum error S. The second
bounds the l2-norm over all N points (what :mod:`fdpkit.accounting._tail_l2` sums over a
tail by Cauchy-Schwarz):

    ||e||_2 <= eps2_theta = ||S||_2 / sqrt(N) + eta_N ||y^||_2 / (1 - eta_N),         (5')

by Parseval (the inverse DFT with its 1/N maps S to a vector of l2-norm ||S||_2 / sqrt(N))
and the normwise FFT bound of Step 3 for the inverse transform's own rounding. The
spectrum error is bounded term by term as in (3)-(4), but in l2: with D_j = X^_j - X_j,
||D_j||_2 <= G_j, so ||sum_j D_j W_j||_2 <= sum_j G_j max_k W_jk; the powering errors e_k
contribute (sum_k e_k^2)^{1/2}, and the omitted coefficients (each at most p_omit in
modulus) sqrt(#omitted) p_omit. Where the tilted composition spreads over many points the
spectrum is narrow, and n eps_theta (a tail of n points read point by point) exceeds
sqrt(n) eps2_theta by orders of magnitude (issue 27's tiny-sample-rate runs)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from scipy import fft as sfft

if TYPE_CHECKING:
    from fdpkit.accounting._cumulants import _Cumulants
    from fdpkit.accounting.tilted import _Factor

#: Spectral coefficients whose bound prod_j m_jk^{T_j} is below e^this are set to 0 (the
#: error this adds to (5) is counted; it lies hundreds of orders below the FFT's own).
LOG_SPECTRUM_FLOOR = -700.0
#: FFT error constant c_F per radix level, in units of round-off (see Step 3).
FFT_LEVEL_ERROR = 10.0


def _power(z: np.ndarray, times: int) -> np.ndarray:
    """z**times by repeated squaring (relative error <= (1 + 4u)^(times - 1) - 1, Step 3)."""
    result = None
    base = z
    while times:
        if times & 1:
            result = base.copy() if result is None else result * base
        times >>= 1
        if times:
            base = base * base
    return result


def _fft_pass(factors: list[_Factor], cum: _Cumulants, theta: float, start: int,
              size: int, dtype) -> tuple[np.ndarray, float, float]:
    """One tilted FFT composition on the grid indices [start, start + size): the computed
    circular convolution y^ there, its per-point error bound eps_theta of Eq. (5) and the
    bound eps2_theta of Eq. (5') on the error's l2-norm over the whole circle.

    Only the coefficients k whose bound prod_j m_jk^{T_j} exceeds e^LOG_SPECTRUM_FLOOR are
    powered and multiplied; the others are set to 0, an error of at most that bound per
    coefficient, which (5) adds (see the module docs, Step 3)."""
    u = float(np.finfo(dtype).eps) / 2.0
    u64 = float(np.finfo(float).eps) / 2.0
    n_fft = sfft.next_fast_len(size, real=True)
    n_half = n_fft // 2 + 1
    levels = math.ceil(math.log2(max(n_fft, 2))) + 2
    eta = FFT_LEVEL_ERROR * u * levels
    coef, mags, g, tot, m_max, m_min = [], [], [], [], [], []
    s0 = 0
    for j, f in enumerate(factors):
        lam = cum.lam(j, theta)[0]
        grid = cum.losses[j] if dtype == np.float64 else (f.lo + np.arange(len(f.probs))).astype(dtype) * dtype(cum.d)
        x = np.exp(cum.logp[j].astype(dtype) + dtype(theta) * grid - dtype(lam))
        if len(x) > n_fft:  # fold (circular convolution commutes with folding)
            x = np.bincount(np.arange(len(x)) % n_fft, weights=x.astype(float),
                            minlength=n_fft).astype(dtype)
        xf = np.asarray(x, dtype=float)
        norm2 = math.sqrt(float(np.einsum("i,i->", xf, xf)))  # not a BLAS dot (see _cumulants)
        total = float(np.sum(xf)) * (1.0 + (math.log2(len(x) + 1) + 4.0) * u) + 1e-300
        xs = sfft.rfft(x, n_fft)
        a = np.abs(xs)
        if a.dtype != np.float64:
            a = a.astype(float)
        gj = eta * math.sqrt(n_fft) * norm2 * (1.0 + 1e-6)
        # m_jk = max(a (1 + 4u), min(a + G_j, total)) >= |X_jk|, |X^_jk| (a rounded to float)
        top = float(a.max()) * (1.0 + 4.0 * u64)
        coef.append(xs)
        mags.append(a)
        g.append(gj)
        tot.append(total)
        m_max.append(max(top, min(top + gj, total)))
        m_min.append(min(gj, total))
        s0 += f.times * f.lo
    # keep k unless m_jk <= thr_j for some j, thr_j chosen so that then
    # prod_i m_ik^{T_i} <= thr_j^{T_j} prod_{i != j} M_i^{T_i} = e^LOG_SPECTRUM_FLOOR
    t_all = sum(f.times for f in factors)
    log_mm = [math.log(v) for v in m_max]
    s_log = sum(f.times * lm for f, lm in zip(factors, log_mm))
    slack = 16.0 * u64 * (abs(LOG_SPECTRUM_FLOOR) + sum(f.times * (abs(lm) + 1.0)
                                                        for f, lm in zip(factors, log_mm)))
    keep = None
    for j, f in enumerate(factors):
        log_thr = (LOG_SPECTRUM_FLOOR - (s_log - f.times * log_mm[j])) / f.times
        thr = math.exp(log_thr)
        if thr >= m_max[j]:
            keep = np.zeros(n_half, dtype=bool)
            break
        # a <= cut implies a (1 + 4u) <= thr and min(a + G_j, total) <= thr
        cut = thr * (1.0 - 16.0 * u64) - (g[j] * (1.0 + 16.0 * u64) if tot[j] > thr else 0.0)
        kj = mags[j] > cut
        keep = kj if keep is None else (keep & kj)
    idx = np.flatnonzero(keep)
    n_keep = len(idx)
    full = n_keep == n_half
    sel = slice(None) if full else idx
    # weights: the full DFT's N coefficients, k and N - k folded into the half spectrum
    w_keep = 2.0 * n_keep - (1.0 if n_keep and idx[0] == 0 else 0.0) \
        - (1.0 if n_fft % 2 == 0 and n_keep and idx[-1] == n_half - 1 else 0.0)
    w_omit = max(float(n_fft) - w_keep, 0.0)
    p_omit = math.exp(LOG_SPECTRUM_FLOOR + slack) * (1.0 + 8.0 * u64) if w_omit else 0.0
    spec_k = None
    log_prod = 0.0
    ms = []
    for f, xs, a, gj, total in zip(factors, coef, mags, g, tot):
        ak = a[sel]
        mk = np.minimum(ak + gj, total)
        np.maximum(mk, ak * (1.0 + 4.0 * u64), out=mk)
        ms.append(mk)
        log_prod = log_prod + f.times * np.log(mk)
        pw = _power(xs[sel], f.times)
        spec_k = pw if spec_k is None else spec_k * pw
    prod_m = np.exp(log_prod) if n_keep else np.zeros(0)

    def wsum(v: np.ndarray) -> float:
        """sum_k weight_k v_k over the kept coefficients."""
        s = 2.0 * float(np.sum(v))
        if n_keep and idx[0] == 0:
            s -= float(v[0])
        if n_keep and n_fft % 2 == 0 and idx[-1] == n_half - 1:
            s -= float(v[-1])
        return s

    # (3): sum_j G_j ||W_j||_2 over the full spectrum (omitted k: W_jk <= T_j p_omit / m_jk)
    spectral = 0.0
    spectral2 = 0.0  # (5'): sum_j G_j max_k W_jk, the same W_jk (omitted k included)
    for f, mk, gj, mn in zip(factors, ms, g, m_min):
        w = (f.times * prod_m) / mk
        omit = w_omit * (f.times * p_omit / mn) ** 2
        spectral += gj * math.sqrt(wsum(w * w) * (1.0 + 8.0 * u64) + omit)
        w_max = max(float(w.max()) if n_keep else 0.0, f.times * p_omit / mn if w_omit else 0.0)
        spectral2 += gj * w_max * (1.0 + 8.0 * u64)
    # (4) for repeated squaring: relative error <= (1 + 4u)^(sum T_j - 1 + J - 1) - 1
    mults = t_all + len(factors)
    rel = math.expm1(mults * math.log1p(4.0 * u))
    if rel >= 0.5:
        raise ValueError("too many compositions for the FFT precision")
    # |Y^_k| <= (1 + r) |prod X^_jk^T_j| <= (1 + r) prod_m; omitted: |0 - prod X^| <= p_omit
    spectral += (wsum(prod_m) * rel * (1.0 + rel) / (1.0 - rel) + w_omit * p_omit) * (1.0 + 8.0 * u64) \
        + 1e-300 * n_fft
    spectral2 += (math.sqrt(wsum(prod_m * prod_m)) * rel * (1.0 + rel) / (1.0 - rel)
                  + math.sqrt(w_omit) * p_omit) * (1.0 + 8.0 * u64) + 1e-300 * math.sqrt(n_fft)
    if full:
        spec = spec_k
    else:
        spec = np.zeros(n_half, dtype=coef[0].dtype)
        spec[idx] = spec_k
    y = sfft.irfft(spec, n_fft)
    yf = np.asarray(y, dtype=float)
    y_norm = math.sqrt(float(np.einsum("i,i->", yf, yf)))
    eps = (spectral / n_fft) * (1.0 + 8 * u) + eta * y_norm / (1.0 - eta)
    eps2 = (spectral2 / math.sqrt(n_fft)) * (1.0 + 8 * u) + eta * y_norm / (1.0 - eta)
    shift = (start - s0) % n_fft
    if shift + size <= n_fft:
        return yf[shift:shift + size], eps, eps2
    return np.concatenate([yf[shift:], yf[:shift + size - n_fft]]), eps, eps2


def _input_rounding(factors: list[_Factor], cum: _Cumulants, theta: float, u: float):
    """(log R_up, log R_low): prod_j (1 +- rho_j)^{T_j} of Step 3."""
    up = low = 0.0
    for j, f in enumerate(factors):
        lam = cum.lam(j, theta)[0]
        # max |ln p| + |theta| max |l| >= max |ln p + theta l| term by term: a (negligibly)
        # larger rho, so still a bound
        log_p_max, loss_max = cum.shapes[j].extents()
        mag = log_p_max + abs(theta) * loss_max
        rho = math.expm1(3.0 * u * (mag + abs(lam)) + 2.0 * u)
        up += f.times * math.log1p(rho)
        low += f.times * math.log1p(-min(rho, 0.5))
    return up, low
