# Quick start: `make run` and `make test`. Both bootstrap .venv from nothing.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.fdpkit-installed

.PHONY: run test report bench clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[cli,report,web,dev]'
	@touch $(STAMP)

run: $(STAMP)
	$(PY) -m fdpkit.examples

test: $(STAMP)
	$(PY) -m pytest

clean:
	rm -rf $(VENV) out build *.egg-info src/*.egg-info
