"""LLM providers in one place: documents, research and chat all import from here.

- `completions`: a small OpenAI-compatible chat-completions client (structured extraction).
- `providers`: chat generation through the official SDKs (`openai`, `anthropic`), streaming, with
  SDK timeouts/retries from settings; `extractive` is the default and needs no network.
- `extractive`: answers with the best-supported evidence sentences, each cited.
"""

from __future__ import annotations

from exograph.core.llm.completions import (
    ChatReply,
    LLMError,
    LLMPermanentError,
    LLMTimeoutError,
    LLMTransientError,
    PermanentError,
    llm_chat_complete,
    llm_configured,
)

__all__ = [
    "ChatReply",
    "LLMError",
    "LLMPermanentError",
    "LLMTimeoutError",
    "LLMTransientError",
    "PermanentError",
    "llm_chat_complete",
    "llm_configured",
]
