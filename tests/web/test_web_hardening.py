"""Issue 14 on the web: security headers on every status (500 included), body size limit
before parsing, spec depth/parts while parsing, the cost budget refused at once with the
parameter to change, 503 + Retry-After when the queue is full, and a real uvicorn server on
127.0.0.1 under load and under slow clients (bounded loops, loopback only).

The load and slow-client checks assert the issue's own thresholds (light p95 <= 2 s,
/healthz never blocked > 0.5 s, RSS within 1.5x of idle, no CPU busy 5 s after; sockets
closed at the configured request deadline) and print what they measured. They are marked
``serial``: ``make test`` runs them after the parallel part, alone on the machine. The load
test runs ``fdpkit serve`` in its own process, so its clients share no interpreter with it.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from urllib.parse import urlparse

import httpx
import pytest
from fastapi.testclient import TestClient

from fdpkit.web.common import Limits
from fdpkit.web.main import create_app
from fdpkit.web.server import SECURITY_HEADERS

#: A request for the heavy lane (estimated work just above ``Limits.light_work``; about 1 s
#: of CPU, so the test stays short). Six of them fill the heavy lane to its limit (2 running,
#: 4 waiting).
#: (120 repetitions read 4e6 since the cost model's refit, 0.3 s: the light lane's; 400 read 1.2e7.)
HEAVY = {"mechanism": {"kind": "repeated", "times": 400,
                       "inner": {"kind": "subsampled", "sample_rate": 0.5, "inner": {"kind": "laplace", "scale": 0.5}}},
         "discretization": 1e-4}
LIGHT_PATHS = [("/api/convert", {"epsilon": 1.0, "delta": 1e-5}),
               ("/api/risk", {"guarantee": "mu", "mu": 1.0}),
               ("/api/report", {"mechanism": {"kind": "gaussian", "sigma": 2.0}})]
#: The issue's thresholds (seconds / ratios) for the load test, asserted as they are: the
#: test is marked ``serial`` (``make test`` runs it after the parallel part, alone).
LIGHT_P95_S = 2.0
HEALTHZ_BLOCK_S = 0.5
RSS_RATIO = 1.5
#: /healthz probes: one every PROBE_EVERY_S seconds from a thread of its own.
PROBE_EVERY_S = 0.05
#: Slow clients: how many trickling sockets, and the request deadline the test server uses.
TRICKLERS = 200
REQUEST_TIMEOUT_S = 2.0
#: Seconds between the server closing a socket and this test seeing it (one round of the
#: polling loop: 200 sends and a /healthz probe, then 0.2 s of sleep).
CLOSE_SEEN_S = 1.0


def _assert_headers(response):
    for k, v in SECURITY_HEADERS.items():
        assert response.headers.get(k) == v, (response.status_code, k)


@pytest.fixture(scope="module")
def app_client():
    app = create_app()

    @app.get("/boom", include_in_schema=False)
    async def boom():
        raise RuntimeError("deliberate failure for the 500 test")

    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def test_security_headers_on_200_404_422_500(app_client):
    r200 = app_client.get("/healthz")
    r404 = app_client.get("/no-such-page")
    r422 = app_client.post("/api/convert", json={"epsilon": "abc"})
    r500 = app_client.get("/boom")
    assert [r.status_code for r in (r200, r404, r422, r500)] == [200, 404, 422, 500]
    for r in (r200, r404, r422, r500):
        _assert_headers(r)


def test_body_limit_before_parsing(app_client):
    r = app_client.post("/api/report", content=b"[" * 2_000_000, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "1,000,000 bytes" in r.json()["detail"]
    _assert_headers(r)

    def chunks():  # no Content-Length: counted while streaming
        for _ in range(30):
            yield b" " * 50_000

    r = app_client.post("/api/report", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_spec_depth_and_parts_limits(app_client):
    spec = {"kind": "gaussian", "sigma": 1.0}
    for _ in range(200):
        spec = {"kind": "repeated", "times": 2, "inner": spec}
    r = app_client.post("/api/report", json={"mechanism": spec})
    assert r.status_code == 422 and "nested" in r.json()["detail"]
    many = {"kind": "composed", "parts": [{"kind": "laplace", "scale": 1.0}] * 20_000}
    r = app_client.post("/api/report", json={"mechanism": many})
    assert r.status_code == 422 and "parts" in r.json()["detail"]


@pytest.mark.parametrize("body, parameter", [
    ({"mechanism": {"kind": "repeated", "times": 1000, "inner": {"kind": "laplace", "scale": 0.1}},
      "discretization": 1e-5}, "times"),
    ({"mechanism": {"kind": "subsampled", "sample_rate": 0.999, "inner": {"kind": "gaussian", "sigma": 0.1}},
      "discretization": 1e-5}, "discretization"),
    ({"mechanism": {"kind": "repeated", "times": 1000,
                    "inner": {"kind": "repeated", "times": 1000, "inner": {"kind": "laplace", "scale": 1.0}}}},
     "times"),  # nesting multiplied through: 10^6 compositions
    ({"mechanism": {"kind": "dpsgd", "noise_multiplier": 0.5, "sample_rate": 0.5, "steps": 100000}}, "steps"),
])
def test_over_budget_refused_at_once_naming_the_parameter(app_client, body, parameter):
    r = app_client.post("/api/report", json=body)
    assert r.status_code == 422
    assert r.json()["detail"].startswith(parameter), r.json()


def test_bools_and_strings_are_not_numbers(app_client):
    r = app_client.post("/api/report", json={"mechanism": {"kind": "gaussian", "sigma": True}})
    assert r.status_code == 422 and r.json()["detail"].startswith("sigma")
    r = app_client.post("/api/report", json={"mechanism": {"kind": "gaussian", "sigma": "1"}})
    assert r.status_code == 422 and r.json()["detail"].startswith("sigma")


#: Text that Python's float()/int() (and pydantic's lax mode) read as numbers but that is no
#: plain decimal number: underscores, other scripts' digits, full-width digits, a no-break space.
NOT_PLAIN = ["1_000", "\u0661\u0662", "\uff11", "\u00a01"]


@pytest.mark.parametrize("text", NOT_PLAIN)
def test_numbers_sent_as_text_are_plain_decimal_numbers(app_client, text):
    """JSON: {"sensitivity": "1_000"} was read as 1000 and {"mu": "\u00a01"} as 1 (HTTP 200);
    now 422 naming the field. Forms: steps "\u0661\u0662" ran 12 steps, n "1_000" planned for
    1000; now the form page (422) names the field."""
    for path, body, field in [("/api/calculator", {"mode": "gaussian", "epsilon": 1, "delta": 1e-5}, "sensitivity"),
                              ("/api/risk", {"guarantee": "mu"}, "mu"),
                              ("/api/sweep", {"noise_multiplier": [1.0], "sample_rate": [0.01]}, "steps")]:
        value = [text] if field == "steps" else text
        r = app_client.post(path, json={**body, field: value})
        assert r.status_code == 422, (path, r.text)
        assert r.json()["detail"].startswith(f"{field}: must be a plain decimal number"), r.json()
    assert app_client.post("/api/risk", json={"guarantee": "mu", "mu": "1"}).status_code == 200  # plain text still reads
    page = {"accept": "text/html"}
    for path, form, field in [
            ("/report", {"mode": "dpsgd", "noise_multiplier": "2", "sample_rate": "0.01", "discretization": "0.01"},
             "steps"),
            ("/calculator", {"mode": "gaussian", "epsilon": "1", "delta": "1e-5"}, "sensitivity"),
            ("/plan", {"guide": "utility_first", "effect": "0.2", "sd": "0.25", "level": "0.01",
                       "max_relative_loss": "0.01"}, "n")]:
        r = app_client.post(path, data={**form, field: text}, headers=page)
        assert r.status_code == 422, (path, field, r.status_code)
        assert "plain decimal number" in r.text, (path, field)
    r = app_client.post("/audit", data={"mode": "counts", "true_positives": "9" + text, "false_positives": "10",
                                        "n_members": "100", "n_nonmembers": "100"}, headers=page)
    if text != "\u00a01":  # a no-break space between counts separates them, as any space does
        assert r.status_code == 422 and "true positives must be comma-separated numbers" in r.text


#: A job that keeps the one heavy worker busy while the second request arrives: ~1.2 s warm on
#: the 2-core Xeon (120 repetitions took 0.33 s there once issue 27 made composition faster, a
#: thin margin over the 20 ms polling of the test below).
QUEUE_HEAVY = {"mechanism": {"kind": "repeated", "times": 500, "inner": HEAVY["mechanism"]["inner"]},
               "discretization": HEAVY["discretization"]}


def test_full_queue_answers_503_with_retry_after():
    app = create_app(Limits(heavy_workers=1, heavy_queue=0, light_work=0.0))
    with TestClient(app) as c:
        results: list[int] = []

        def post():
            results.append(c.post("/api/report", json=QUEUE_HEAVY).status_code)

        t = threading.Thread(target=post)
        t.start()
        deadline = time.monotonic() + 60
        while app.state.pools["heavy"].pending == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        r = c.post("/api/report", json=QUEUE_HEAVY)
        assert r.status_code == 503 and r.headers["Retry-After"].isdigit()
        _assert_headers(r)
        t.join(timeout=300)
        assert results and results[0] in (200, 422)  # done, or stopped at the time limit (busy machine)


# --------------------------------------------------------------------------------------
# a real server on 127.0.0.1 (the shared serve_app / serve_process fixtures, tests/conftest.py)
# --------------------------------------------------------------------------------------
def _rss(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def _p95(values: list[float]) -> float:
    values = sorted(values)
    return values[int(0.95 * (len(values) - 1))]


def test_a_shuffled_report_with_a_costly_comparison_takes_the_heavy_lane():
    # the guarantee is a closed form (cost 0), but its Poisson comparison (not a guarantee)
    # is about 1.4e7 of work (~1 s, over light_work = 1e7; 60 epochs are 0.7 s since the cost
    # model's refit, the light lane's): once counted as free, it ran in the light lane; the
    # CPU ticks of each lane's workers show where it ran
    from fdpkit.guarantee.setting import comparison_work
    from fdpkit.mechanisms import mechanism_from_dict

    body = {"noise_multiplier": 0.6, "batch_size": 5000, "dataset_size": 10000, "epochs": 150,
            "sampling": "shuffled", "relation": "replace-one"}
    spec = {"kind": "dpsgd", **body}
    assert comparison_work(mechanism_from_dict(spec), None, Limits().budget) > Limits().light_work
    # warming pools (as `fdpkit serve` has): the workers' start-up is done before the ticks are
    # read (a pool that does not warm reports 0 warmed workers, and the wait ran to its end)
    app = create_app(Limits(workers=1, heavy_workers=1, warm_workers=True))
    with TestClient(app) as c:
        pools = app.state.pools
        deadline = time.monotonic() + 120
        while (pools["light"].warmed() < 1 or pools["heavy"].warmed() < 1) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pools["light"].warmed() >= 1 and pools["heavy"].warmed() >= 1
        before = {lane: {p: _cpu_ticks(p) for p in pool.pids()} for lane, pool in pools.items()}
        r = c.post("/api/report/dpsgd", json=body)
        assert r.status_code == 200, r.text[:300]
        assert r.json()["comparison"] is not None
        spent = {lane: sum(_cpu_ticks(p) - t for p, t in ticks.items() if os.path.exists(f"/proc/{p}"))
                 for lane, ticks in before.items()}
    assert spent["heavy"] >= 30 and spent["light"] < spent["heavy"] / 3, spent


def test_heavy_request_takes_the_heavy_lane():
    from fdpkit.accounting import estimate_cost
    from fdpkit.mechanisms import mechanism_from_dict

    work = estimate_cost(mechanism_from_dict(HEAVY["mechanism"]), HEAVY["discretization"]).work
    assert Limits().light_work < work <= Limits().budget.max_work


@pytest.mark.serial
def test_load_heavy_and_light_at_once(serve_process):
    """6 heavy requests (the heavy lane at its limit) and 50 light ones at once, against the
    issue's thresholds as they are: light p95 <= 2 s, /healthz never blocked > 0.5 s, the
    server's RSS back within 1.5x of idle, no CPU busy 5 s after the last response.

    Marked ``serial``: ``make test`` runs it after the parallel part, with nothing else
    running, so the thresholds hold on the 2-core machine (under ``pytest -n 2`` the other
    test worker would compete for the CPU with the event loop's thread)."""
    with serve_process() as srv:  # `fdpkit serve` in its own process (tests/conftest.py)
        def probe(stop: threading.Event, gaps: list[float]) -> None:
            with httpx.Client(base_url=srv.url, timeout=60) as client:
                while not stop.is_set():
                    t0 = time.monotonic()
                    assert client.get("/healthz").status_code == 200
                    gaps.append(time.monotonic() - t0)
                    time.sleep(PROBE_EVERY_S)

        def with_probe(work):
            stop, gaps = threading.Event(), []
            prober = threading.Thread(target=probe, args=(stop, gaps))
            prober.start()
            try:
                return asyncio.run(work()), gaps
            finally:
                stop.set()
                prober.join()

        # Idle connections expire on the client (1 s) well before the server's keep-alive
        # (5 s): reusing one the server is closing at that instant is a client-side race
        # (a ReadError on a POST, which httpx does not retry), not what is tested here.
        pool = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=1.0)

        async def timed(client, path, body):
            t0 = time.monotonic()
            r = await client.post(path, json=body)
            return r.status_code, time.monotonic() - t0

        async def light_only(client=None):
            if client is None:
                async with httpx.AsyncClient(base_url=srv.url, timeout=300, limits=pool) as client:
                    return await light_only(client)
            return await asyncio.gather(*(timed(client, *LIGHT_PATHS[i % 3]) for i in range(50)))

        async def heavy_and_light():
            async with httpx.AsyncClient(base_url=srv.url, timeout=300, limits=pool) as client:
                heavy = [asyncio.create_task(timed(client, "/api/report", HEAVY)) for _ in range(6)]
                await asyncio.sleep(0.5)
                light = await light_only(client)
                return light, await asyncio.gather(*heavy)

        async def warm():  # two at once: both light workers import fdpkit before anything is timed
            async with httpx.AsyncClient(base_url=srv.url, timeout=300) as client:
                await asyncio.gather(*(client.post("/api/report", json=LIGHT_PATHS[2][1]) for _ in range(2)))

        asyncio.run(warm())
        idle_rss = _rss(srv.proc.pid)
        idle, idle_gaps = with_probe(light_only)
        (light, heavy), gaps = with_probe(heavy_and_light)
        assert all(s == 200 for s, _ in idle + light), light
        assert all(s in (200, 422, 503) for s, _ in heavy), heavy  # 422: stopped at the time limit
        p95 = _p95([t for _, t in light])
        worst = max(gaps)
        rss = _rss(srv.proc.pid)
        print(f"\nload: light p95 {p95:.2f} s (idle p95 {_p95([t for _, t in idle]):.2f} s), worst /healthz "
              f"{worst:.3f} s (idle worst {max(idle_gaps):.3f} s, {len(gaps)} probes), heavy "
              f"{sorted(s for s, _ in heavy)}, server RSS {rss / 2**20:.0f} MiB (idle {idle_rss / 2**20:.0f} MiB)")
        assert p95 <= LIGHT_P95_S, f"light p95 {p95:.2f} s"
        assert worst <= HEALTHZ_BLOCK_S, f"/healthz blocked {worst:.2f} s (slowest: {sorted(gaps)[-5:]})"
        assert rss <= RSS_RATIO * idle_rss, f"server RSS {rss / 2**20:.0f} MiB, idle {idle_rss / 2**20:.0f} MiB"
        # no CPU still busy 5 s after the last response: the server and its workers idle from then on
        time.sleep(5)
        before = {p: _cpu_ticks(p) for p in srv.pids() if os.path.exists(f"/proc/{p}")}
        time.sleep(2)
        after = {p: _cpu_ticks(p) for p in before if os.path.exists(f"/proc/{p}")}
        busy = {p: after[p] - before[p] for p in after}
        assert all(t <= 20 for t in busy.values()), f"CPU ticks per process 5-7 s after the last response: {busy}"


