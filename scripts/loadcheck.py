"""Bounded load check of the web calculator on loopback only.

Starts the app with uvicorn on 127.0.0.1 (a free port), sends ``--requests`` report requests
with ``--concurrency`` in flight at once, and prints errors and latency percentiles. Every
request goes to 127.0.0.1; the loop is bounded in count and time and stops by itself.

    python scripts/loadcheck.py --requests 50 --concurrency 50
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import sys
import threading
import time

import httpx
import uvicorn

from fdpkit.web.main import create_app

BODY = {"noise_multiplier": 2.0, "sample_rate": 0.05, "steps": 100, "discretization": 1e-3}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _run(url: str, n: int, concurrency: int, deadline_s: float) -> tuple[list[float], list[str]]:
    sem = asyncio.Semaphore(concurrency)
    latencies: list[float] = []
    errors: list[str] = []
    stop = time.monotonic() + deadline_s
    async with httpx.AsyncClient(base_url=url, timeout=deadline_s) as client:
        async def one(i: int) -> None:
            async with sem:
                if time.monotonic() > stop:
                    errors.append(f"request {i}: not sent (time budget spent)")
                    return
                t0 = time.perf_counter()
                try:
                    r = await client.post("/api/report/dpsgd", json=BODY)
                    if r.status_code != 200:
                        errors.append(f"request {i}: HTTP {r.status_code}")
                except httpx.HTTPError as exc:
                    errors.append(f"request {i}: {type(exc).__name__}")
                latencies.append(time.perf_counter() - t0)

        await asyncio.gather(*(one(i) for i in range(n)))
    return latencies, errors


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=50)
    ap.add_argument("--concurrency", type=int, default=50)
    ap.add_argument("--deadline", type=float, default=120.0, help="total time budget in seconds")
    args = ap.parse_args(argv)
    if not (1 <= args.requests <= 1000 and 1 <= args.concurrency <= 200):
        ap.error("requests must be in [1, 1000] and concurrency in [1, 200]")
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        t0 = time.perf_counter()
        lat, errors = asyncio.run(_run(f"http://127.0.0.1:{port}", args.requests, args.concurrency, args.deadline))
        wall = time.perf_counter() - t0
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    q = statistics.quantiles(lat, n=100) if len(lat) >= 2 else [lat[0]] * 99 if lat else [float("nan")] * 99
    print(f"{args.requests} requests, concurrency {args.concurrency}, {len(errors)} errors, wall {wall:.2f} s")
    print(f"latency p50 {q[49]:.3f} s, p90 {q[89]:.3f} s, p99 {q[98]:.3f} s, max {max(lat) if lat else float('nan'):.3f} s")
    for e in errors[:10]:
        print("  " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
