"""Hostile JSON mechanism specs (session 13): every surface reads a spec with one strict
parser (:func:`fdpkit._inputs.load_json`), so a key named twice, an integer too long for
Python to read, nesting beyond the parser and a ``kind`` that is a list are each one
refusal naming the input: a ParameterError in Python, exit 2 with one line in the CLI,
422 on the web (the compare page answered 500 to two of them)."""

from __future__ import annotations

import pytest

import fdpkit as fp
from fdpkit.cli import run


@pytest.fixture(scope="module")
def client():
    from fastapi.testclient import TestClient

    from fdpkit.web.main import create_app

    return TestClient(create_app())

#: text -> what the refusal says
HOSTILE = {
    # json keeps the last of two keys: this spec was accounted at sigma 0.01 (mu 100)
    "key twice": ('{"kind": "gaussian", "sigma": 1, "sigma": 0.01}', "names the field 'sigma' twice"),
    "key twice, nested": ('{"kind": "repeated", "times": 2, "inner": {"kind": "gaussian", "sigma": 1, "sigma": 2}}',
                          "names the field 'sigma' twice"),
    # int("9" * 5000) is past Python's digit limit: the message named no input
    "5000 digits": ('{"kind": "gaussian", "sigma": ' + "9" * 5000 + "}", "holds a number with more than"),
    # {"kind": [...]} ended in "TypeError: unhashable type: 'list'"
    # a field left out said "Gaussian.__init__() missing 1 required positional argument: 'sigma'"
    "a field left out": ('{"kind": "gaussian"}', "mechanism 'gaussian' needs 'sigma' \\(its fields: sigma, sensitivity\\)"),
    "a field left out, nested": ('{"kind": "repeated", "times": 2, "inner": {"kind": "laplace"}}',
                                 "mechanism 'laplace' needs 'scale'"),
    "kind is a list": ('{"kind": ["gaussian"], "sigma": 1}', "mechanism kind must be one of"),
    "kind is an object": ('{"kind": {"a": 1}, "sigma": 1}', "mechanism kind must be one of"),
    "nested too deeply": ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    # json reads 1e-400 as 0: this (1, 1e-400)-DP spec was accounted as pure 1-DP (delta 0)
    "delta below the floats": ('{"kind": "approx_dp", "epsilon": 1, "delta": 1e-400}',
                               "delta: '1e-400' is too small to tell from 0"),
    # json reads 1e400 as inf, and NaN / Infinity although JSON has no such literals: they were
    # refused only later, as "got inf" (not the number written) or not at all where inf is allowed
    "number beyond the floats": ('{"kind": "gaussian", "sigma": 1e400}', "sigma: '1e400' is beyond the largest number"),
    "NaN literal": ('{"kind": "gaussian", "sigma": NaN}', "sigma: NaN is not a number JSON allows"),
    "Infinity literal, nested": ('{"kind": "repeated", "times": 2, "inner": {"kind": "pure_dp", "epsilon": -Infinity}}',
                                 "inner.epsilon: -Infinity is not a number JSON allows"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_python_refuses_by_name(case):
    text, match = HOSTILE[case]
    with pytest.raises(fp.ParameterError, match=match):
        fp.mechanism_from_json(text)


def test_kind_that_is_not_a_string_is_a_value_error_not_a_type_error():
    for kind in (["gaussian"], {"a": 1}, None, 3):
        with pytest.raises(ValueError, match="mechanism kind must be one of") as info:
            fp.mechanism_from_dict({"kind": kind, "sigma": 1.0})
        assert not isinstance(info.value, TypeError)


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_cli_one_line_exit_2(case, tmp_path, capfd):
    text, match = HOSTILE[case]
    spec = tmp_path / "spec.json"
    spec.write_text(text)
    code = run(["report", "--mechanism", str(spec), "--discretization", "1e-2"])
    err = capfd.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: ") and match.split("'")[0] in err, err


def test_cli_reads_a_spec_saved_with_a_bom(tmp_path, capfd):
    # a spec re-saved by an editor that writes a UTF-8 BOM was "not valid JSON: Unexpected UTF-8 BOM"
    # (score and points files were read with it)
    spec = tmp_path / "spec.json"
    spec.write_bytes(b"\xef\xbb\xbf" + b'{"kind": "gaussian", "sigma": 2.0}')
    assert run(["report", "--mechanism", str(spec), "--format", "json"]) == 0
    assert '"mu": 0.5' in capfd.readouterr().out


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_web_compare_page_answers_422(case, client):
    text, match = HOSTILE[case]
    r = client.post("/compare", data={"mechanism": text})
    assert r.status_code == 422, r.text[:300]


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_web_report_form_answers_422(case, client):
    text, match = HOSTILE[case]
    r = client.post("/report", data={"build": "json", "mechanism": text})
    assert r.status_code == 422, r.text[:300]


@pytest.mark.parametrize("path, body", [
    # {"mu": 0.1, "mu": 5} was answered for mu 5: json keeps the last
    ("/api/risk", b'{"guarantee": "mu", "mu": 0.1, "mu": 5}'),
    ("/api/report", b'{"mechanism": {"kind": "gaussian", "sigma": 1, "sigma": 0.2}}'),
    ("/api/convert", b'{"epsilon": 1, "delta": 1e-5, "delta": 0.5}'),
])
def test_web_json_body_naming_a_field_twice_is_422(path, body, client):
    r = client.post(path, content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text[:300]
    assert "the request body is not valid JSON: the field" in r.json()["detail"] and "given twice" in r.json()["detail"]


def test_cli_opacus_history_file_naming_a_key_twice_is_refused(tmp_path, capfd):
    # {"history": [...], "history": []} was read as the last (an empty history); a BOM is read
    path = tmp_path / "state.json"
    path.write_text('{"history": [[1.0, 0.01, 10]], "mechanism": "fdpkit", "history": []}')
    assert run(["report", "dpsgd", "--opacus-history", str(path), "--discretization", "1e-2"]) == 2
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and "names the field 'history' twice" in err, err
    path.write_bytes(b"\xef\xbb\xbf" + b'{"history": [[1.0, 0.01, 10]], "mechanism": "fdpkit"}')
    assert run(["report", "dpsgd", "--opacus-history", str(path), "--discretization", "1e-2", "-f", "json"]) == 0
