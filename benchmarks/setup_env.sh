#!/usr/bin/env bash
# Creates benchmarks/.venv with fdpkit (editable) and the libraries it is compared with.
# riskcal and gdpnum are benchmark-only: never fdpkit dependencies.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
test -x .venv/bin/python || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e "..[cli,report,web,ledger,sweep]" httpx riskcal gdpnum
