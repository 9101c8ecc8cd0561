# Quick start: `make run` and `make test`. Both bootstrap .venv from nothing.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.fdpkit-installed

HEADLINE := dpsgd --noise-multiplier 9.4 --sample-rate 0.32768 --steps 2000

.PHONY: run test report bench clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[cli,report,web,ledger,sweep,opacus,dev]'
	@touch $(STAMP)

# The main job: the web calculator on http://127.0.0.1:8000/ (Ctrl-C to stop);
# `make run PORT=8080` for another port.
PORT ?= 8000
HOST ?= 127.0.0.1
run: $(STAMP)
	@$(PY) -m fdpkit.cli serve --host $(HOST) --port $(PORT)

# The headline DP-SGD example (Gomez et al. Sec. 5): on screen, and as HTML and PDF in out/.
report: $(STAMP)
	$(PY) -m fdpkit.cli report $(HEADLINE)
	$(PY) -m fdpkit.cli --quiet report $(HEADLINE) --format html --output out/report.html
	$(PY) -m fdpkit.cli --quiet report $(HEADLINE) --format pdf --output out/report.pdf
	@echo "wrote out/report.html and out/report.pdf"

# Benchmarks against dp_accounting, riskcal and gdpnum (their own venv in benchmarks/.venv).
bench:
	bash benchmarks/setup_env.sh
	benchmarks/.venv/bin/python benchmarks/all.py

# Two parts: everything in parallel, then the `serial` tests (timing-sensitive load tests
# that need the machine to themselves) in one process with nothing else running.
test: $(STAMP)
	$(PY) -m pytest -n 2 -m "not serial"
	$(PY) -m pytest -m serial tests

clean:
	rm -rf $(VENV) out build *.egg-info src/*.egg-info
