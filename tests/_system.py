"""System packages the tests need, and the one policy when they are missing (issue 22).

The browser tests drive Debian's chromium (Playwright for Python, never ``playwright
install``), the PDF tests rasterise pages with ``pdftoppm`` (poppler-utils) and the ledger
tests start a throw-away PostgreSQL server (``initdb``, ``pg_ctl``). ``make test`` installs
the missing ones once with apt-get when it may (root, or passwordless sudo; ``python
tests/_system.py install STAMP``), else prints :func:`missing_line`. A test that needs one
asks :func:`require` (through the shared fixtures ``browser``, ``pdftoppm`` and
``pg_server``): it then **fails** under CI (env ``CI`` set and not false/0) and is
**skipped** elsewhere, everywhere with the same one-line reason, which pytest's summary
(``-rs``) shows once for all of them.

This module imports only the standard library at the top, so the Makefile runs it before
the test dependencies exist.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

#: Debian's chromium, driven by Playwright (``executable_path``).
CHROMIUM = "/usr/bin/chromium"
#: Flags for a headless, offline chromium in a container.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
#: PostgreSQL's server binaries: version 15 when present, else the newest installed.
PG_PREFERRED = "/usr/lib/postgresql/15/bin"
PG_BIN_GLOB = "/usr/lib/postgresql/*/bin"


def _chromium() -> str | None:
    return CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")


def _pdftoppm() -> str | None:
    return shutil.which("pdftoppm")


def _pg_bindir() -> str | None:
    if os.path.exists(os.path.join(PG_PREFERRED, "initdb")):
        return PG_PREFERRED
    found = sorted(glob.glob(os.path.join(PG_BIN_GLOB, "initdb")))
    return os.path.dirname(found[-1]) if found else None


#: what -> (how to find it, Debian package)
REQUIREMENTS = {
    "chromium": (_chromium, "chromium"),
    "pdftoppm": (_pdftoppm, "poppler-utils"),
    "postgresql": (_pg_bindir, "postgresql"),
}


def missing_packages() -> list[str]:
    """Debian packages of the requirements that are not installed, in a fixed order."""
    return [pkg for find, pkg in REQUIREMENTS.values() if find() is None]


def install_command(packages: list[str]) -> str:
    sudo = "" if os.geteuid() == 0 else "sudo "
    return f"{sudo}apt-get install -y {' '.join(packages)}"


def missing_line() -> str:
    """The one line that says what is missing and the command that installs it."""
    pkgs = missing_packages()
    return (f"system packages missing ({', '.join(pkgs)}): browser/PDF/PostgreSQL tests skip "
            f"(fail under CI); install them with `{install_command(pkgs)}` or run `make test` as root")


def under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require(what: str) -> str:
    """The path of ``what`` (a key of :data:`REQUIREMENTS`: the chromium executable, the
    pdftoppm executable or PostgreSQL's bin directory); when it is missing, fail under CI
    and skip elsewhere, with :func:`missing_line` as the reason."""
    import pytest

    found = REQUIREMENTS[what][0]()
    if found is not None:
        return found
    if under_ci():
        pytest.fail(missing_line(), pytrace=False)
    pytest.skip(missing_line())


def install(stamp: str) -> int:
    """Install the missing packages with apt-get when allowed (root or passwordless sudo),
    then create ``stamp``; else print :func:`missing_line`. Always returns 0: what is still
    missing fails the tests under CI and skips them elsewhere."""
    pkgs = missing_packages()
    if pkgs:
        if os.geteuid() == 0:
            prefix = []
        elif shutil.which("sudo") and subprocess.run(["sudo", "-n", "true"], capture_output=True).returncode == 0:
            prefix = ["sudo", "-n"]
        else:
            prefix = None
        if prefix is None or shutil.which("apt-get") is None:
            print(missing_line())
            return 0
        print(f"installing {' '.join(pkgs)} with apt-get (once; stamp {stamp})", flush=True)
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        apt = [*prefix, "apt-get", "-o", "DPkg::Lock::Timeout=600", "-qq"]
        ok = subprocess.run([*apt, "update"], env=env).returncode == 0
        ok = ok and subprocess.run([*apt, "install", "-y", *pkgs], env=env,
                                   stdout=subprocess.DEVNULL).returncode == 0
        if not ok or missing_packages():
            print(missing_line())
            return 0
    Path(stamp).parent.mkdir(parents=True, exist_ok=True)
    Path(stamp).touch()
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["missing"]:
        print(" ".join(missing_packages()))
        return 0
    if argv[:1] == ["line"]:
        print(missing_line() if missing_packages() else "all system packages present")
        return 0
    if len(argv) == 2 and argv[0] == "install":
        return install(argv[1])
    print("usage: python tests/_system.py missing | line | install STAMP", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
