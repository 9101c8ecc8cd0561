"""One recommended conversion per question (issue 15), against the closed forms and the
published values."""

import math

import pytest

import fdpkit as fp
from fdpkit.convert.classic import calculate, compose_releases, parse_releases
from fdpkit._numerics import norm_isf

CLOSED_FORM_RTOL = 1e-9
PUBLISHED_RTOL = 1e-6


def test_pure_epsilon_recommends_the_guarantee_for_every_mechanism(published):
    for row in published["pure_epsilon_to_mu"]["rows"]:
        r = fp.recommend_mu(row["eps"])
        assert r.value == pytest.approx(row["mu_pure"], rel=PUBLISHED_RTOL)
        assert r.value == pytest.approx(2 * float(norm_isf(1 / (1 + math.exp(row["eps"])))), rel=CLOSED_FORM_RTOL)
        assert r.question.startswith("μ for pure ε")
        alt = {a.semantics: a.value for a in r.alternatives}
        assert alt["same TPR/FPR at FPR 0.01"] == pytest.approx(row["mu_multadv_alpha=0.01"], rel=PUBLISHED_RTOL)
        assert alt["same precision at recall 1e-05"] == pytest.approx(row["mu_precision_b=1e-05"], rel=PUBLISHED_RTOL)
        assert alt["rule of thumb ε/5"] == pytest.approx(row["eps"] / 5, rel=CLOSED_FORM_RTOL)


def test_delta_is_honoured_and_headed_right():
    r = fp.recommend_mu(1.0, 1e-5)
    assert "pure" not in r.question and "δ = 1e-05" in r.question
    assert r.value == pytest.approx(float(fp.mu_for_epsilon_delta(1.0, 1e-5)), rel=CLOSED_FORM_RTOL)
    assert fp.delta_for_epsilon_from_mu(r.value, 1.0) == pytest.approx(1e-5, rel=1e-6)
    assert any(math.isinf(a.value) for a in r.alternatives)  # no mu covers every (eps, delta) mechanism
    assert fp.recommend_mu(1.0, 0.0).question.startswith("μ for pure ε")


def test_mu_to_epsilon_recommendation():
    r = fp.recommend_epsilon(1.0, 1e-6)
    assert r.value == pytest.approx(float(fp.epsilon_for_delta_from_mu(1.0, 1e-6)), rel=CLOSED_FORM_RTOL)
    assert fp.recommend_epsilon(1.0).recommended.semantics == "ε at δ = 1e-05"
    d = r.to_dict()
    assert d["recommended"]["meaning"] and d["alternatives"]


def test_composition_of_different_releases():
    rel = [(0.5, 1e-6), (1.0, 1e-6), (0.25, 1e-7)]
    out = compose_releases(rel, 1e-5)
    assert out["basic epsilon"] == pytest.approx(1.75) and out["basic delta"] == pytest.approx(2.1e-6)
    adv = math.sqrt(2 * math.log(1e5) * sum(e * e for e, _ in rel)) + sum(e * math.expm1(e) for e, _ in rel)
    assert out["advanced epsilon"] == pytest.approx(adv, rel=CLOSED_FORM_RTOL)
    mu = math.sqrt(sum(float(fp.mu_for_epsilon_delta(e, d)) ** 2 for e, d in rel))
    assert out["mu if every release is Gaussian (exact)"] == pytest.approx(mu, rel=CLOSED_FORM_RTOL)
    # equal releases reduce to the classic advanced composition
    from fdpkit.convert.classic import advanced_composition
    same = compose_releases([(0.1, 0.0)] * 10, 1e-5)
    assert same["advanced epsilon"] == pytest.approx(advanced_composition(10, 0.1, 0.0, 1e-5)[0], rel=CLOSED_FORM_RTOL)
    assert "mu if every release is Gaussian (exact)" not in same  # pure releases: the Prop. 6.1 reading instead


def test_parse_releases_and_calculator_warnings():
    assert parse_releases("0.5, 1e-6\n1;0.25,0") == [(0.5, 1e-6), (1.0, 0.0), (0.25, 0.0)]
    with pytest.raises(ValueError, match="releases line 2"):
        parse_releases("1, 0\nx, y")
    res = calculate("gaussian", sensitivity=1.0, epsilon=1.0, delta=0.5)
    assert any("δ = 0.5 is large" in w for w in res.warnings)
    res = calculate("composition", epsilon=0.2, delta=1e-6, k=50)
    assert "exact epsilon at the advanced delta (Gaussian DP)" in res.outputs


