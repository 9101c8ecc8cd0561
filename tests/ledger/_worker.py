"""Subprocess body of the reliability tests: record N releases into a ledger.

python _worker.py URL DATASET N TAG REPORT(0/1) [PROGRESS_FILE]
"""

import sys

from fdpkit.ledger import open_ledger


def main() -> None:
    url, dataset, n, tag, report = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5] == "1"
    progress = sys.argv[6] if len(sys.argv) > 6 else None
    led = open_ledger(url, upgrade=False)
    print("ready", flush=True)
    for i in range(n):
        led.record(dataset, {"kind": "gaussian", "sigma": 50.0 + (i % 7)}, title=f"{tag}-{i}", user=tag,
                   approver=f"{tag}-approver", report=report)
        if progress:
            with open(progress, "a") as fh:
                fh.write(f"{i}\n")
    led.close()


if __name__ == "__main__":
    main()
