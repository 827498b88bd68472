"""REST: graphs, entity search, the world graph. Output serializers are shared with the MCP bridge."""

from __future__ import annotations

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from exograph.core.api import Pagination, ScopeField, actor_of, range_field, request_scope, validated
from exograph.core.schema import api_errors
from exograph.graphs.export import EXPORT_FORMATS, graph_export
from exograph.graphs.merges import MAX_REPORT, MAX_REPORT_OFFSET, REPORT_LIMIT, graph_merges_for_owner
from exograph.graphs.models import Graph
from exograph.graphs.selectors import (
    MAX_EXPLORE_HOPS,
    MAX_EXPLORE_LIMIT,
    MAX_N_RESULTS,
    MAX_OVERVIEW_LIMIT,
    MAX_QUERY_LENGTH,
    MAX_RELATED,
    OVERVIEW_LIMIT,
    graph_explore,
    graph_get_for_user,
    graph_list_for_user,
    graph_overview,
)
from exograph.graphs.services import entities_search, graph_create, graph_delete, graph_rename, world_entity_lookup


class GraphCountsSerializer(serializers.Serializer):
    entities = serializers.IntegerField(source="entity_count")
    relations = serializers.IntegerField(source="relation_count")
    documents = serializers.IntegerField(source="document_count")


class GraphOutSerializer(serializers.ModelSerializer[Graph]):
    scope = serializers.CharField(help_text="world or private")
    type = serializers.CharField(source="kind", help_text="document, manual, research or world")
    counts = GraphCountsSerializer(source="*")
    owned = serializers.SerializerMethodField()

    class Meta:
        model = Graph
        fields = ["id", "name", "scope", "type", "created", "counts", "owned", "embedding_model", "embedding_dim"]

    def get_owned(self, graph: Graph) -> bool:
        user = self.context.get("user")
        return bool(user is not None and graph.owner_id == user.pk)


class EntityHitSerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    type = serializers.CharField()
    graph_id = serializers.CharField()
    graph_name = serializers.CharField()
    relevance = serializers.FloatField(help_text="0..1 within this response; higher is better.")
    context = serializers.CharField(  # type: ignore[assignment]
        help_text="The best-matching description or passage (≤ 300 chars)."
    )


class EvidenceSerializer(serializers.Serializer):
    document = serializers.CharField()
    page = serializers.IntegerField(allow_null=True)
    text = serializers.CharField()
    view_url = serializers.CharField(
        allow_null=True, required=False, help_text="The document viewer at this passage; null when not yours."
    )


class RelatedEntitySerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    type = serializers.CharField()
    relationship = serializers.CharField()
    direction = serializers.ChoiceField(choices=["outgoing", "incoming"])
    strength = serializers.IntegerField(help_text="Supporting mentions/connections.")
    sources = serializers.ListField(child=serializers.CharField(), help_text="Document file names.")
    evidence = EvidenceSerializer(many=True, required=False)


class WorldEntitySerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    type = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    aliases = serializers.ListField(child=serializers.CharField())
    mentions = serializers.IntegerField()
    graph_id = serializers.CharField()


class WorldGraphOutSerializer(serializers.Serializer):
    entity = WorldEntitySerializer()
    related = RelatedEntitySerializer(many=True)
    count = serializers.IntegerField()


class GraphListCreateApi(APIView):
    pagination_class = Pagination  # documents GET as the paginated object it returns (limit/offset)

    class GraphListFilterSerializer(serializers.Serializer):
        graph_scope = ScopeField()

    class GraphCreateInSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        graph_scope = ScopeField()

    @extend_schema(
        parameters=[GraphListFilterSerializer],
        responses=GraphOutSerializer(many=True),
        summary="List your graphs (list_graphs)",
    )
    def get(self, request: Request) -> Response:
        user = actor_of(request)
        data = validated(self.GraphListFilterSerializer, request.query_params)
        graphs = graph_list_for_user(user=user, scope=request_scope(request, data))
        paginator = Pagination()
        page: list[Graph] | None = paginator.paginate_queryset(graphs, request, view=self)  # type: ignore[arg-type]
        body = GraphOutSerializer(page, many=True, context={"user": user}).data
        return paginator.get_paginated_response(body)

    @extend_schema(
        request=GraphCreateInSerializer,
        responses={201: GraphOutSerializer, **api_errors(409, e409="You already have a graph with this name.")},
        summary="Create a graph",
    )
    def post(self, request: Request) -> Response:
        user = actor_of(request)
        data = validated(self.GraphCreateInSerializer, request.data)
        graph = graph_create(actor=user, name=data["name"], scope=request_scope(request, data))
        return Response(GraphOutSerializer(graph, context={"user": user}).data, status=201)


