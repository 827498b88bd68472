# ExoGraph. `make run` serves the embedded default; `make test` runs the whole suite.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test test-faults lint typecheck migrations-check pytest pytest-sqlite bench-graph bench-ingest bench-billing bench-retrieval bench-mcp bench-load bench-chat bench-explorer bench-scale clean

$(STAMP): requirements.txt requirements-dev.txt constraints.txt pyproject.toml clients/python/pyproject.toml package.json package-lock.json
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, alone: the CPU build (sentence-transformers would otherwise pull a CUDA build).
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -r requirements-dev.txt -c constraints.txt
	# The project itself, editable and without dependencies: puts the `exograph-mcp` console script in .venv/bin.
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	# The Python client (clients/python, import exograph_client): the MCP bridge's REST client; its tests too.
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e clients/python
	# Its graphrag extra's library, without its declared dependencies: neo4j-graphrag 1.22.0 caps pypdf <7 and
	# fsspec <2026.9 for its document loaders, which its retrievers and GraphRAG never import; the dependencies
	# they do import (neo4j, json-repair, tenacity) are pinned in requirements-dev.txt (tests/clients/test_graphrag.py).
	$(PY) -m pip install --quiet --no-deps neo4j-graphrag==1.22.0
	# Front-end packages (htmx, cytoscape) from the npm registry; Django serves their dist files.
	npm ci --no-audit --no-fund --omit=optional
	# The local embedding model's ONNX export for search queries, once per venv (~15 s; a no-op when it is there).
	# If it fails, queries embed with torch (slower, same vectors): the venv is still usable.
	EXOGRAPH_VAR_DIR=$$(mktemp -d) DATABASE_URL= $(PY) manage.py embedding_onnx_build \
		|| echo "WARNING: ONNX export failed; search queries will embed with torch"
	@touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(PY) scripts/run.py

test: $(STAMP) lint migrations-check typecheck pytest pytest-sqlite

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

migrations-check: $(STAMP)
	EXOGRAPH_VAR_DIR=$$(mktemp -d) DATABASE_URL= $(PY) manage.py makemigrations --check --dry-run

typecheck: $(STAMP)
	EXOGRAPH_VAR_DIR=$$(mktemp -d) $(VENV)/bin/mypy exograph/core exograph/accounts exograph/graphs exograph/documents exograph/chat exograph/sources exograph/home billing mcp_bridge research clients/python/exograph_client

# Both passes run on pytest-xdist: a module at a time per worker process (its module fixtures stay whole); each
# worker has its own test database, FalkorDB and Redis databases (tests/services_plugin.py). PYTEST_WORKERS=0 runs
# in this process, one test at a time.
PYTEST_WORKERS ?= 2
XDIST := $(if $(filter 0,$(PYTEST_WORKERS)),,-n $(PYTEST_WORKERS) --dist loadfile)
pytest: $(STAMP)
	$(VENV)/bin/pytest $(XDIST) $(PYTEST_ARGS)

# CI's pass above runs on PostgreSQL (DATABASE_URL); `make run` serves SQLite. The service-level tests of the
# apps whose queries SQLite treats differently (unions, select_for_update, JSON fields, concurrent writers, leases)
# run a second time on SQLite and the session's own embedded Redis; the embedded suite (tests/e2e) covers the
# worker, browser and whole-product paths on SQLite already. Skipped when the pass above ran on SQLite.
# pg_only would mark a test that needs PostgreSQL's row locks between connections (none does today).
SQLITE_TESTS := tests/billing tests/accounts tests/research \
	tests/chat/test_api.py tests/chat/test_faults.py tests/chat/test_views.py tests/chat/test_web.py \
	tests/graphs/test_services.py tests/graphs/test_world_unmerge.py tests/graphs/test_api.py \
	tests/graphs/test_isolation.py tests/graphs/test_views.py \
	tests/documents/test_api.py tests/documents/test_text_ingest.py tests/documents/test_text_batch.py \
	tests/documents/test_isolation.py tests/documents/test_pipeline_faults.py \
	tests/faults/test_leases.py tests/faults/test_research_lease.py
pytest-sqlite: $(STAMP)
	@if [ -z "$$DATABASE_URL" ]; then echo "pytest-sqlite: skipped, the pytest pass ran on SQLite"; else \
		env -u DATABASE_URL -u REDIS_URL $(VENV)/bin/pytest -p no:cacheprovider \
			-m "not pg_only and not worker and not browser and not embedded" $(SQLITE_TESTS) $(XDIST) $(PYTEST_ARGS); fi

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

# The World Graph at 100k ... 1M entities (3M relations, MiniLM vectors cached in bench/.cache/scale/) in one run:
# search_entities / get_world_graph p50/p95, recall@10, store memory, ingest with 1 and 2 workers (docs/scaling.md).
# Loading runs at nice 10; the timed phases raise themselves to nice 0. BENCH_SCALE_ENTITIES for a smaller run.
bench-scale: $(STAMP)
	nice -n 10 $(PY) bench/scale.py

# The graph explorer's time to first draw on a 2,000-entity graph, in headless Chromium (/usr/bin/chromium).
bench-explorer: $(STAMP)
	$(PY) bench/explorer.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
