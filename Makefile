# Quick start: `make run` and `make test`. Both bootstrap .venv from nothing.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.fdpkit-installed

HEADLINE := dpsgd --noise-multiplier 9.4 --sample-rate 0.32768 --steps 2000

.PHONY: run test test-fast lint docs docs-serve report bench clean system-deps

# Extra pytest options for every run of `make test` (.ci/run passes --durations=25).
PYTEST_ARGS ?=

# All extras, and a PostgreSQL driver for the ledger tests: fdpkit[postgres] needs psycopg but
# leaves the choice of its build to the user; the development venv takes the binary one.
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[cli,report,web,ledger,postgres,sweep,opacus,dev,docs]' 'psycopg[binary]>=3.1'
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

# The system packages the browser, PDF and PostgreSQL tests need (chromium, poppler-utils,
# postgresql): installed once with apt-get when allowed (root or passwordless sudo; the
# stamp records success), else one line says which command to run. Missing ones make
# those tests fail under CI (CI=true) and skip elsewhere (tests/_system.py).
SYSTEM_STAMP := $(VENV)/.fdpkit-system-deps
system-deps: $(SYSTEM_STAMP)
$(SYSTEM_STAMP): $(STAMP)
	@$(PY) tests/_system.py install $(SYSTEM_STAMP)

# Three parts: everything in parallel; the `serial` tests (timing-sensitive load tests
# that need the machine to themselves) in one process with nothing else running; and
# tests/accounting again with numpy's SIMD dispatch narrowed to its baseline loops
# (NPY_DISABLE_CPU_FEATURES, scripts/narrow_simd.py), so that no tolerance rests on one
# CPU's rounding (its `slow` reference runs, which ran in the first part, are left out
# there to keep `make test` within 15 minutes on 2 cores). `--dist worksteal`: each worker
# starts on one contiguous half of the suite and takes over half of the other's remaining
# tests when it runs out, so a module's tests stay on one worker (its module-scoped browser,
# live server or PostgreSQL database is set up once, not once per batch of `--dist load`)
# and the tail is at most one test long.
# The serial part collects only the files that mark tests `serial` (collecting all of tests/
# costs ~30 CPU seconds for 3 tests); tests/conftest.py fails if a serial test lives elsewhere.
# The SIMD-narrowed rerun's purpose is numeric portability: a tolerance that holds only with
# one CPU's summation order or exp/log kernels. Tests whose outcome cannot depend on numpy's
# rounding are left out of it (they ran in the first part): module layout and import cycles
# (entry_point), tree structure and dispatch (tree_walk, training_run_hook), the cost model's
# size estimates (cost), the adapter's attribute round trip (adapter), and the CLI/web/ledger
# plumbing tests whose numbers the kept tests already check under the narrowing.
SIMD_SKIP = $(foreach f,entry_point tree_walk training_run_hook cost adapter,\
	--ignore=tests/accounting/test_accounting_$(f).py) \
	-k "not test_cli_and_web_accept_the_event_json and not test_web_releases_and_ledger"
SERIAL_FILES = $(shell grep -rlE --include='test_*.py' 'mark\.serial' tests)
# lint (mypy, one core) and the docs build (mkdocs, one core) run side by side, their output kept
# apart (--output-sync): both pass or `make test` stops before the tests, as before.
test: $(STAMP) $(SYSTEM_STAMP)
	@$(MAKE) --no-print-directory -j2 --output-sync=target lint docs
	$(PY) -m pytest -n 2 --dist worksteal -m "not serial" $(PYTEST_ARGS)
	$(PY) -m pytest -m serial $(SERIAL_FILES) $(PYTEST_ARGS)
	NPY_DISABLE_CPU_FEATURES="$$($(PY) scripts/narrow_simd.py)" \
		$(PY) -m pytest -n 2 --dist worksteal -m "not serial and not slow" tests/accounting \
		$(SIMD_SKIP) $(PYTEST_ARGS)

# The inner loop while you work: `make test` less the browser, PostgreSQL, `serial` and `slow`
# tests (markers in pyproject.toml; tests/conftest.py marks the browser and PostgreSQL tests by
# the fixtures they use), on 2 workers, with no lint, docs build or SIMD rerun: a few minutes
# on 2 cores. `make test` (CI's .ci/run) still runs everything: run it before you push.
FAST_MARKERS := not browser and not serial and not slow and not postgres
test-fast: $(STAMP)
	$(PY) -m pytest -n 2 --dist worksteal -m "$(FAST_MARKERS)" $(PYTEST_ARGS)

# ruff and mypy on src/ (configured in pyproject.toml; strictness stated there), and
# import-linter: the layers contract of [tool.importlinter] (imports flow one way, issue 23).
lint: $(STAMP)
	$(VENV)/bin/ruff check src
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

# The documentation site (docs/ -> site/), strict: a broken reference or link fails.
# Plots are drawn by docs/hooks.py during the build; `make docs-serve` previews it.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve

clean:
	rm -rf $(VENV) out build site *.egg-info src/*.egg-info
