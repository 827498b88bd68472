"""A fake OpenAI-compatible embeddings API: POST /v1/embeddings with the real request/response JSON.

Vectors are deterministic pseudo-random functions of (model, text), deliberately not unit length, so a
test can compute what the client must return with `fake_vector()`. Knobs for tests:

- `api_key`: the Bearer key it accepts (401 with OpenAI's error body otherwise).
- `dimension`: the vector length it returns when the request has no "dimensions"; set `wrong_dimension`
  to return vectors of that length whatever is asked.
- `reverse_order`: return the `data` items in reverse (clients must sort by `index`).
- `fail_next(status, body, times=, headers=, delay=)`: from FakeHTTPServer.
"""

from __future__ import annotations

import base64
import hashlib
import random
import struct
from typing import Any

from tests.fakes.http import FakeHTTPServer, RecordedRequest, Reply

MAX_INPUTS = 2048


def openai_error(message: str, *, type_: str = "invalid_request_error", code: str | None = None) -> dict[str, Any]:
    """OpenAI's error body."""
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


def fake_vector(text: str, dimension: int, model: str = "text-embedding-3-small") -> list[float]:
    """The raw (not normalised) vector the fake returns for `text`."""
    seed = int.from_bytes(hashlib.sha256(f"{model}\0{text}".encode()).digest()[:8], "big")
    rng = random.Random(seed)
    return [rng.uniform(-3.0, 3.0) for _ in range(dimension)]


class FakeOpenAIServer(FakeHTTPServer):
    def __init__(self, *, api_key: str = "sk-test-fake", dimension: int = 16) -> None:
        super().__init__()
        self.api_key = api_key
        self.dimension = dimension
        self.wrong_dimension: int | None = None
        self.reverse_order = False

    @property
    def base_url(self) -> str:
        """What EMBEDDING_OPENAI_BASE_URL should be set to."""
        return f"{self.url}/v1"

    @property
    def embedding_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == "/v1/embeddings"]

    def handle(self, request: RecordedRequest) -> Reply:
        if request.path != "/v1/embeddings" or request.method != "POST":
            return Reply(404, openai_error(f"Invalid URL ({request.method} {request.path})"))
        auth = request.header("Authorization") or ""
        if not auth.startswith("Bearer "):
            return Reply(
                401,
                openai_error(
                    "You didn't provide an API key. You need to provide your API key in an Authorization header "
                    "using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
                ),
            )
        if auth.removeprefix("Bearer ") != self.api_key:
            shown = auth.removeprefix("Bearer ")[:6]
            return Reply(
                401,
                openai_error(
                    f"Incorrect API key provided: {shown}****. You can find your API key at "
                    "https://platform.openai.com/account/api-keys.",
                    code="invalid_api_key",
                ),
            )
        try:
            body = request.json()
        except ValueError:
            return Reply(400, openai_error("We could not parse the JSON body of your request."))
        if not isinstance(body, dict):
            return Reply(400, openai_error("We could not parse the JSON body of your request."))
        model = body.get("model")
        if not isinstance(model, str) or not model:
            return Reply(400, openai_error("you must provide a model parameter"))
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if (
            not isinstance(inputs, list)
            or not inputs
            or len(inputs) > MAX_INPUTS
            or not all(isinstance(item, str) and item for item in inputs)
        ):
            return Reply(
                400,
                openai_error(
                    "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference."
                ),
            )
        dimension = body.get("dimensions", self.dimension)
        if not isinstance(dimension, int) or isinstance(dimension, bool) or dimension < 1:
            return Reply(400, openai_error("Invalid value for 'dimensions'.", code="invalid_value"))
        if self.wrong_dimension is not None:
            dimension = self.wrong_dimension
        encoding = body.get("encoding_format", "float")
        data: list[dict[str, Any]] = []
        for index, text in enumerate(inputs):
            vector = fake_vector(text, dimension, model)
            embedding: Any = vector
            if encoding == "base64":
                embedding = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
            data.append({"object": "embedding", "index": index, "embedding": embedding})
        if self.reverse_order:
            data.reverse()
        tokens = sum(len(text.split()) for text in inputs)
        return Reply(
            200,
            {
                "object": "list",
                "data": data,
                "model": model,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )
