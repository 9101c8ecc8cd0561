"""The one policy for missing system packages (issue 22, tests/_system.py): fail under CI,
skip elsewhere, with the same one line everywhere; `make test` installs them when allowed."""

import os

import pytest

import _system


@pytest.fixture
def nothing_installed(monkeypatch):
    gone = {k: ((lambda: None), pkg) for k, (_, pkg) in _system.REQUIREMENTS.items()}
    monkeypatch.setattr(_system, "REQUIREMENTS", gone)


def test_one_line_names_the_packages_and_the_command(nothing_installed, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    line = _system.missing_line()
    assert "\n" not in line
    assert "chromium, poppler-utils, postgresql" in line
    assert "`sudo apt-get install -y chromium poppler-utils postgresql`" in line


@pytest.mark.parametrize("what", list(_system.REQUIREMENTS))
@pytest.mark.parametrize("ci, outcome", [("true", pytest.fail.Exception), ("1", pytest.fail.Exception),
                                         ("", pytest.skip.Exception), ("false", pytest.skip.Exception)])
def test_missing_fails_under_ci_and_skips_elsewhere(nothing_installed, monkeypatch, what, ci, outcome):
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome) as err:
        _system.require(what)
    assert str(err.value.msg) == _system.missing_line()  # the same line for every requirement


def test_present_requirement_returns_its_path(monkeypatch):
    monkeypatch.setattr(_system, "REQUIREMENTS", {"x": ((lambda: "/usr/bin/x"), "x-pkg")})
    assert _system.require("x") == "/usr/bin/x"
    assert _system.missing_packages() == []


def test_install_without_root_or_sudo_prints_the_line_and_leaves_no_stamp(nothing_installed, monkeypatch,
                                                                          tmp_path, capsys):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(_system.shutil, "which", lambda name: None)  # no sudo, no apt-get
    stamp = tmp_path / "stamp"
    assert _system.install(str(stamp)) == 0
    assert capsys.readouterr().out.strip() == _system.missing_line()
    assert not stamp.exists()


def test_install_with_everything_present_only_stamps(monkeypatch, tmp_path):
    monkeypatch.setattr(_system, "REQUIREMENTS", {"x": ((lambda: "/usr/bin/x"), "x-pkg")})
    monkeypatch.setattr(_system.subprocess, "run", lambda *a, **k: pytest.fail("no apt-get when nothing is missing"))
    stamp = tmp_path / "d" / "stamp"
    assert _system.install(str(stamp)) == 0 and stamp.exists()
