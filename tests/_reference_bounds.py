"""Error bounds of the reference computations the accounting tests compare with (issue 22).

A test that compares fdpkit with dp_accounting must allow for dp_accounting's own error,
not for what one CPU's rounding happened to give. dp_accounting 0.6.0 composes dense PMFs
with FFTs (``common.self_convolve``: ``ifft(fft(x, N) ** T)``; ``DensePLDPmf.compose``:
``scipy.signal.fftconvolve``) and truncates tails. Its errors, per output delta(eps):

* **Tail truncation.** ``self_compose(T, tail_mass_truncation)`` computes only a Chernoff
  window holding all but ``tail_mass_truncation`` of the mass, with an FFT of about the
  window's length, so the mass outside wraps around into it (at most that much, added), and
  adds ``tail_mass_truncation`` to the infinity mass for the mass it dropped; ``compose``
  moves the truncated right tail (at most half of it) to infinity and the left one to the
  lowest loss. Either way delta(eps) rises by at most 2 ``tail_mass_truncation``
  (:data:`DPA_TRUNCATION_RISE`) and never falls.
* **FFT round-off**, both signs, bounded as in :mod:`fdpkit.accounting.tilted` (Step 3) but
  without tilting: with eta_N = c_F u (ceil(log2 N) + 2) (Higham 2002, Thm. 24.2, the same
  c_F = ``FFT_LEVEL_ERROR`` as fdpkit's own bound), ||X^_j - X_j||_2 <= G_j = eta_N sqrt(N)
  ||x_j||_2 for each input; with m_j = sum|x_j| + G_j >= |X_jk|, |X^_jk| the telescoped
  product (tilted Eq. 3) differs from the exact one by at most sum_j G_j T_j M / m_j in l2
  (M = prod_i m_i^{T_i}); products and powers add a relative r = (1 + 4u)^(sum T_j + J) - 1
  of the computed spectrum P^ (Eq. 4); the inverse FFT maps an l2 error e to e / sqrt(N)
  and adds eta_N ||P^||_2 / sqrt(N). A real FFT's half spectrum stands for the full one:
  factor sqrt(2). delta(eps) = sum_L w(L) p(L) with 0 <= w <= 1, so its error is at most
  the l1 norm of the output's error, <= sqrt(N) times its l2 norm (Cauchy-Schwarz), plus the
  sum's own rounding (N u of a total <= M).

The bounds are evaluated on the inputs of each comparison (:func:`dpa_delta_roundoff`).
They are worst-case: below them dp_accounting's deltas are round-off, and a comparison
there says nothing, on any CPU.
"""

from __future__ import annotations

import math

import numpy as np
from dp_accounting.pld import common
from scipy import fft as sfft

from fdpkit.accounting._fftpass import FFT_LEVEL_ERROR

#: dp_accounting's default ``tail_mass_truncation`` (``DensePLDPmf.self_compose``) ...
DPA_TAIL_TRUNCATION = 1e-15
#: ... and the most its truncation raises any delta(eps) by (infinity mass + wrap-around).
DPA_TRUNCATION_RISE = 2 * DPA_TAIL_TRUNCATION

_U = float(np.finfo(float).eps) / 2.0


