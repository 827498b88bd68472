"""`make bench-explorer`: the graph explorer's time to first draw on a 2,000-entity graph, in Chromium.

Builds a synthetic private graph (2,000 entities: 20 documents of 99 entities each plus 20 hubs every document
mentions; about 5,000 relations, preferential so some entities are far better connected than others) in a throwaway
embedded FalkorDB and SQLite database, serves the real ASGI app (uvicorn), and opens the explorer page in headless
Chromium (Debian's /usr/bin/chromium, Playwright) with no entity asked for, so it draws the overview: the N most
connected entities and the relations among them, laid out by cytoscape-fcose. For N = 150 (the default), 500 and
2,000 (everything), BENCH_RUNS times each (a fresh page each time), it reads what static/js/explorer.js records on
#cy once the laid-out overview is first drawn:

- first draw: milliseconds from the page's navigation start (HTML, scripts, the overview API call, the layout and
  the first frame), the time a user waits;
- overview: milliseconds from the overview request to that frame (the API call, fcose and the first frame).

and, separately, the overview API alone (GET /api/v1/graphs/{id}/overview/?limit=N, same session). Medians and the
worst run. Results: bench/results/explorer.json and explorer.md.
"""

from __future__ import annotations

import json
import os
import random
import socket
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# bench/ itself off the path: its mcp.py would shadow the mcp package the ASGI app imports.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

from bench.common import start_services  # noqa: E402

N_DOCUMENTS = 20
OWN_PER_DOCUMENT = 99
N_HUBS = 20
SIZES = [150, 500, 2000]
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
SEED = 20261203
RESULTS = ROOT / "bench" / "results"
CHROMIUM = os.environ.get("BENCH_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run"]
TYPES = ["PERSON", "ORGANIZATION", "LOCATION", "CONCEPT", "EVENT", "PRODUCT"]


def main() -> int:
    server, tmp = start_services("exo-bench-explorer-")
    try:
        return run(tmp)
    finally:
        if server is not None:
            server.stop()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(tmp: Path) -> int:
    import django

    django.setup()
    from django.db import connection

    connection.settings_dict["TEST"]["NAME"] = str(tmp / "bench.sqlite3")
    connection.creation.create_test_db(verbosity=0, keepdb=False)
    graph, user, built = _build()
    figures = _measure(graph, user)
    figures["graph"] = built
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "explorer.json").write_text(json.dumps(figures, indent=2) + "\n")
    (RESULTS / "explorer.md").write_text(_markdown(figures))
    print(_markdown(figures))
    return 0


def _unit(rng: random.Random, dimension: int) -> list[float]:
    values = [rng.gauss(0, 1) for _ in range(dimension)]
    norm = sum(v * v for v in values) ** 0.5
    return [v / norm for v in values]


def _build() -> tuple[Any, Any, dict[str, Any]]:
    from exograph.accounts.services import user_create
    from exograph.core.scope import Scope
    from exograph.graphs import store
    from exograph.graphs.embeddings import get_embedder
    from exograph.graphs.services import graph_create, graph_document_write
    from exograph.graphs.types import ChunkIn, EntityIn, MentionIn, RelationIn

    rng = random.Random(SEED)
    dimension = get_embedder().dimension
    user = user_create(email="bench-explorer@example.com", password=None, email_verified=True)
    graph = graph_create(actor=user, name="Bench 2,000", scope=Scope.PRIVATE)
    hubs = [(f"Hub {i:02d}", TYPES[i % len(TYPES)]) for i in range(N_HUBS)]
    vectors: dict[str, list[float]] = {}
    started = time.perf_counter()
    relations_written = 0
    for d in range(N_DOCUMENTS):
        own = [(f"Entity {d:02d}-{i:03d}", rng.choice(TYPES)) for i in range(OWN_PER_DOCUMENT)]
        members = own + hubs
        types = dict(members)
        chunk_id = f"bench{d:02d}:0"
        chunk = ChunkIn(id=chunk_id, text=f"Document {d}.", page=1, ordinal=0, embedding=_unit(rng, dimension))
        entities = [
            EntityIn(name=name, type=kind, embedding=vectors.setdefault(name, _unit(rng, dimension)))
            for name, kind in members
        ]
        # Preferential attachment: each entity links to 2 or 3 earlier ones, picked in proportion to their links.
        weight = {name: 1 for name, _ in hubs}
        pairs: set[tuple[str, str]] = set()
        for name, _ in own:
            for _ in range(rng.choice((2, 2, 3))):
                names = list(weight)
                other = rng.choices(names, weights=[weight[n] for n in names])[0]
                if other != name:
                    pairs.add((name, other))
                    weight[other] += 1
            weight[name] = 1
        relations = [
            RelationIn(source_name=a, source_type=types[a], target_name=b, target_type=types[b],
                       type=rng.choice(("works_with", "part_of", "related_to", "located_in", "uses")),
                       chunk_ids=(chunk_id,))
            for a, b in sorted(pairs)
        ]  # fmt: skip
        relations_written += len(relations)
        graph_document_write(
            graph=graph,
            document_id=f"bench{d:02d}",
            filename=f"bench-{d:02d}.pdf",
            contributor=user,
            chunks=[chunk],
            entities=entities,
            mentions=[MentionIn(chunk_id=chunk_id, entity_name=n, entity_type=k) for n, k in members],
            relations=relations,
        )
    entities = store.ro_query(graph.store_name, "MATCH (e:Entity) RETURN count(e)")[0][0]
    edges = store.ro_query(graph.store_name, "MATCH (:Entity)-[r]->(:Entity) RETURN count(r)")[0][0]
    built = {
        "entities": int(entities),
        "relations": int(edges),
        "build_seconds": round(time.perf_counter() - started, 1),
    }
    print("built:", built, flush=True)
    return graph, user, built


