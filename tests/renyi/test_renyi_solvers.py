"""The solvers inside the Rényi curves (tightness only: every point they return is sound).

- the KL lines of rho-zCDP take c at the exact minimiser of h_c(alpha) (a bisection on the sign
  of h_c's derivative), not on a zoomed grid whose search stopped near c = 1,400;
- the boundary solve of each supporting line stops a point once its bracket is narrower
  than ``_SOLVER_XTOL``: the same lines for less work (a third of it on the headline report).
"""

from __future__ import annotations

import numpy as np
import pytest

from fdpkit.curves import _renyi_envelope, renyi


def _h(rho: float, alpha: np.ndarray, c: np.ndarray) -> np.ndarray:
    """h_c(alpha) = (rho + log(1 + alpha (e^c - 1))) / c (``kl_lines``)."""
    return (rho + np.logaddexp(0.0, np.log(alpha) + c + np.log(-np.expm1(-c)))) / c


@pytest.mark.parametrize("rho", [1e-4, 0.5, 2.0, 20.0, 200.0])
def test_kl_lines_take_the_minimising_c(rho):
    alpha = np.geomspace(1e-300, 0.49, 400)
    best = _renyi_envelope._kl_best_c(rho, alpha)
    grid = np.geomspace(1e-3, 1e4, 20001)[None, :]  # a far finer grid than any search had
    on_grid = _h(rho, alpha[:, None], grid).min(axis=1)
    assert np.all(_h(rho, alpha, best) <= on_grid * (1.0 + 1e-12)), rho
    assert np.all((best >= 1e-3) & (best <= 1e4))


def _solve(monkeypatch, xtol: float):
    """The lines of zCDP(0.5) at the base grid, and how many points the solve evaluated."""
    evaluated = []
    excess = renyi._excess

    def counting(xb, *args):
        evaluated.append(np.size(xb))
        return excess(xb, *args)

    monkeypatch.setattr(renyi, "_excess", counting)
    monkeypatch.setattr(renyi, "_SOLVER_XTOL", xtol)
    t = renyi.zcdp_orders(0.5)[:, None]
    xa = renyi._alpha_grid(renyi.POINTS_PER_ORDER)[None, :]
    lines = renyi._lines_at(t, 0.5 * t * (t - 1.0), xa)
    monkeypatch.undo()
    return lines, sum(evaluated), t.size * xa.size


def test_boundary_solve_stops_points_that_have_converged(monkeypatch):
    (eta, logd, ok), work, points = _solve(monkeypatch, renyi._SOLVER_XTOL)
    (eta_all, logd_all, ok_all), work_all, _ = _solve(monkeypatch, 0.0)  # every step on every point
    assert work_all >= renyi._SOLVER_STEPS * ok_all.sum()
    assert work < 0.85 * work_all
    # the same lines: a point stops once its bracket is within _SOLVER_XTOL = 1e-12 (relative),
    # and the full solve moves its certified end only inside that bracket; the lines' (eta,
    # log delta) are smooth in it (6e-12 at most here), so 1e-10 leaves a factor 100 for their
    # derivatives, whatever the CPU's last bits
    assert np.array_equal(ok, ok_all) and ok.sum() > 0.3 * points
    assert np.allclose(eta[ok], eta_all[ok], rtol=1e-10, atol=1e-12)
    assert np.allclose(logd[ok], logd_all[ok], rtol=1e-10, atol=1e-12)
