"""`make bench-load`: 50 concurrent API clients for 60 s of mixed calls against the real service, then again with a
second worker process.

The service as deployed, on loopback: uvicorn (exograph.asgi, one process) and `celery worker` process(es)
(prefork, 2 children each, like `make run`), on PostgreSQL (a database of its own, recreated each run:
BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/exo_bench_load) and a throwaway embedded
FalkorDB/Redis. Each client is its own account (pro plan: 600 requests/minute, so the limiter is not what is
measured) and loops over weighted calls: entity search, document list, document status, chat with the
extractive model (snap), and uploads of small fixture files (unique texts, two small PDFs).

After each phase: every upload must end processed or failed with a reason (waited for, bounded), zero 5xx,
and every account's balance must equal the sum of its ledger (and its held credits the sum of its holds).
Writes bench/results/load.json and prints the table (p50/p95 per endpoint, throughput, queue drain time).

BENCH_CLIENTS (50), BENCH_SECONDS (60), BENCH_PHASES ("1,2": worker processes per phase), BENCH_DRAIN_SECONDS (900).
Loads the machine: run it alone, under `nice`.

Faults inside the run: `--kill worker,redis` (or BENCH_KILL=worker,redis) SIGKILLs, in each phase, the first worker
process's group at 30% of the clients' time (a new worker is started 3 s later, as make run's supervisor does) and
the embedded redis-server (broker, cache, limiter, graph store; append-only file on, as make run's) at 60% (started
again on its data 3 s later); celery beat runs beside the workers for the lease sweep. Each phase then also counts
lost work: uploads not ending processed, or failed without a reason or without their charge refunded, and chat
charges neither answered (a stored, paid answer) nor refunded. Writes bench/results/load-faults.json instead.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import percentile, start_services  # noqa: E402

CLIENTS = int(os.environ.get("BENCH_CLIENTS", "50"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "60"))
PHASES = [int(n) for n in os.environ.get("BENCH_PHASES", "1,2").split(",") if n.strip()]
DRAIN_SECONDS = float(os.environ.get("BENCH_DRAIN_SECONDS", "900"))
FAULTS = ("worker", "redis")
DATABASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/exo_bench_load")
PORT = int(os.environ.get("BENCH_PORT", "8765"))
FIXTURES = ROOT.parent / "shared" / "fixtures" / "files"
PDFS = ("pdf/pp_multilang.pdf", "pdf/sf_pdflatex-4-pages.pdf")
# (operation, weight)
MIX = [("search", 30), ("list", 25), ("status", 15), ("chat", 22), ("upload_text", 6), ("upload_pdf", 2)]
QUESTIONS = ("Who discovered radium?", "What did Ada Lovelace write about?", "Where did Marie Curie work?")
TOPICS = (
    "Marie Curie discovered polonium and radium with Pierre Curie in Paris, at the University of Paris.",
    "Ada Lovelace wrote notes on the Analytical Engine designed by Charles Babbage in London.",
    "Alan Turing worked at Bletchley Park and wrote about computable numbers at the University of Cambridge.",
)


def _database_recreate(url: str) -> None:
    import psycopg

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin = urlunsplit((parts.scheme.replace("postgres", "postgresql", 1), parts.netloc, "/postgres", "", ""))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def _spawn(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(args, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)  # noqa: S603


def _stop(process: subprocess.Popen[bytes], signum: int = signal.SIGTERM, wait: float = 60) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signum)
    try:
        process.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def _worker(index: int, tmp: Path) -> subprocess.Popen[bytes]:
    return _spawn(
        [
            sys.executable, "-m", "celery", "-A", "exograph", "worker", "-l", "warning", "--concurrency", "2",
            "-Q", "default,ingest,research,billing", "--without-gossip", "--without-mingle",
            "-n", f"bench-load-{index}@%h",
        ],
        tmp / f"worker-{index}.log",
    )  # fmt: skip


def _beat(tmp: Path) -> subprocess.Popen[bytes]:
    """celery beat (the periodic jobs: the lease sweep that resumes interrupted work), as make run starts it."""
    return _spawn(
        [
            sys.executable, "-m", "celery", "-A", "exograph", "beat", "-l", "warning",
            "--schedule", str(tmp / "beat-schedule"), "--pidfile=",
        ],
        tmp / "beat.log",
    )  # fmt: skip


def _kills_from(argv: list[str]) -> tuple[str, ...]:
    """The faults to inject: --kill worker,redis (or BENCH_KILL); empty for a plain run."""
    spec = os.environ.get("BENCH_KILL", "")
    for i, arg in enumerate(argv):
        if arg.startswith("--kill="):
            spec = arg.split("=", 1)[1]
        elif arg == "--kill" and i + 1 < len(argv):
            spec = argv[i + 1]
    kills = tuple(k.strip() for k in spec.split(",") if k.strip())
    unknown = [k for k in kills if k not in FAULTS]
    if unknown:
        raise SystemExit(f"--kill: unknown {', '.join(unknown)}; choose from {', '.join(FAULTS)}")
    return kills


class Faults:
    """SIGKILLs the first worker at 30% of the phase and redis-server at 60%; each comes back 3 s later."""

    def __init__(self, kills: tuple[str, ...], server: Any, workers: list[subprocess.Popen[bytes]], tmp: Path) -> None:
        self.kills, self.server, self.workers, self.tmp = kills, server, workers, tmp
        self.events: list[str] = []

    async def run(self, started: float, phase: int) -> None:
        if "worker" in self.kills:
            await asyncio.sleep(max(0.0, started + SECONDS * 0.3 - time.monotonic()))
            victim = self.workers[0]
            os.killpg(victim.pid, signal.SIGKILL)  # the worker and its pool children, mid-stage
            await asyncio.to_thread(victim.wait, 10)
            self.events.append(f"worker SIGKILLed at {time.monotonic() - started:.1f} s")
            await asyncio.sleep(3)
            self.workers[0] = _worker(phase * 10 + 9, self.tmp)
            self.events.append(f"worker started again at {time.monotonic() - started:.1f} s")
        if "redis" in self.kills and self.server is not None:
            await asyncio.sleep(max(0.0, started + SECONDS * 0.6 - time.monotonic()))
            self.server.process.send_signal(signal.SIGKILL)  # broker, cache, limiter and graph store at once
            await asyncio.to_thread(self.server.process.wait, 10)
            self.events.append(f"redis-server SIGKILLed at {time.monotonic() - started:.1f} s")
            await asyncio.sleep(3)
            # Started from a pool thread: without outlive_parent its parent-death signal (per thread) would stop it
            # when asyncio.run ends that thread. main's finally stops it.
            self.server.outlive_parent = True
            await asyncio.to_thread(self.server.start)  # same data directory: back from its append-only file
            self.events.append(f"redis-server started again at {time.monotonic() - started:.1f} s")


def _lost_work(document_ids: set[str], user_ids: list[int]) -> dict[str, Any]:
    """Work that did not end: uploads not processed (nor failed with a reason and their charge refunded), chat
    charges with neither a paid stored answer nor a refund."""
    from django.db.models import Q, Sum

    from billing.models import CreditEntry
    from exograph.chat.models import ChatMessage
    from exograph.core.models import Lease
    from exograph.documents.models import Document, DocumentStatus

    docs = Document.objects.filter(pk__in=document_ids)
    unfinished = docs.exclude(status__in=(DocumentStatus.PROCESSED, DocumentStatus.FAILED)).count()
    kept = 0
    for document_id in docs.filter(status=DocumentStatus.FAILED).values_list("pk", flat=True):
        kept += bool(CreditEntry.objects.filter(reference__contains=str(document_id)).aggregate(t=Sum("amount"))["t"])
    chat = CreditEntry.objects.filter(account__user_id__in=user_ids, reference__icontains="chat")
    charges, refunds = chat.filter(kind="charge").count(), chat.filter(kind="refund").count()
    paid = (
        ChatMessage.objects.filter(session__owner_id__in=user_ids, role="assistant")
        .filter(Q(usage__credits__gt=0))
        .count()
    )
    return {
        "uploads_unfinished": unfinished,
        "uploads_failed_still_charged": kept,
        "chat_charges": charges,
        "chat_answers_paid": paid,
        "chat_refunds": refunds,
        "chat_charges_unresolved": charges - paid - refunds,
        "leases_left": Lease.objects.count(),
    }


def _accounts(phase: int, count: int = CLIENTS) -> list[tuple[int, str]]:
    from billing.models import CreditAccount
    from billing.services import credit_account_for, credits_grant_admin
    from exograph.accounts.services import api_key_create, user_create

    out = []
    for i in range(count):
        user = user_create(email=f"load-{phase}-{i}@bench.local", password=None, email_verified=True)
        credits_grant_admin(account=user, amount=5000, actor=None, note="bench-load")
        credit_account_for(user=user)
        CreditAccount.objects.filter(user=user).update(plan="pro")
        out.append((user.pk, api_key_create(actor=user, name="bench").secret))
    return out


class Stats:
    def __init__(self) -> None:
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.status: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
        self.errors: list[str] = []
        self.uploads: set[str] = set()


async def _client(index: int, key: str, base: str, deadline: float, stats: Stats, seed: int) -> None:
    import httpx

    rng = random.Random(seed)  # noqa: S311 (a load mix, not a secret)
    ops, weights = zip(*MIX, strict=True)
    mine: list[str] = []
    n = 0
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=120) as client:
        while time.monotonic() < deadline:
            op = rng.choices(ops, weights)[0]
            n += 1
            if op == "status" and not mine:
                op = "list"
            started = time.perf_counter()
            try:
                if op == "search":
                    response = await client.get(
                        "/api/v1/entities/search", params={"query": rng.choice(("Curie", "Lovelace", "Paris"))}
                    )
                elif op == "list":
                    response = await client.get("/api/v1/documents/")
                elif op == "status":
                    response = await client.get(f"/api/v1/documents/{rng.choice(mine)}/")
                elif op == "chat":
                    response = await client.post(
                        "/api/v1/chat/messages/",
                        json={"message": rng.choice(QUESTIONS), "model": "snap", "reasoning_engine": "rag"},
                    )
                elif op == "upload_text":
                    text = f"Load note {seed}-{n}. " + " ".join(rng.sample(TOPICS, 3)) * 3
                    response = await client.post("/api/v1/documents/", json={"text": text, "title": f"Note {seed}-{n}"})
                else:
                    name = rng.choice(PDFS)
                    data = {"file": (name.split("/")[-1], (FIXTURES / name).read_bytes(), "application/pdf")}
                    response = await client.post("/api/v1/documents/", files=data)
            except httpx.HTTPError as exc:
                stats.errors.append(f"{op}: {type(exc).__name__}")
                continue
            stats.latency[op].append((time.perf_counter() - started) * 1000)
            stats.status[op][response.status_code] += 1
            if response.status_code >= 500:
                stats.errors.append(f"{op}: {response.status_code} {response.text[:200]}")
            if op.startswith("upload") and response.status_code in (200, 201):
                document_id = response.json()["id"]
                stats.uploads.add(document_id)
                mine.append(document_id)


def _wait_drained(document_ids: set[str]) -> float:
    from exograph.documents.models import ACTIVE_STATUSES, Document

    started = time.monotonic()
    while time.monotonic() - started < DRAIN_SECONDS:
        if not Document.objects.filter(pk__in=document_ids, status__in=ACTIVE_STATUSES).exists():
            break
        time.sleep(2)
    return time.monotonic() - started


def _ledger_mismatches(user_ids: list[int]) -> list[str]:
    from django.db.models import Sum

    from billing.models import CreditAccount

    bad = []
    for account in CreditAccount.objects.filter(user_id__in=user_ids):
        sums = account.entries.aggregate(balance=Sum("amount"), held=Sum("held_change"))
        last = account.entries.order_by("-id").values_list("balance_after", flat=True).first()
        if (sums["balance"] or 0) != account.balance or (sums["held"] or 0) != account.held or last != account.balance:
            bad.append(
                f"account {account.pk}: balance {account.balance} held {account.held}, ledger {sums} last {last}"
            )
    return bad


def _phase(
    workers_count: int, phase: int, base: str, tmp: Path, kills: tuple[str, ...] = (), server: Any = None
) -> dict[str, Any]:
    from exograph.documents.models import Document, DocumentStatus

    accounts = _accounts(phase)
    workers = [_worker(phase * 10 + i, tmp) for i in range(workers_count)]
    beat = _beat(tmp) if kills else None
    time.sleep(8)  # the workers connect and load (the embedding model loads on their first embed)
    stats = Stats()
    faults = Faults(kills, server, workers, tmp)
    started = time.monotonic()
    deadline = started + SECONDS

    async def run_all() -> None:
        await asyncio.gather(
            *(_client(i, key, base, deadline, stats, seed=phase * 1000 + i) for i, (_, key) in enumerate(accounts)),
            faults.run(started, phase),
        )

    asyncio.run(run_all())
    elapsed = time.monotonic() - started
    drain = _wait_drained(stats.uploads)
    if kills:  # an interrupted chat's charge is refunded by the sweep within a lease TTL + a sweep interval
        time.sleep(60)
    lost = _lost_work(stats.uploads, [uid for uid, _ in accounts]) if kills else None
    for worker in workers:
        _stop(worker)
    if beat is not None:
        _stop(beat)
    docs = Document.objects.filter(pk__in=stats.uploads)
    by_status = {s: docs.filter(status=s).count() for s in DocumentStatus.values}
    unexplained = docs.filter(status=DocumentStatus.FAILED, failure_reason="").count()
    mismatches = _ledger_mismatches([uid for uid, _ in accounts])
    total = sum(len(v) for v in stats.latency.values())
    endpoints = {
        op: {
            "requests": len(values),
            "p50_ms": round(percentile(values, 50), 1),
            "p95_ms": round(percentile(values, 95), 1),
            "statuses": {str(k): v for k, v in sorted(stats.status[op].items())},
        }
        for op, values in sorted(stats.latency.items())
    }
    five = sum(v for op in stats.status.values() for code, v in op.items() if code >= 500)
    return {
        "worker_processes": workers_count,
        "clients": CLIENTS,
        "seconds": round(elapsed, 1),
        "requests": total,
        "throughput_rps": round(total / elapsed, 1),
        "endpoints": endpoints,
        "responses_5xx": five,
        "transport_errors": len([e for e in stats.errors if "HTTP" in e or "Error" in e]),
        "errors_sample": stats.errors[:10],
        "uploads": len(stats.uploads),
        "uploads_by_status": by_status,
        "failed_without_reason": unexplained,
        "drain_seconds": round(drain, 1),
        "ledger_mismatches": mismatches,
        **({"faults": faults.events, "lost_work": lost} if kills else {}),
    }


def main() -> int:
    kills = _kills_from(sys.argv[1:])
    server, tmp = start_services("exo-bench-load-", keep_database_url=False)
    if "redis" in kills and server is not None:  # persisted like make run's embedded store, to be killed mid-run
        server.stop()
        server.persist = True
        server.start()
    os.environ["DATABASE_URL"] = DATABASE_URL
    os.environ["EXOGRAPH_LOG_LEVEL"] = "warning"
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "0"
    os.environ["DJANGO_SECURE_COOKIES"] = "0"
    _database_recreate(DATABASE_URL)
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, check=True)  # noqa: S603
    import django

    django.setup()
    web = _spawn(
        [
            sys.executable, "-m", "uvicorn", "exograph.asgi:application", "--host", "127.0.0.1", "--port", str(PORT),
            "--lifespan", "on", "--no-server-header", "--no-access-log",
        ],
        tmp / "web.log",
    )  # fmt: skip
    base = f"http://127.0.0.1:{PORT}"
    results: list[dict[str, Any]] = []
    try:
        import httpx

        for _ in range(120):
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.5)
        _warm_up(base)
        for phase, workers_count in enumerate(PHASES, start=1):
            print(f"phase {phase}: {CLIENTS} clients, {SECONDS:g} s, {workers_count} worker process(es)…", flush=True)
            results.append(_phase(workers_count, phase, base, tmp, kills, server))
            _print(results[-1])
    finally:
        _stop(web)
        if server is not None:
            server.stop()
        if not os.environ.get("BENCH_KEEP_TMP"):
            shutil.rmtree(tmp, ignore_errors=True)
    ok = all(
        r["responses_5xx"] == 0
        and r["failed_without_reason"] == 0
        and not r["ledger_mismatches"]
        and r["uploads_by_status"].get("pending", 0) + r["uploads_by_status"].get("processing", 0) == 0
        and (not kills or _nothing_lost(r["lost_work"]))
        for r in results
    )
    out = {
        "benchmark": "load-faults" if kills else "load",
        "ok": ok,
        "kills": list(kills),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "note": "shared 2-core machine"},
        "phases": results,
    }
    path = ROOT / "bench" / "results" / ("load-faults.json" if kills else "load.json")
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path.relative_to(ROOT)}; {'OK' if ok else 'FAILED'}")
    return 0 if ok else 1


def _nothing_lost(lost: dict[str, Any]) -> bool:
    return not (lost["uploads_unfinished"] or lost["uploads_failed_still_charged"] or lost["chat_charges_unresolved"])


def _warm_up(base: str) -> None:
    """One search and one chat (not measured): the web process loads its embedding model on the first."""
    import httpx

    (_, key) = _accounts(0, count=1)[0]
    headers = {"Authorization": f"Bearer {key}"}
    httpx.get(f"{base}/api/v1/entities/search", params={"query": "Curie"}, headers=headers, timeout=300)
    httpx.post(
        f"{base}/api/v1/chat/messages/",
        json={"message": QUESTIONS[0], "model": "snap", "reasoning_engine": "rag"},
        headers=headers,
        timeout=300,
    )


def _print(result: dict[str, Any]) -> None:
    print(f"\n  {result['worker_processes']} worker process(es): {result['requests']} requests in "
          f"{result['seconds']} s = {result['throughput_rps']} req/s, 5xx: {result['responses_5xx']}")  # fmt: skip
    print(f"  {'endpoint':<12} {'requests':>8} {'p50 ms':>8} {'p95 ms':>8}  statuses")
    for op, row in result["endpoints"].items():
        print(f"  {op:<12} {row['requests']:>8} {row['p50_ms']:>8} {row['p95_ms']:>8}  {row['statuses']}")
    print(f"  uploads: {result['uploads']} {result['uploads_by_status']}, queue drained in "
          f"{result['drain_seconds']} s after the clients stopped; ledger mismatches: "
          f"{len(result['ledger_mismatches'])}\n", flush=True)  # fmt: skip
    if "faults" in result:
        print(f"  faults: {'; '.join(result['faults'])}")
        print(f"  lost work: {result['lost_work']}\n", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
