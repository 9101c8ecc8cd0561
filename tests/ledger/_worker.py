"""Subprocess body of the reliability tests: record N releases into a ledger.

python _worker.py URL DATASET N TAG REPORT(0/1) [PROGRESS_FILE]

Release i adds a Gaussian of noise SIGMA0 + (i % 7), SIGMA0 from the environment variable
LEDGER_WORKER_SIGMA0 (default 50). With LEDGER_WORKER_GO set, the worker prints "ready" and
waits for that file to exist before it writes (a start line shared by concurrent writers).
"""

import os
import sys
import time

from fdpkit.ledger import open_ledger


def main() -> None:
    url, dataset, n, tag, report = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5] == "1"
    progress = sys.argv[6] if len(sys.argv) > 6 else None
    sigma0 = float(os.environ.get("LEDGER_WORKER_SIGMA0", "50"))
    led = open_ledger(url, upgrade=False)
    print("ready", flush=True)
    go = os.environ.get("LEDGER_WORKER_GO")
    while go and not os.path.exists(go):
        time.sleep(0.01)
    for i in range(n):
        led.record(dataset, {"kind": "gaussian", "sigma": sigma0 + (i % 7)}, title=f"{tag}-{i}", user=tag,
                   approver=f"{tag}-approver", report=report)
        if progress:
            with open(progress, "a") as fh:
                fh.write(f"{i}\n")
    led.close()


if __name__ == "__main__":
    main()
