"""exograph-client: a typed Python client for the ExoGraph REST API (httpx + pydantic).

from exograph_client import Client

with Client("http://127.0.0.1:8000", api_key="exo_…") as exo:
    doc = exo.documents.upload(text="Ada Lovelace wrote the first program.", title="Ada")
    exo.documents.wait_until_processed(doc.id)
    print(exo.chat.ask("Who wrote the first program?").answer)
"""

from exograph_client._core import EXPORT_FORMATS, __version__
from exograph_client.async_client import AsyncClient
from exograph_client.client import Client
from exograph_client.errors import (
    AuthenticationError,
    ConflictError,
    DocumentFailedError,
    ExoGraphError,
    InsufficientCreditsError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServiceUnavailableError,
    TransportError,
    WaitTimeoutError,
)
from exograph_client.models import (
    Balance,
    ChatAnswer,
    Citations,
    Document,
    DocumentSummary,
    Entity,
    EntityHit,
    Evidence,
    Graph,
    GraphCounts,
    ImportQuote,
    ImportResult,
    Quote,
    RelatedEntity,
    Report,
    ResearchQuote,
    ResearchSession,
    Retrieval,
    SearchResult,
    UploadQuote,
)

__all__ = [
    "EXPORT_FORMATS",
    "AsyncClient",
    "AuthenticationError",
    "Balance",
    "ChatAnswer",
    "Citations",
    "Client",
    "ConflictError",
    "Document",
    "DocumentFailedError",
    "DocumentSummary",
    "Entity",
    "EntityHit",
    "Evidence",
    "ExoGraphError",
    "Graph",
    "GraphCounts",
    "InsufficientCreditsError",
    "InvalidRequestError",
    "NotFoundError",
    "PermissionDeniedError",
    "ImportQuote",
    "ImportResult",
    "Quote",
    "RelatedEntity",
    "RateLimitError",
    "Report",
    "ResearchQuote",
    "ResearchSession",
    "Retrieval",
    "SearchResult",
    "ServiceUnavailableError",
    "TransportError",
    "UploadQuote",
    "WaitTimeoutError",
    "__version__",
]
