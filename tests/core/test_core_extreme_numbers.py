"""Numbers at the ends of the floats, typed on every surface (session 12, hostile input):
"1e-400" (below the smallest float: read as 0), "1e400" (above the largest: read as inf),
subnormal FPRs (5e-324: TPR / FPR leaves the floats) and -0.0. Each is refused with the text
the user typed (ValueError naming the argument, exit 2 with one line, HTTP 422 beside the
field) or read without NaN, inf or a 320-digit percentage."""

from __future__ import annotations

import re
import warnings

import pytest
from fastapi.testclient import TestClient

import fdpkit as fp
from fdpkit._numerics import plain_percent
from fdpkit.cli import run
from fdpkit.risk.reading import MIN_FPR, read_guarantee
from fdpkit.web.main import create_app


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app())


def _alerts(html: str) -> list[str]:
    return re.findall(r'role="alert">([^<]*)<', html)


@pytest.mark.parametrize("text, word", [("1e-400", "too small to tell from 0"), ("-1e-400", "too small"),
                                        ("1e400", "beyond the largest number"), ("1e-400%", "too small")])
def test_parse_fraction_refuses_numbers_beyond_the_floats(text, word):
    # "1e-400" was read as a delta of 0 (pure DP), silently; "1e400" as inf ("got inf")
    with pytest.raises(ValueError, match=word) as info:
        fp.parse_fraction(text, "delta")
    assert repr(text.rstrip("%")) in str(info.value)
    assert fp.parse_fraction("0e-400", "delta") == 0.0  # a zero is a zero
    assert fp.parse_fraction("5e-324", "delta") == 5e-324  # the smallest float is read


@pytest.mark.parametrize("argv, needle", [
    (["risk", "--mu", "1", "--mu-fpr-min", "1e-400", "--mu-tau", "0"], "'1e-400' is too small to tell from 0"),
    (["risk", "--mu", "1e400"], "'1e400' is beyond the largest number"),
    (["risk", "--mu", "1", "--fpr", "1e-400"], "'1e-400' is too small"),
    (["risk", "--mu", "1", "--fpr", "5e-324"], "fpr must be at least 2.23e-308"),
    (["convert", "mu-to-eps", "--mu", "1", "--delta", "1e-400"], "'1e-400' is too small"),
])
def test_cli_refuses_them_with_the_typed_text(argv, needle, capsys):
    # were: "mu_fpr_min must be > 0, got 0.0", "--mu must be finite, got inf", and FPR 5e-324
    # printed "(inf times its false-positive rate)" after a 322-zero percentage
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and needle in err, err


@pytest.mark.parametrize("query, field, needle", [
    ("/convert?delta=1e-400", "delta", "&#39;1e-400&#39; is too small to tell from 0"),
    ("/convert?delta=1e400", "delta", "&#39;1e400&#39; is beyond the largest number"),
    ("/convert?mu=1e-400", "mu", "&#39;1e-400&#39; is too small"),
    ("/risk?guarantee=mu&mu=1&fpr=5e-324", "fpr", "fpr must be at least 2.23e-308"),
])
def test_web_forms_refuse_them_beside_the_field(client, query, field, needle):
    # delta=1e-400 answered "give epsilon, mu or rho" (read as 0, then blank); delta=1e400 said
    # "got 'inf'"; mu=1e-400 answered 200 for mu = 0; FPR 5e-324 answered 200 with "inf times"
    r = client.get(query)
    assert r.status_code == 422, r.text[:300]
    assert f'id="{field}-error"' in r.text
    assert any(needle in a for a in _alerts(r.text)), _alerts(r.text)


def test_a_subnormal_fpr_is_refused_and_the_smallest_normal_one_reads_finitely():
    with pytest.raises(ValueError, match="fpr must be at least") as info:
        read_guarantee("mu", mu=1.0, fpr=5e-324, mu_fpr_min=1e-10, mu_tau=1e-6)
    assert info.value.parameter == "fpr"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "overflow encountered in divide" before
        r = read_guarantee("mu", mu=1.0, fpr=MIN_FPR, mu_fpr_min=1e-10, mu_tau=1e-6)
        fp.multiplicative_advantage(fp.GaussianCurve(1e3), 5e-324)
    text = " ".join(r.plain_language)
    assert "inf" not in text and "nan" not in text.lower(), text
    assert "0.0000000000" not in text and len(r.plain_language[0]) < 400, r.plain_language[0]