def _measure(graph: Any, user: Any) -> dict[str, Any]:
    import httpx
    import uvicorn
    from django.test import Client
    from playwright.sync_api import sync_playwright

    from exograph.asgi import application

    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # Playwright's sync API runs an event loop in this thread
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    server = uvicorn.Server(
        uvicorn.Config(application, host="127.0.0.1", port=port, lifespan="off", log_level="warning", log_config=None)
    )
    thread = threading.Thread(target=server.run, name="bench-uvicorn", daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    client = Client()
    client.force_login(user)
    session = client.cookies["sessionid"].value
    results: dict[str, Any] = {"runs": RUNS, "sizes": {}}
    try:
        with httpx.Client(base_url=base, cookies={"sessionid": session}, timeout=120) as http:
            api: dict[int, list[float]] = {}
            for size in SIZES:
                http.get(f"/api/v1/graphs/{graph.id}/overview/", params={"limit": size})  # warm
                for _ in range(RUNS):
                    t0 = time.perf_counter()
                    response = http.get(f"/api/v1/graphs/{graph.id}/overview/", params={"limit": size})
                    api.setdefault(size, []).append((time.perf_counter() - t0) * 1000)
                    response.raise_for_status()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            try:
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                context.add_cookies([{"name": "sessionid", "value": session, "url": base}])
                for size in SIZES:
                    first, overview, drawn = [], [], 0
                    for _ in range(RUNS):
                        page = context.new_page()
                        page.set_default_timeout(300_000)
                        errors: list[str] = []
                        page.on("console", lambda m, errors=errors: m.type == "error" and errors.append(m.text))
                        page.goto(f"{base}/graphs/{graph.id}/explore/?size={size}")
                        box = page.locator("#cy[data-first-draw]")
                        box.wait_for(state="attached")
                        first.append(float(box.get_attribute("data-first-draw") or 0))
                        overview.append(float(box.get_attribute("data-draw-ms") or 0))
                        drawn = int(box.get_attribute("data-nodes") or 0)
                        phases = box.get_attribute("data-phases") or ""
                        assert not errors, errors
                        page.close()
                    results["sizes"][str(size)] = {
                        "nodes_drawn": drawn,
                        "first_draw_ms_median": round(statistics.median(first)),
                        "first_draw_ms_worst": round(max(first)),
                        "overview_ms_median": round(statistics.median(overview)),
                        "api_ms_median": round(statistics.median(api[size])),
                        "last_run_phases_ms": phases,
                    }
                    print(size, results["sizes"][str(size)], flush=True)
            finally:
                browser.close()
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    results["cpu"] = os.cpu_count()
    results["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return results


def _markdown(figures: dict[str, Any]) -> str:
    g = figures["graph"]
    lines = [
        "# Explorer: time to first draw (`make bench-explorer`)",
        "",
        f"Graph: {g['entities']:,} entities, {g['relations']:,} relations (built in {g['build_seconds']} s). "
        f"Headless Chromium at 1280x900, {figures['runs']} runs per size, {figures['cpu']} CPUs "
        f"(load average {figures['load_average'][0]} at the end: the machine is shared).",
        "",
        "| overview size | nodes drawn | first draw, median (ms) | worst (ms) | request to frame, median (ms) | API alone, median (ms) |",
        "|---|---|---|---|---|---|",
    ]
    for size, row in figures["sizes"].items():
        lines.append(
            f"| {size} | {row['nodes_drawn']} | {row['first_draw_ms_median']} | {row['first_draw_ms_worst']} | "
            f"{row['overview_ms_median']} | {row['api_ms_median']} |"
        )
    lines += [
        "",
        "First draw: from the page's navigation start to the first frame of the laid-out overview (fcose).",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
