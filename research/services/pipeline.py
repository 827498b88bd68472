"""The research pipeline: plan → search → select → read + ingest each source → (wait for ingest) → synthesise.

Every step is stored (ResearchStep, unique per session and key) in the same transaction as its capture
from the hold, before the next step starts. A re-run (a redelivered task after a killed worker, a retry,
the wait for ingest) skips stored steps and resumes at the first missing one; a step's capture key is
``research:<session id>:step:<step key>``, so a step retried after its capture committed never captures
again. Before each priced step the pipeline checks the hold still covers it plus the synthesis it keeps in
reserve; when it does not, reading stops and the report is written from what was read (note says so).

A run's entry point and its lease are in running.py.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from exograph.core.errors import ExoGraphError, PermanentError, ServiceUnavailable, TransientError
from exograph.core.scope import Scope
from exograph.documents.models import Document, DocumentStatus
from exograph.graphs.embeddings import embedding_similarity
from exograph.graphs.models import Graph
from exograph.graphs.selectors import MAX_QUERY_LENGTH
from exograph.sources.base import SourceBudgetExhausted, SourceHit
from exograph.sources.filters import domain_excluded
from research.models import ResearchSource, ResearchStep
from research.selectors import research_copies, research_keys_read
from research.services.closing import research_session_complete
from research.services.steps import (
    EXCERPT_CHARS,
    RunSteps,
    hit_from,
    hit_to,
    same_source_keys,
    step_capture_key,
)
from research.services.writing import (
    Fact,
    SourceDigest,
    coverage_line,
    research_plan,
    research_synthesise,
    source_relevant,
    summary_line,
)
from research.sources import document_uuid, document_uuids

logger = logging.getLogger(__name__)

DONE, WAIT, STOPPED = "done", "wait", "stopped"
# Progress (percent) at the start of each phase.
PERCENT = {"plan": 5, "search": 10, "read": 30, "index": 80, "synthesise": 90}


class _Run(RunSteps):
    """The pipeline's steps over a run's stored steps (RunSteps): each skips itself when already stored."""

    def plan(self) -> list[str]:
        key = "plan"
        if (stored := self.done(key)) is not None:
            return list(stored.result["queries"])
        self.check_active()
        self.progress(step="plan", percent=PERCENT["plan"])
        queries = research_plan(topic=self.session.topic, model=self.session.model)
        self.store(key, result={"queries": queries}, cost=int(self.prices["plan"]))
        return queries

    def search(self, queries: list[str]) -> list[list[dict[str, Any]]]:
        lists: list[list[dict[str, Any]]] = []
        limit = int(settings.RESEARCH_HITS_PER_QUERY)
        for index, query in enumerate(queries):
            key = f"search:{index}"
            if (stored := self.done(key)) is not None:
                lists.append(list(stored.result["hits"]))
                continue
            self.check_active()
            cost = int(self.prices["search"])
            if not self.affordable(cost, reserve=int(self.prices["synthesise"])) or self.budget.remaining <= 0:
                self.notes.append(f"Searched {index} of {len(queries)} sub-questions: the budget ran out.")
                break
            self.progress(step="search", percent=PERCENT["search"] + (20 * index) // max(1, len(queries)))
            hits: list[dict[str, Any]] = []
            errors: list[str] = []
            for adapter in self.adapters():
                try:
                    found = adapter.search(query, limit=limit, budget=self.budget, options=self.options)
                except SourceBudgetExhausted:
                    errors.append("request budget spent")
                    break
                except (ServiceUnavailable, TransientError, PermanentError) as exc:
                    logger.info("research %s: source %s unavailable (%s)", self.session.id, adapter.name, exc.code)
                    errors.append(f"{adapter.name} unavailable")
                    continue
                hits.extend(hit_to(hit) for hit in found)
            self.store(key, result={"hits": hits, "errors": errors}, cost=cost)
            lists.append(hits)
        return lists

    def select(self, lists: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
        key = "select"
        if (stored := self.done(key)) is not None:
            self._note_irrelevant(int(stored.result.get("skipped_irrelevant") or 0))
            return list(stored.result["sources"])
        self.check_active()
        read_before = research_keys_read(session=self.session)
        # Research's own copies are not sources again (their originals are); a document of a graph's own (an
        # upload) is a source, cited where it is when it lives in the target graph (ingest).
        copies = research_copies(keys={hit["key"] for hits in lists for hit in hits}, graph_id=self.session.graph_id)
        domains = list(self.options.excluded_domains)
        selected: list[dict[str, Any]] = []
        seen: set[str] = set()
        irrelevant: set[str] = set()
        duplicates = 0
        cap = int(settings.RESEARCH_MAX_SOURCES[self.session.model])
        similarity = embedding_similarity()
        # Round-robin over the sub-queries' result lists: every sub-question gets its best hits read.
        depth = max((len(hits) for hits in lists), default=0)
        for rank in range(depth):
            for hits in lists:
                if rank >= len(hits) or len(selected) >= cap:
                    continue
                hit = hits[rank]
                if hit["key"] in seen or hit["key"] in read_before or hit["key"] in copies:
                    continue
                if hit["key"] in irrelevant or domain_excluded(hit.get("url") or "", domains):
                    continue
                # One document is one source: the same paper found by two sub-queries or two adapters is read once.
                same = same_source_keys(hit)
                if same & seen:
                    duplicates += 1
                    continue
                # Read only what is about the topic (writing.source_relevant: chat's relevance bound).
                if not source_relevant(
                    topic=self.session.topic,
                    title=str(hit.get("title") or ""),
                    snippet=str(hit.get("snippet") or ""),
                    similarity=similarity,
                ):
                    irrelevant.add(hit["key"])
                    continue
                seen |= same
                selected.append(hit)
        self._note_irrelevant(len(irrelevant))
        result = {
            "sources": selected,
            "skipped_known": len(read_before),
            "skipped_irrelevant": len(irrelevant),
            "skipped_duplicate": duplicates,
        }
        self.store(key, result=result, cost=0)
        self.progress(step="select", percent=PERCENT["read"], sources_found=len(selected))
        return selected

    def _note_irrelevant(self, count: int) -> None:
        if count:
            were = "s were" if count != 1 else " was"
            self.notes.append(f"{count} search result{were} not read: not about the topic.")

    def read_all(self, selected: list[dict[str, Any]]) -> None:
        adapters = {adapter.name: adapter for adapter in self.adapters()}
        cost = int(self.prices["read"])
        reserve = int(self.prices["synthesise"])
        read = ResearchSource.objects.filter(session=self.session).count()
        for index, data in enumerate(selected):
            key = "read:" + hashlib.sha256(data["key"].encode()).hexdigest()[:32]
            if self.done(key) is not None:
                continue
            self.check_active()
            if not self.affordable(cost, reserve=reserve):
                self.notes.append(f"The budget ran out after reading {read} of {len(selected)} sources.")
                return
            self.progress(
                step="read",
                percent=PERCENT["read"] + (50 * index) // max(1, len(selected)),
                sources_found=len(selected),
                sources_read=read,
            )
            hit = hit_from(data)
            adapter = adapters.get(hit.adapter)
            if adapter is None:
                self.store(key, result={"skipped": "source not configured"}, cost=0)
                continue
            try:
                read_hit = adapter.read(hit, budget=self.budget)
            except SourceBudgetExhausted:
                self.notes.append(f"The outside-request budget ran out after reading {read} sources.")
                return
            except (ServiceUnavailable, TransientError, PermanentError, ExoGraphError) as exc:
                logger.info("research %s: source %d not read (%s)", self.session.id, index, exc.code)
                self.store(key, result={"skipped": exc.code}, cost=0)
                continue
            if domain_excluded(
                read_hit.hit.url, self.options.excluded_domains
            ):  # a redirect may land on an excluded domain
                self.store(key, result={"skipped": "excluded by the session's options"}, cost=0)
                continue
            hit, text = read_hit.hit, read_hit.text
            ingested = self.ingest(hit, text=text, step_key=key, cost=cost)
            if ingested is None:
                self.store(key, result={"skipped": "not ingestible"}, cost=0)
                continue
            document_id, charged = ingested
            if ResearchSource.objects.filter(session=self.session, document_id=document_id).exists():
                # The same text under another key (a duplicate upload is returned unchanged and free): one source.
                self.store(key, result={"skipped": "same document as an earlier source"}, cost=0)
                continue
            source = {
                "key": hit.key,
                "adapter": hit.adapter,
                "kind": hit.kind,
                "title": hit.title[:500] or hit.key[:500],
                "url": hit.url[:2000],
                "published": hit.published,
                "document_id": document_id,
            }
            self.store(
                key, result={"document_id": document_id, "excerpt": text[:EXCERPT_CHARS]}, cost=charged, source=source
            )
            read += 1
        self.progress(step="read", percent=PERCENT["index"], sources_found=len(selected), sources_read=read)

    def ingest(self, hit: SourceHit, *, text: str, step_key: str, cost: int) -> tuple[str, int] | None:
        """The source's document and what its read step captures. One document is one source: a `local` hit on a
        document the session may cite where it is (in_place: in its graph, or in a private session one of its
        owner's private graphs) is not copied, and its read is free (nothing is ingested); any other source is
        ingested as a text document in the session's graph, its capture the read step's (same key), `cost`. None:
        the text could not be ingested."""
        from exograph.documents.services import HoldPayment, document_text_ingest

        if (in_place := self.in_place(hit)) is not None:
            return in_place, 0
        hold = self.hold()
        capture_key = step_capture_key(self.session, step_key)
        title = hit.title.strip() or hit.key
        try:
            document, _created = document_text_ingest(
                actor=self.session.owner,
                graph=self.session.graph,  # type: ignore[arg-type]
                title=title,
                text=text,
                idempotency_key=capture_key,
                source_url=hit.url or None,
                source_type=hit.kind,
                published=hit.published,
                markdown=False,
                paid_from=HoldPayment(hold=hold, amount=cost),  # a read source stays paid for
            )
        except (ServiceUnavailable, TransientError):
            raise
        except ExoGraphError as exc:  # empty, too long, bad URL, a failed duplicate: skip this source
            logger.info("research %s: source not ingested (%s)", self.session.id, exc.code)
            return None
        return str(document.id), cost

    def in_place(self, hit: SourceHit) -> str | None:
        """The id of the `local` hit's document when it is cited where it is, else None: it lives (not deleted) in
        the session's graph, or, in a private session, in a private graph of the session's owner (their own notes:
        copying them would charge them for reading their own text and show them twice)."""
        if hit.adapter != "local":
            return None
        document_id = document_uuid(hit.key)
        if document_id is None:
            return None
        found = Document.objects.filter(id=document_id, deleted_at__isnull=True)
        own = Q(graph__owner=self.session.owner, graph__scope=Scope.PRIVATE)
        if self.session.scope == Scope.PRIVATE:
            found = found.filter(Q(graph_id=self.session.graph_id) | own if self.session.graph_id else own)
        elif self.session.graph_id is not None:
            found = found.filter(graph_id=self.session.graph_id)
        else:
            return None
        return str(document_id) if found.exists() else None

    def cited_graphs(self, document_ids: list[str]) -> list[Graph]:
        """The session's graph and the owner's private graphs holding sources cited where they are (a private
        session's notes): what the synthesis reads."""
        graphs = [self.session.graph] if self.session.graph is not None else []
        if self.session.scope == Scope.PRIVATE and document_ids:
            holding = Document.objects.filter(id__in=document_ids).values("graph_id")
            graphs += list(
                Graph.objects.filter(id__in=holding, owner=self.session.owner, scope=Scope.PRIVATE).exclude(
                    id=self.session.graph_id
                )
            )
        return graphs

    def ingest_pending(self) -> bool:
        """True while a read source's document is still being processed (within the wait allowance)."""
        ids = list(
            ResearchSource.objects.filter(session=self.session, document__isnull=False).values_list(
                "document_id", flat=True
            )
        )
        pending = Document.objects.filter(
            id__in=ids, status__in=[DocumentStatus.PENDING, DocumentStatus.PROCESSING], deleted_at__isnull=True
        ).exists()
        if not pending:
            return False
        last = ResearchStep.objects.filter(session=self.session).order_by("-created").values_list("created", flat=True)
        since = last.first() or timezone.now()
        if timezone.now() - since > timedelta(seconds=int(settings.RESEARCH_INGEST_WAIT_SECONDS)):
            self.notes.append("Some sources were still being processed; the report uses those that were ready.")
            return False
        return True

    def synthesise(self) -> dict[str, Any]:
        from exograph.graphs.retrieval import retrieve

        key = "synthesise"
        if (stored := self.done(key)) is not None:
            return dict(stored.result["report"])
        self.check_active()
        self.progress(step="synthesise", percent=PERCENT["synthesise"])
        sources = list(ResearchSource.objects.filter(session=self.session).order_by("number"))
        by_document = {str(s.document_id): s.number for s in sources if s.document_id}
        excerpts = {
            int(step.result["number"]): str(step.result.get("excerpt") or "")
            for step in self.steps.values()
            if step.key.startswith("read:") and "number" in step.result
        }
        passages: dict[int, list[str]] = {}
        facts: dict[str, set[int]] = {}
        if sources and self.session.graph is not None:
            result = retrieve(
                actor=self.session.owner,
                graphs=self.cited_graphs(list(by_document)),
                question=self.session.topic[:MAX_QUERY_LENGTH],
                mode="hybrid",
                top_k=30,
                budget=40_000,
            )
            for item in result.items:
                numbers = {by_document[d] for d in (item.document_ids or (item.document_id,)) if d in by_document}
                if item.document_id in by_document and item.kind == "passage":
                    passages.setdefault(by_document[item.document_id], []).append(item.text)
                if item.kind in ("relation", "fact") and item.triple and numbers:
                    subject, predicate, obj = item.triple
                    text = f"{subject} {predicate} {obj}."
                    facts.setdefault(text[:1].upper() + text[1:], set()).update(numbers)
        digests = [
            SourceDigest(
                number=s.number,
                kind=s.kind,
                title=s.title,
                text="\n".join(passages.get(s.number, [])) or excerpts.get(s.number, ""),
                document_id=str(s.document_id) if s.document_id else None,
            )
            for s in sources
        ]
        fact_list = [Fact(text=text, numbers=tuple(sorted(nums))) for text, nums in facts.items()]
        plan = self.done("plan")
        sub_questions = list(plan.result["queries"]) if plan is not None else [self.session.topic]
        synthesis = research_synthesise(
            topic=self.session.topic,
            model=self.session.model,
            sources=digests,
            facts=fact_list,
            sub_questions=sub_questions,
            similarity=embedding_similarity(),
        )
        # A session whose sources answer nothing it asked is not charged for the synthesis (its hold is released).
        cost = int(self.prices["synthesise"]) if sources and synthesis.covered else 0
        kinds = [s.kind for s in sources]
        summary = summary_line(
            topic=self.session.topic,
            papers=kinds.count("paper"),
            articles=kinds.count("article"),
            local=kinds.count("local"),
            own=Document.objects.filter(
                id__in=[s.document_id for s in sources if s.kind == "local" and s.document_id],
                graph__owner=self.session.owner,
                graph__scope=Scope.PRIVATE,
            ).count(),
        )
        summary += " " + coverage_line(
            topic=self.session.topic,
            sources=len(sources),
            covered=synthesis.covered,
            unanswered=synthesis.unanswered,
            asked=len(sub_questions),
        )
        report = {
            "summary": summary,
            "findings": synthesis.findings,
            "unanswered": synthesis.unanswered,
            "open_questions": synthesis.open_questions,
            "sources": [
                {
                    "number": s.number,
                    "title": s.title,
                    "url": s.url or None,
                    "kind": s.kind,
                    "published": s.published.isoformat() if s.published else None,
                    "document_id": str(s.document_id) if s.document_id else None,
                }
                for s in sources
            ],
        }
        if cost and not self.affordable(cost):
            cost = 0  # the reserve was kept for this step; only a changed price table gets here
        self.store(key, result={"report": report, "notes": self.notes}, cost=cost, also=self._world_usage(sources))
        return report

    def _world_usage(self, sources: list[ResearchSource]) -> Callable[[], object]:
        """Record (with the synthesis, once) that this session read World Graph documents of other accounts:
        billing pays their contributors, as for search and chat (an account's own private notes pay no one).
        Only the topic's digest is stored."""
        from billing.services import earnings_record

        local = document_uuids(s.key for s in sources if s.adapter == "local")
        contributors = list(
            Document.objects.filter(id__in=local, graph__scope=Scope.WORLD)
            .order_by()
            .values_list("owner_id", flat=True)
            .distinct()
        )

        def record() -> object:
            return earnings_record(
                querier=self.session.owner, contributor_ids=contributors, source="research", query=self.session.topic
            )

        return record

    # --- the flow -------------------------------------------------------------------------------

    def go(self) -> str:
        queries = self.plan()
        lists = self.search(queries)
        selected = self.select(lists)
        self.read_all(selected)
        if self.done("synthesise") is None and self.ingest_pending():
            self.progress(step="index", percent=PERCENT["index"])
            return WAIT
        report = self.synthesise()
        notes = list(self.notes) or list((self.done("synthesise") or ResearchStep()).result.get("notes") or [])
        if not report["sources"]:
            notes.insert(0, "No new sources were found." if self.session.watch_of_id else "No sources were found.")
        research_session_complete(session=self.session, report=report, note=" ".join(notes))
        return DONE