def test_composition_gdp_answer_for_pure_and_mixed_releases():
    """Every pure eps_i-DP mechanism is mu*(eps_i)-GDP (Gomez et al. Prop. 6.1), so pure and
    mixed lists get a Gaussian-DP answer too: sqrt(sum mu_i^2), read at the advanced delta."""
    from fdpkit.convert.classic import MIXED_MU, PURE_EPSILON, PURE_MU

    pure = [(0.5, 0.0), (1.0, 0.0), (0.25, 0.0)]
    mu_star = [2 * float(norm_isf(1 / (1 + math.exp(e)))) for e, _ in pure]  # the closed form of Prop. 6.1
    out = compose_releases(pure, 1e-5)
    assert out[PURE_MU] == pytest.approx(math.hypot(*mu_star), rel=CLOSED_FORM_RTOL)
    assert out[PURE_EPSILON] == pytest.approx(float(fp.epsilon_for_delta_from_mu(out[PURE_MU], 1e-5)), rel=CLOSED_FORM_RTOL)
    mixed = compose_releases([(0.5, 1e-6), (1.0, 0.0)], 1e-5)
    assert mixed[MIXED_MU] == pytest.approx(math.hypot(float(fp.mu_for_epsilon_delta(0.5, 1e-6)), mu_star[1]),
                                            rel=CLOSED_FORM_RTOL)
    # k identical pure releases: sqrt(k) mu*; beside basic and advanced, and flagged when looser
    many = calculate("composition", epsilon=0.2, delta=0.0, k=50)
    assert many.outputs[PURE_MU] == pytest.approx(math.sqrt(50) * float(fp.mu_from_pure_epsilon(0.2)),
                                                  rel=CLOSED_FORM_RTOL)
    assert many.outputs[PURE_EPSILON] < many.outputs["advanced epsilon"] < many.outputs["basic epsilon"]
    few = calculate("composition", releases="0.5; 1; 0.25")
    assert any("looser than basic composition" in w for w in few.warnings)


def test_release_list_warns_about_what_it_uses():
    """The list replaces epsilon, delta and k: an unused delta field is not warned about, the
    listed deltas and epsilons are."""
    res = calculate("composition", epsilon=1.0, delta=0.5, releases="0.5, 1e-6; 1, 1e-6")
    assert not any("δ = 0.5" in w for w in res.warnings)
    res = calculate("composition", releases="0.5, 0.01; 25, 0")
    assert any("δ = 0.01 is large" in w for w in res.warnings) and any("ε = 25" in w for w in res.warnings)
    assert calculate("laplace", epsilon=1.0, delta=0.5).warnings == ()  # delta is not a Laplace input


def test_composition_of_a_huge_epsilon_is_a_parameter_error():
    # mu ** 2 raised OverflowError (the calculator page answered 500 for releases "1e308")
    with pytest.raises(fp.ParameterError) as info:
        compose_releases([(1e308, 0.0)], 1e-5)
    assert info.value.parameter == "releases"


@pytest.mark.parametrize("releases, text", [
    # "epsilon must be <= 100" named the calculator's per-release epsilon field, not the release
    ([(1.0, 0.0), (150.0, 0.0)], "releases[1].epsilon must be <= 100, got 150.0"),
    ([(150.0, 1e-6)] * 3, "releases[0].epsilon must be <= 100, got 150.0"),
    # the composed mu above 1000 was "mu must be <= 1000", a quantity the user never gave
    ([(99.0, 0.0)] * 1400, "releases: together they are mu-GDP with mu = sqrt(sum of mu_i^2) = 1034, above 1000"),
])
def test_composition_errors_name_the_release(releases, text):
    with pytest.raises(fp.ParameterError) as info:
        compose_releases(releases, 1e-5)
    assert info.value.parameter == "releases" and str(info.value).startswith(text), str(info.value)


@pytest.mark.parametrize("text", ["1_000, 0", "\u0661, 0", "1, 1e-6; 0.5, 1_0e-6"])
def test_releases_text_takes_plain_decimal_numbers(text):
    # float() read "1_000" and other scripts' digits ("\u0661" is 1), as the CLI options did
    with pytest.raises(ValueError, match="releases line"):
        parse_releases(text)
    assert parse_releases("0.5, 1e-6; 1; +2, .0") == [(0.5, 1e-06), (1.0, 0.0), (2.0, 0.0)]
