"""Layer 3: Kulynych & Honkela Figs. 4b, 5b, 6b and Gomez et al. Table 3, from
shared/reference/published.json: printed rounding and relative 1e-6 to the recomputation."""

import math

import pytest

import fdpkit as fp

REL_TOL = 1e-6


def printed_matches(value, published):
    """Does ``value`` print as ``published`` at the same rounding? ('.03', '2', '4.4', '0.958')"""
    text = published.strip()
    if "." in text:
        decimals = len(text.split(".")[1])
        return f"{value:.{decimals}f}".lstrip("0") == text.lstrip("0") or f"{value:.{decimals}f}" == text
    # integers printed at 1 or 2 significant figures ("2", "10")
    return round(value) == int(text) or float(f"{value:.2g}") == float(text) or float(f"{value:.1g}") == float(text)


def test_multiplicative_advantage_table(published):
    t = fp.multiplicative_advantage_table()
    for cell in published["multiplicative_advantage"]["cells"]:
        i, j = t.rows.index(cell["alpha"]), t.cols.index(cell["mu"])
        v = t.cells[i][j]
        assert v == pytest.approx(cell["value"], rel=REL_TOL)
        assert printed_matches(v, cell["published"]), (cell, v)


def test_precision_at_recall_table(published):
    t = fp.precision_at_recall_table()
    for cell in published["precision_at_recall"]["cells"]:
        i, j = t.rows.index(cell["recall"]), t.cols.index(cell["mu"])
        v = t.cells[i][j]
        assert v == pytest.approx(cell["value"], rel=REL_TOL)
        assert printed_matches(v, cell["published"]), (cell, v)


def test_epsilon_for_delta_table(published):
    t = fp.epsilon_for_delta_table()
    for cell in published["epsilon_for_delta"]["cells"]:
        i, j = t.rows.index(cell["delta"]), t.cols.index(cell["mu"])
        v = t.cells[i][j]
        assert v == pytest.approx(cell["value"], rel=REL_TOL)
        assert float(f"{v:.2g}") == pytest.approx(float(f"{float(cell['published']):.2g}")), (cell, v)
        # safe side: delta_mu(eps) <= delta
        assert fp.delta_for_epsilon_from_mu(cell["mu"], v) <= cell["delta"] * (1 + 1e-9)


def test_mu_for_epsilon_delta_table(published):
    t = fp.mu_for_epsilon_delta_table()
    for cell in published["mu_for_epsilon_delta"]["cells"]:
        i, j = t.rows.index(cell["eps"]), t.cols.index(cell["delta"])
        v = t.cells[i][j]
        assert v == pytest.approx(cell["value"], rel=REL_TOL)
        assert printed_matches(v, cell["published"]), (cell, v)
        assert fp.delta_for_epsilon_from_mu(v, cell["eps"]) <= cell["delta"] * (1 + 1e-9)


def test_pure_epsilon_to_mu_all_semantics(published):
    for row in published["pure_epsilon_to_mu"]["rows"]:
        eps = row["eps"]
        assert fp.mu_from_pure_epsilon(eps) == pytest.approx(row["mu_pure"], rel=REL_TOL)
        for key, value in row.items():
            if key.startswith("mu_multadv_alpha="):
                a = float(key.split("=")[1])
                assert fp.mu_from_pure_epsilon(eps, fpr=a) == pytest.approx(value, rel=REL_TOL)
            elif key.startswith("mu_precision_b="):
                b = float(key.split("=")[1])
                assert fp.mu_from_pure_epsilon(eps, recall=b) == pytest.approx(value, rel=REL_TOL)


def test_seed_tables_have_provenance():
    for t in fp.seed_tables():
        assert t.source and t.rows and t.cols
        assert len(t.to_rows()) == len(t.rows) * len(t.cols)
        assert len(t.formatted()) == len(t.rows) + 1
        assert all(math.isfinite(v) for r in t.cells for v in r)
