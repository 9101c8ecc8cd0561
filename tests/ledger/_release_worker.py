"""Subprocess body of the hard-limit race test: release approved releases, in order.

python _release_worker.py URL USER ID [ID ...]

Prints "ready", waits for the file named by LEDGER_WORKER_GO, then releases each id as USER;
a refusal (the hard limit, a release the other writer released first) is printed as
"refused ID" and the next id is tried; a release that went through is printed "released ID".
"""

import os
import sys
import time

from fdpkit.ledger import open_ledger
from fdpkit.ledger.rules import LedgerError


def main() -> None:
    url, user, ids = sys.argv[1], sys.argv[2], [int(a) for a in sys.argv[3:]]
    led = open_ledger(url, upgrade=False)
    print("ready", flush=True)
    go = os.environ["LEDGER_WORKER_GO"]
    while not os.path.exists(go):
        time.sleep(0.005)
    for rid in ids:
        try:
            led.release(rid, user=user)
            print(f"released {rid}", flush=True)
        except LedgerError as exc:
            print(f"refused {rid}: {exc}", flush=True)
    led.close()


if __name__ == "__main__":
    main()
