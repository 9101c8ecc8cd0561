"""Login flood on loopback (issue 24): N concurrent anonymous logins against ``fdpkit serve``
on a SQLite ledger, while /healthz is polled; prints the server process's peak RSS, the
slowest /healthz and the login answers. Run it against another source tree (e.g. before a
change) with ``--src PATH``.

    python benchmarks/ledger_login_flood.py --logins 40
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent


def _rss(pid: int) -> int:
    """Resident set size of ``pid`` in bytes (Linux /proc; 0 once the process is gone)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--logins", type=int, default=40)
    ap.add_argument("--src", default=str(HERE.parent / "src"), help="source tree to serve (PYTHONPATH)")
    args = ap.parse_args()
    folder = tempfile.mkdtemp(prefix="fdpkit-flood-")
    db = os.path.join(folder, "ledger.sqlite")
    env = {**os.environ, "PYTHONPATH": args.src}
    setup = ("from fdpkit.ledger import open_ledger; from fdpkit.ledger.users import add_user; "
             f"led = open_ledger({db!r}); add_user(led, 'admin', role='admin', password='admin-password', "
             "actor='bench'); led.close()")
    subprocess.run([sys.executable, "-c", setup], check=True, env=env)
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "fdpkit.cli", "serve", "--db", db, "--port", str(port)],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        # one login first, so the ledger is open (as on a server that has served before)
        httpx.post(base + "/api/ledger/login", json={"username": "admin", "password": "admin-password"}, timeout=60)
        rss0 = _rss(server.pid)
        stop = threading.Event()
        peak, health = [rss0], []

        def sample():
            while not stop.is_set():
                peak.append(_rss(server.pid))
                time.sleep(0.02)

        def poll():
            with httpx.Client(timeout=60) as c:
                while not stop.is_set():
                    t0 = time.perf_counter()
                    c.get(base + "/healthz")
                    health.append(time.perf_counter() - t0)
                    time.sleep(0.05)

        codes: collections.Counter = collections.Counter()
        lock = threading.Lock()
        go = threading.Barrier(args.logins)

        def login(i):
            go.wait()
            try:
                r = httpx.post(base + "/api/ledger/login", json={"username": f"user{i}", "password": "wrong-password"},
                               timeout=120)
                code = r.status_code
            except httpx.HTTPError as exc:
                code = type(exc).__name__
            with lock:
                codes[code] += 1

        threads = [threading.Thread(target=sample), threading.Thread(target=poll)]
        for t in threads:
            t.start()
        time.sleep(0.5)
        t0 = time.perf_counter()
        logins = [threading.Thread(target=login, args=(i,)) for i in range(args.logins)]
        for t in logins:
            t.start()
        for t in logins:
            t.join()
        took = time.perf_counter() - t0
        time.sleep(0.5)
        stop.set()
        for t in threads:
            t.join()
        print(json.dumps({"logins": args.logins, "src": args.src, "rss_before_mb": round(rss0 / 2**20),
                          "rss_peak_mb": round(max(peak) / 2**20),
                          "healthz_max_s": round(max(health), 3), "healthz_polls": len(health),
                          "answers": {str(k): v for k, v in sorted(codes.items(), key=str)},
                          "flood_s": round(took, 2)}, indent=1))
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()


if __name__ == "__main__":
    main()