@pytest.mark.serial
def test_slow_clients_are_dropped_while_healthz_answers(serve_app):
    """200 trickling sockets are closed by the server within its request deadline (as seen
    by a polling loop: CLOSE_SEEN_S later at most) while /healthz keeps answering. Marked
    ``serial`` (timing-sensitive: run alone)."""
    limits = Limits(request_timeout_s=REQUEST_TIMEOUT_S)
    with serve_app(create_app(limits)) as url:  # the shared live server (tests/conftest.py)
        port = urlparse(url).port
        socks = []
        for i in range(TRICKLERS):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"POST /api/convert HTTP/1.1\r\nHost: x\r\n" if i % 2 else b"GET /healthz HTTP/1.1\r\n")
            socks.append(s)
        start = time.monotonic()
        closed = [False] * TRICKLERS
        healthz: list[int] = []
        waits: list[float] = []
        with httpx.Client(base_url=url, timeout=5) as client:
            while not all(closed) and time.monotonic() - start < REQUEST_TIMEOUT_S * 5:
                for i, s in enumerate(socks):
                    if closed[i]:
                        continue
                    try:
                        s.sendall(b"X")  # one byte at a time, never finishing the request
                        s.settimeout(0.0)
                        if s.recv(1024) == b"":
                            closed[i] = time.monotonic() - start
                    except BlockingIOError:
                        pass
                    except OSError:
                        closed[i] = time.monotonic() - start
                t0 = time.monotonic()
                healthz.append(client.get("/healthz").status_code)
                waits.append(time.monotonic() - t0)
                time.sleep(0.2)
        elapsed = time.monotonic() - start
        for s in socks:
            s.close()
        print(f"\nslow clients: last closed after {max(c or 0 for c in closed):.2f} s (deadline "
              f"{REQUEST_TIMEOUT_S} s), worst /healthz {max(waits):.3f} s over {len(waits)} probes")
        assert all(closed), f"{closed.count(False)} of {TRICKLERS} trickling sockets still open after {elapsed:.1f} s"
        assert max(closed) <= REQUEST_TIMEOUT_S + CLOSE_SEEN_S, f"last socket closed after {max(closed):.2f} s"
        assert healthz and all(c == 200 for c in healthz)
