# ExoGraph. `make run` serves the embedded default; `make test` runs the whole suite.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test test-faults lint typecheck migrations-check pytest bench-graph bench-ingest bench-billing bench-retrieval bench-mcp bench-load bench-chat clean

$(STAMP): requirements.txt requirements-dev.txt constraints.txt pyproject.toml package.json package-lock.json
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, alone: the CPU build (sentence-transformers would otherwise pull a CUDA build).
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -r requirements-dev.txt -c constraints.txt
	# The project itself, editable and without dependencies: puts the `exograph-mcp` console script in .venv/bin.
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	# Front-end packages (htmx, cytoscape) from the npm registry; Django serves their dist files.
	npm ci --no-audit --no-fund
	# The local embedding model's ONNX export for search queries, once per venv (~15 s; a no-op when it is there).
	# If it fails, queries embed with torch (slower, same vectors): the venv is still usable.
	EXOGRAPH_VAR_DIR=$$(mktemp -d) DATABASE_URL= $(PY) manage.py embedding_onnx_build \
		|| echo "WARNING: ONNX export failed; search queries will embed with torch"
	@touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(PY) scripts/run.py

test: $(STAMP) lint migrations-check typecheck pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

migrations-check: $(STAMP)
	EXOGRAPH_VAR_DIR=$$(mktemp -d) DATABASE_URL= $(PY) manage.py makemigrations --check --dry-run

typecheck: $(STAMP)
	EXOGRAPH_VAR_DIR=$$(mktemp -d) $(VENV)/bin/mypy exograph/core exograph/accounts exograph/graphs exograph/documents exograph/chat exograph/sources billing mcp_bridge research

pytest: $(STAMP)
	$(VENV)/bin/pytest $(PYTEST_ARGS)

# The fault tests alone (kill/restart worker, broker, graph store, `make run`'s children; ~5 min, loopback only).
# `make test` runs them too: they live in tests/faults/, inside pytest's default run.
test-faults: $(STAMP)
	$(VENV)/bin/pytest -m faults tests/faults $(PYTEST_ARGS)

bench-graph: $(STAMP)
	$(PY) bench/graph.py

bench-ingest: $(STAMP)
	$(PY) bench/ingest.py

bench-billing: $(STAMP)
	$(PY) bench/billing.py

bench-retrieval: $(STAMP)
	$(PY) bench/retrieval.py $(BENCH_ARGS)

bench-mcp: $(STAMP)
	$(PY) bench/mcp.py

# 50 API clients for 60 s against uvicorn + real worker(s) on PostgreSQL (BENCH_DATABASE_URL), then with 2 workers.
bench-load: $(STAMP)
	nice $(PY) bench/load.py

bench-chat: $(STAMP)
	$(PY) bench/chat.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