def test_minus_zero_reads_as_zero():
    assert read_guarantee("mu", mu=-0.0).headline.startswith("μ = 0 Gaussian DP")  # was "μ = -0"


def test_tiny_percentages_are_written_in_scientific_notation():
    assert plain_percent(5e-324, 2, up=True) == "5e-322%"  # was "0." + 321 zeros + "5%"
    assert plain_percent(1.234e-15, 2, up=True) == "1.3e-13%"
    assert plain_percent(1.234e-15, 2, up=False) == "1.2e-13%"
    assert plain_percent(1e-10, 2, up=None) == "0.00000001%"  # unchanged above 1e-8 %


@pytest.mark.parametrize("steps, needle", [
    ("1e-400", "Steps cannot be read: &#39;1e-400&#39; is too small to tell from 0"),  # was "got '0'"
    ("1e308", "Steps must be in [1, 10,000,000], got 1e+308"),  # was the 309-digit integer
    ("1" + "0" * 400, "(401 characters) is beyond the largest number"),
])
def test_web_counts_show_what_was_typed(client, steps, needle):
    r = client.get("/report", params={"mode": "dpsgd", "noise_multiplier": "1", "sample_rate": "0.01",
                                      "steps": steps})
    assert r.status_code == 422
    alerts = _alerts(r.text)
    assert any(needle in a for a in alerts) and all(len(a) < 300 for a in alerts), alerts


@pytest.mark.parametrize("url, body, field, needle", [
    ("/api/convert", '{"epsilon": 1, "delta": 1e-400}', "delta", "'1e-400' is too small to tell from 0"),
    ("/api/convert", '{"mu": 1e-400}', "mu", "'1e-400' is too small"),
    ("/api/convert", '{"mu": 1e400}', "mu", "'1e400' is beyond the largest number"),
    ("/api/risk", '{"guarantee": "mu", "mu": 1, "fpr": 1e-400}', "fpr", "'1e-400' is too small"),
])
def test_json_bodies_refuse_them_by_field(client, url, body, field, needle):
    # json.loads read 1e-400 as 0.0: {"epsilon": 1, "delta": 1e-400} was answered (200) as pure
    # epsilon-DP, {"mu": 1e-400} as mu = 0; 1e400 said only "Input should be a finite number"
    r = client.post(url, content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text[:300]
    assert r.json()["detail"].startswith(f"{field}: ") and needle in r.json()["detail"], r.json()["detail"]
    assert client.post(url, content=body.replace("1e-400", "1e-300").replace("1e400", "1e300"),
                       headers={"content-type": "application/json"}).status_code in (200, 422)


@pytest.mark.parametrize("delta", [0.0, -0.0])
def test_a_zero_delta_is_read_and_said_as_zero(delta):
    # the headline said "(ε = 1, δ = 1e-05 as δ was blank)" for a δ of 0 (or -0.0) given,
    # while the grade was read at δ = 0
    r = read_guarantee("epsilon_delta", epsilon=1.0, delta=delta)
    assert r.headline.startswith("(ε = 1, δ = 0) alone"), r.headline
    assert "as no Gaussian mechanism is pure ε-DP" in r.headline
    blank = read_guarantee("epsilon_delta", epsilon=1.0)
    assert blank.headline.startswith("(ε = 1, δ = 1e-05 as δ was blank)") and "pure" not in blank.headline


def test_every_route_reads_json_numbers_with_the_typed_text():
    # a router added without CheckedJSONRoute (the ledger's lift requests, merged beside it)
    # would read 1e-400 in its JSON body as 0 again
    from fastapi.routing import APIRoute

    from fdpkit.web.json_numbers import CheckedJSONRoute
    from fdpkit.web.main import ROUTERS

    routes = [r for m in ROUTERS for r in m.router.routes if isinstance(r, APIRoute)]
    assert len(routes) > 20
    plain = [r.path for r in routes if not isinstance(r, CheckedJSONRoute)]
    assert not plain, plain