class GraphDetailApi(APIView):
    class GraphRenameInSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200)

    @extend_schema(responses={200: GraphOutSerializer, **api_errors(404)}, summary="A graph")
    def get(self, request: Request, graph_id: str) -> Response:
        user = actor_of(request)
        graph = graph_get_for_user(user=user, graph_id=graph_id)
        return Response(GraphOutSerializer(graph, context={"user": user}).data)

    @extend_schema(
        request=GraphRenameInSerializer,
        responses={
            200: GraphOutSerializer,
            **api_errors(403, 404, 409, e403="A shared graph you do not own is read-only."),
        },
        summary="Rename a graph",
    )
    def patch(self, request: Request, graph_id: str) -> Response:
        user = actor_of(request)
        data = validated(self.GraphRenameInSerializer, request.data)
        graph = graph_rename(actor=user, graph_id=graph_id, name=data["name"])
        return Response(GraphOutSerializer(graph, context={"user": user}).data)

    @extend_schema(
        responses={204: None, **api_errors(403, 404, e403="A shared graph you do not own, or the World Graph.")},
        summary="Delete a graph and its knowledge",
    )
    def delete(self, request: Request, graph_id: str) -> Response:
        graph_delete(actor=actor_of(request), graph_id=graph_id)
        return Response(status=204)


class EntitySearchApi(APIView):
    class EntitySearchInSerializer(serializers.Serializer):
        query = serializers.CharField(
            max_length=MAX_QUERY_LENGTH,
            trim_whitespace=True,
            error_messages={"max_length": f"must be at most {MAX_QUERY_LENGTH} characters."},
        )
        n_results = range_field(maximum=MAX_N_RESULTS, default=10)
        graph_id = serializers.CharField(required=False, allow_blank=True, max_length=64)
        graph_scope = ScopeField()

    class EntitySearchOutSerializer(serializers.Serializer):
        query = serializers.CharField()
        count = serializers.IntegerField()
        results = EntityHitSerializer(many=True)

    @extend_schema(
        parameters=[EntitySearchInSerializer],
        responses={
            200: EntitySearchOutSerializer,
            **api_errors(404, e404="No graph with this graph_id in your account."),
        },
        summary="Search entities (search_entities)",
    )
    def get(self, request: Request) -> Response:
        user = actor_of(request)
        data = validated(self.EntitySearchInSerializer, request.query_params)
        hits = entities_search(
            actor=user,
            query=data["query"],
            n_results=data["n_results"],
            graph_id=data.get("graph_id") or None,
            scope=request_scope(request, data),
        )
        return Response(
            {"query": data["query"], "count": len(hits), "results": EntityHitSerializer(hits, many=True).data}
        )


class WorldEntityApi(APIView):
    class WorldEntityQuerySerializer(serializers.Serializer):
        evidence = serializers.BooleanField(required=False, default=False)
        limit = range_field(maximum=MAX_RELATED, default=25)

    @extend_schema(
        parameters=[WorldEntityQuerySerializer, OpenApiParameter("entity", str, OpenApiParameter.PATH)],
        responses={200: WorldGraphOutSerializer, **api_errors(404, e404="No such entity (with `suggestions`).")},
        summary="An entity's relations in the World Graph (get_world_graph)",
    )
    def get(self, request: Request, entity: str) -> Response:
        user = actor_of(request)
        data = validated(self.WorldEntityQuerySerializer, request.query_params)
        view = world_entity_lookup(actor=user, entity=entity, evidence=data["evidence"], limit=data["limit"])
        return Response(WorldGraphOutSerializer(view).data)


class ExploreSourceSerializer(serializers.Serializer):
    document_id = serializers.CharField()
    filename = serializers.CharField()
    view_url = serializers.CharField(allow_null=True, help_text="The document viewer; null when it is not yours.")


class ExploreNodeSerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    type = serializers.CharField()
    description = serializers.CharField()
    mentions = serializers.IntegerField()
    degree = serializers.IntegerField(help_text="All relations of this entity in the graph.")
    hop = serializers.IntegerField(help_text="Distance from the centre (0 = the entity asked for).")
    expanded = serializers.BooleanField(help_text="Whether this node's neighbours were fetched.")
    more = serializers.IntegerField(help_text="Relations of this node not in the response (expand it to see them).")


class ExploreEdgeSerializer(serializers.Serializer):
    source = serializers.CharField()  # type: ignore[assignment]  # the edge end, not Field.source
    target = serializers.CharField()
    type = serializers.CharField()
    strength = serializers.IntegerField(help_text="How many times the relation was found.")
    chunk_ids = serializers.ListField(child=serializers.CharField())
    sources = ExploreSourceSerializer(many=True)


class ExplorePassageSerializer(serializers.Serializer):
    chunk_id = serializers.CharField()
    document_id = serializers.CharField()
    filename = serializers.CharField()
    page = serializers.IntegerField(allow_null=True)
    text = serializers.CharField()
    view_url = serializers.CharField(
        allow_null=True, help_text="The document viewer at this passage; null when the document is not yours."
    )


class ExploreOutSerializer(serializers.Serializer):
    graph_id = serializers.CharField()
    graph_name = serializers.CharField()
    entity = ExploreNodeSerializer()
    hops = serializers.IntegerField()
    limit = serializers.IntegerField()
    nodes = ExploreNodeSerializer(many=True)
    edges = ExploreEdgeSerializer(many=True)
    sources = ExploreSourceSerializer(many=True)
    passages = ExplorePassageSerializer(many=True)


class GraphExploreApi(APIView):
    class ExploreQuerySerializer(serializers.Serializer):
        entity = serializers.CharField(max_length=300, help_text="An entity id or name.")
        hops = range_field(maximum=MAX_EXPLORE_HOPS, default=1)
        limit = range_field(maximum=MAX_EXPLORE_LIMIT, default=25)

    @extend_schema(
        operation_id="graphs_explore",
        parameters=[ExploreQuerySerializer],
        responses={200: ExploreOutSerializer, **api_errors(404)},
        summary="A bounded neighbourhood of an entity (nodes, typed edges, provenance) for the graph explorer",
    )
    def get(self, request: Request, graph_id: str) -> Response:
        """The explorer's read: graph_id may be "world"; a graph you cannot read is 404."""
        data = validated(self.ExploreQuerySerializer, request.query_params)
        view = graph_explore(
            user=actor_of(request), graph_id=graph_id, entity=data["entity"], hops=data["hops"], limit=data["limit"]
        )
        return Response(ExploreOutSerializer(view).data)


class OverviewOutSerializer(serializers.Serializer):
    graph_id = serializers.CharField()
    graph_name = serializers.CharField()
    document_id = serializers.CharField(allow_null=True, help_text="The document the overview is limited to.")
    limit = serializers.IntegerField()
    total = serializers.IntegerField(help_text="Entities in the graph (or the document) in all.")
    nodes = ExploreNodeSerializer(many=True)
    edges = ExploreEdgeSerializer(many=True)


class GraphOverviewApi(APIView):
    class OverviewQuerySerializer(serializers.Serializer):
        limit = range_field(maximum=MAX_OVERVIEW_LIMIT, default=OVERVIEW_LIMIT)
        document_id = serializers.CharField(
            max_length=64, required=False, default="", help_text="Only the entities of this document of yours."
        )

    @extend_schema(
        operation_id="graphs_overview",
        parameters=[OverviewQuerySerializer],
        responses={200: OverviewOutSerializer, **api_errors(404)},
        summary="The most connected entities of a graph and the relations among them (the explorer's overview)",
    )
    def get(self, request: Request, graph_id: str) -> Response:
        """graph_id may be "world"; a graph you cannot read, or a document not yours in it, is 404."""
        data = validated(self.OverviewQuerySerializer, request.query_params)
        view = graph_overview(
            user=actor_of(request), graph_id=graph_id, limit=data["limit"], document_id=data["document_id"]
        )
        return Response(OverviewOutSerializer(view).data)


class MergeFormsSerializer(serializers.Serializer):
    document_id = serializers.CharField()
    forms = serializers.ListField(child=serializers.CharField(), help_text="The names this document wrote.")


class MergedEntitySerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField(help_text="The name the node is shown under.")
    type = serializers.CharField()
    forms = serializers.ListField(child=serializers.CharField(), help_text="The other surface forms merged into it.")
    documents = MergeFormsSerializer(many=True, help_text="Each document's own forms: the merge's provenance.")


class SplitNodeSerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    type = serializers.CharField()
    documents = serializers.IntegerField(help_text="Documents that mention this node.")


class SplitNameSerializer(serializers.Serializer):
    key = serializers.CharField(help_text="The normalised name the nodes share.")
    nodes = SplitNodeSerializer(many=True)


class MergesOutSerializer(serializers.Serializer):
    graph_id = serializers.CharField()
    graph_name = serializers.CharField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()
    merged = MergedEntitySerializer(many=True)
    split = SplitNameSerializer(many=True)
    more_merged = serializers.BooleanField(help_text="More merged entities follow: ask again with offset + limit.")
    more_split = serializers.BooleanField(help_text="More split names follow: ask again with offset + limit.")


class GraphMergesApi(APIView):
    class MergesQuerySerializer(serializers.Serializer):
        limit = range_field(maximum=MAX_REPORT, default=REPORT_LIMIT)
        offset = range_field(minimum=0, maximum=MAX_REPORT_OFFSET, default=0)

    @extend_schema(
        operation_id="graphs_merges",
        parameters=[MergesQuerySerializer],
        responses={
            200: MergesOutSerializer,
            **api_errors(
                400,
                403,
                404,
                e400="limit or offset out of range (the message names the accepted range).",
                e403="Another account's shared graph, or the World Graph: only your own graphs' merges are shown.",
            ),
        },
        summary="The merge report of your graph: entities joined from several surface forms, names still split",
    )
    def get(self, request: Request, graph_id: str) -> Response:
        """What entity resolution joined (case, plural, possessive, article, acronym, title qualifier; each
        document's own forms kept) and which names are still held by several nodes (one per type), the most merged
        first, `limit` of each list from `offset`. Free: no credits (a read of your own graph)."""
        data = validated(self.MergesQuerySerializer, request.query_params)
        report = graph_merges_for_owner(
            user=actor_of(request), graph_id=graph_id, limit=data["limit"], offset=data["offset"]
        )
        return Response(MergesOutSerializer(report).data)


class GraphExportApi(APIView):
    @extend_schema(
        operation_id="graphs_export",
        parameters=[
            OpenApiParameter(
                "format",
                str,
                OpenApiParameter.QUERY,
                required=True,
                enum=list(EXPORT_FORMATS),
                description="graphml (entities as nodes, relations as edges), jsonl (one record per line: graph, "
                "document, entity, relation, passage), csv (one table with a `record` column) or jsonld "
                "(inline @context).",
            )
        ],
        responses={
            **{
                (200, content_type.split(";")[0]): OpenApiResponse(
                    OpenApiTypes.OBJECT if fmt == "jsonld" else OpenApiTypes.BINARY,
                    description="The graph, streamed: entities (name, type, description, aliases), typed relations "
                    "with provenance (document ids, chunk ids, pages) and, in jsonl, the passages; never embeddings. "
                    "The World Graph (graph id `world`) exports only your own contributions. Free: no credits.",
                )
                for fmt, (content_type, _) in EXPORT_FORMATS.items()
            },
            **api_errors(
                400,
                403,
                404,
                e400="Unknown format (the message lists the accepted ones).",
                e403="Another account's shared graph: only your own graphs export.",
            ),
        },
        summary="Export a graph (GraphML, JSON Lines, CSV, JSON-LD), streamed",
    )
    def get(self, request: Request, graph_id: str) -> StreamingHttpResponse:
        export = graph_export(user=actor_of(request), graph_id=graph_id, fmt=request.query_params.get("format"))
        response = StreamingHttpResponse(export.chunks, content_type=export.content_type)
        response["Content-Disposition"] = f'attachment; filename="{export.filename}"'
        response["X-Export-Scope"] = "contributions" if export.contributor is not None else "graph"
        return response

    def perform_content_negotiation(self, request: Request, force: bool = False) -> tuple[BaseRenderer, str]:
        """`?format=` names the export's format here, not a DRF renderer: errors stay JSON envelopes."""
        return super().perform_content_negotiation(request, force=True)
