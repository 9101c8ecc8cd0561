"""Issue 31: the ledger export's basic-composition claim gives delta 0 for pure releases."""

import pytest

from fdpkit.ledger import open_ledger
from fdpkit.ledger.timeline import basic_composition_claim, ledger_document


def _release(led, spec, title):
    r = led.propose("census", spec, title=title, user="ana", purpose="table")
    led.approve(r.id, user="bob", comment="fine", pdf=False)  # the claim reads the JSON; PDFs: test_ledger_record
    led.release(r.id, user="bob")


def test_pure_releases_claim_delta_zero(tmp_path):
    led = open_ledger(f"sqlite:///{tmp_path / 'l.sqlite'}")
    try:
        led.add_dataset("census", unit="one person", user="admin")
        for i in range(3):
            _release(led, {"kind": "laplace", "scale": 0.5}, f"count {i}")
        summary = ledger_document(led, "census").summary
        assert "would claim 6 at δ = 0." in summary and "3e-05" not in summary
        _release(led, {"kind": "gaussian", "sigma": 2.0}, "mean")
        rows = _released(led)
        eps, delta = basic_composition_claim(rows)  # the Gaussian release adds its (epsilon, 1e-5)
        assert delta == pytest.approx(1e-5) and eps == pytest.approx(6 + rows[-1]["epsilon_ref"])
    finally:
        led.close()


def _released(led):
    from fdpkit.ledger.operations import release_dict

    return [release_dict(r) for r in led.releases("census", state="released")]