def dpa_delta_roundoff(parts: list[tuple[np.ndarray, int]], *, real: bool,
                       tail_mass_truncation: float = DPA_TAIL_TRUNCATION) -> float:
    """Bound on |delta^(eps) - delta(eps)| (any eps) from the round-off of dp_accounting's
    FFT composition of ``parts`` (probability arrays, times), as derived in the module
    docstring. ``real``: ``scipy.signal.fftconvolve`` (rfft, two-PMF ``compose``); else the
    complex FFT of ``common.self_convolve`` (one part raised to ``times``, on the FFT length
    that dp_accounting picks from its Chernoff window)."""
    if real:
        out_len = sum(len(x) - 1 for x, _ in parts) + 1
    else:
        (x, t), = parts
        lo, hi = common.compute_self_convolve_bounds(np.asarray(x, dtype=float), t, tail_mass_truncation)
        out_len = hi - lo + 1
    n = sfft.next_fast_len(max(out_len, *(len(x) for x, _ in parts)), real=real)
    eta = FFT_LEVEL_ERROR * _U * (math.ceil(math.log2(max(n, 2))) + 2)
    g, m, spec = [], [], np.ones(n, dtype=complex)
    for x, t in parts:
        x = np.asarray(x, dtype=float)
        g.append(eta * math.sqrt(n) * math.sqrt(float(np.sum(x * x))) * (1 + 1e-6))
        m.append(float(np.sum(np.abs(x))) * (1 + n * _U) + g[-1])
        spec *= sfft.fft(x, n) ** t  # P^ (l2 norm only; its own rounding is within r)
    log_big = sum(t * math.log(mj) for (_, t), mj in zip(parts, m))
    telescoped = sum(gj * t * math.exp(log_big - math.log(mj)) for gj, (_, t), mj in zip(g, parts, m))
    if real:
        telescoped *= math.sqrt(2.0)
    r = math.expm1((sum(t for _, t in parts) + len(parts)) * math.log1p(4 * _U))
    p_norm = float(np.linalg.norm(spec)) * (1 + r) + telescoped
    l2 = (telescoped + r / (1 - r) * p_norm) / math.sqrt(n) + eta * p_norm / math.sqrt(n)
    return (math.sqrt(n) * l2 + 2 * n * _U * math.exp(log_big)) * (1 + 1e-6)


def dpa_epsilon_bracket(single_pld, times: int, delta: float) -> tuple[float, float]:
    """Where the exact eps(delta) of ``single_pld`` composed ``times`` times lies, given
    dp_accounting's composition of it (see :func:`dpa_phases_epsilon_bracket`)."""
    return dpa_phases_epsilon_bracket([(single_pld, times)], delta)


def dpa_phases_epsilon_bracket(phases: list, delta: float) -> tuple[float, float]:
    """Where the exact eps(delta) of the composition of ``phases`` ((single-step PLD, times),
    in order) lies, computed as dp_accounting's accountant does (each phase self-composed,
    then composed with the running PLD). Its deltas are within [exact - E, exact + E + R]:
    E adds each FFT's round-off bound (:func:`dpa_delta_roundoff`), an earlier error carried
    through a later convolution scaled by the other operand's total mass; R adds each
    truncation's rise. eps(delta) is non-increasing, so the exact value lies between the
    computed eps at delta + E + R and at delta - E."""
    from fdpkit.accounting._pld_adapter import pmf_arrays

    def arrays(pld):
        remove, add = pmf_arrays(pld)
        return remove, add if add is not None else remove

    def mass(a):
        return math.fsum(a.probs.tolist())

    running, err, rise = None, 0.0, 0.0
    for single, times in phases:
        part = single.self_compose(times, DPA_TAIL_TRUNCATION)
        part_err = max(dpa_delta_roundoff([(a.probs, times)], real=False) for a in arrays(single))
        rise += DPA_TRUNCATION_RISE
        if running is None:
            running, err = part, part_err
            continue
        pairs = list(zip(arrays(running), arrays(part)))
        err = max(err * mass(b) + part_err * mass(a) + dpa_delta_roundoff([(a.probs, 1), (b.probs, 1)], real=True)
                  for a, b in pairs)
        rise += DPA_TAIL_TRUNCATION  # compose moves at most half of it to +inf
        running = running.compose(part, DPA_TAIL_TRUNCATION)
    if not delta - err > 0:
        raise ValueError(f"delta={delta} is within dp_accounting's round-off {err:.3g}: nothing to compare")
    return running.get_epsilon_for_delta(delta + err + rise), running.get_epsilon_for_delta(delta - err)
