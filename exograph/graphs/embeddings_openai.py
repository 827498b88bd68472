"""The ``openai`` embedding provider (exograph.graphs.embeddings chooses it): any OpenAI-compatible
``POST {EMBEDDING_OPENAI_BASE_URL}/embeddings`` endpoint, batched by ``EMBEDDING_BATCH_SIZE``, each vector
L2-normalised. Errors as the embeddings module describes them (TransientError / PermanentError)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx
from django.conf import settings

from exograph.core.errors import PermanentError, TransientError

OPENAI_MAX_INPUT_CHARS = 8000


def _normalised(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(math.fsum(x * x for x in vector))
    if norm == 0.0 or not math.isfinite(norm):
        return [float(x) for x in vector]
    return [float(x) / norm for x in vector]


class OpenAIEmbedder:
    """Any OpenAI-compatible /embeddings endpoint, through one pooled httpx client per configuration."""

    provider = "openai"

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        dimension: int,
        send_dimensions: bool = False,
        timeout: float = 30.0,
    ) -> None:
        self.name = f"openai:{model}"
        self.dimension = dimension
        self.model = model
        self.url = base_url.rstrip("/") + "/embeddings"
        self.host = urlsplit(self.url).netloc or self.url
        self.send_dimensions = send_dimensions
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout),
            headers={"Authorization": f"Bearer {api_key}", "Accept": "application/json"},
            follow_redirects=False,
        )

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(name={self.name!r}, dimension={self.dimension}, host={self.host!r})"

    def close(self) -> None:
        self._client.close()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors: list[list[float]] = []
        size = max(1, int(settings.EMBEDDING_BATCH_SIZE))
        for start in range(0, len(texts), size):
            vectors.extend(self._embed_batch(list(texts[start : start + size])))
        return vectors

    def embed_one(self, text: str) -> list[float]:
        return self.embed([text])[0]

    def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        body: dict[str, Any] = {
            "model": self.model,
            "input": [text[:OPENAI_MAX_INPUT_CHARS] if text else " " for text in batch],
        }
        if self.send_dimensions:
            body["dimensions"] = self.dimension
        where = f"embedding provider {self.name} at {self.host}"
        try:
            response = self._client.post(self.url, json=body)
        except httpx.TimeoutException as exc:
            raise TransientError(
                f"The {where} timed out.", code="embedding_unavailable", hint="Retry in a moment."
            ) from exc
        except httpx.HTTPError as exc:
            raise TransientError(
                f"The {where} is unreachable ({type(exc).__name__}).",
                code="embedding_unavailable",
                hint="Retry in a moment.",
            ) from exc

        status = response.status_code
        if status == 429 or status >= 500:
            headers = {"Retry-After": response.headers["Retry-After"]} if "Retry-After" in response.headers else {}
            raise TransientError(
                f"The {where} answered {status}: {_provider_message(response)}",
                code="embedding_unavailable",
                hint="Retry in a moment.",
                headers=headers,
            )
        if status in (401, 403):
            raise PermanentError(
                f"The {where} refused the credentials ({status}): {_provider_message(response)}",
                code="embedding_auth_failed",
                hint="Check EMBEDDING_OPENAI_API_KEY.",
            )
        if status != 200:
            raise PermanentError(
                f"The {where} rejected the request ({status}): {_provider_message(response)}",
                code="embedding_failed",
                hint="Check EMBEDDING_OPENAI_MODEL, EMBEDDING_OPENAI_DIMENSION and EMBEDDING_OPENAI_SEND_DIMENSIONS.",
            )
        return self._parse(response, expected=len(batch), where=where)

    def _parse(self, response: httpx.Response, *, expected: int, where: str) -> list[list[float]]:
        try:
            payload = response.json()
            items = sorted(payload["data"], key=lambda item: int(item["index"]))
            raw = [item["embedding"] for item in items]
        except (ValueError, KeyError, TypeError) as exc:
            raise PermanentError(
                f"The {where} returned a malformed embeddings response ({type(exc).__name__}: {exc}).",
                code="embedding_failed",
            ) from exc
        if len(raw) != expected:
            raise PermanentError(
                f"The {where} returned {len(raw)} vectors for {expected} texts.", code="embedding_failed"
            )
        vectors: list[list[float]] = []
        for vector in raw:
            if not isinstance(vector, list) or not all(
                isinstance(x, int | float) and not isinstance(x, bool) for x in vector
            ):
                raise PermanentError(
                    f"The {where} returned a vector that is not a list of numbers "
                    '(base64 encoding is not supported; do not set "encoding_format").',
                    code="embedding_failed",
                )
            if len(vector) != self.dimension:
                raise PermanentError(
                    f"The {where} returned {len(vector)}-dimensional vectors, but EMBEDDING_OPENAI_DIMENSION "
                    f"is {self.dimension}.",
                    code="embedding_dimension_mismatch",
                    hint=f"Set EMBEDDING_OPENAI_DIMENSION={len(vector)} (or set EMBEDDING_OPENAI_SEND_DIMENSIONS=1 "
                    "if the model supports shortened vectors).",
                )
            vectors.append(_normalised(vector))
        return vectors


def _provider_message(response: httpx.Response) -> str:
    """The provider's own error message (OpenAI shape {"error": {"message"}}), else the start of the body."""
    try:
        payload = response.json()
    except ValueError:
        return response.text[:300].strip() or response.reason_phrase
    if isinstance(payload, dict):
        error = payload.get("error", payload.get("detail"))
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])[:300]
        if isinstance(error, str) and error:
            return error[:300]
    return str(payload)[:300]


# --- choosing one ----------------------------------------------------------------------------
