"""Small fake HTTP servers on 127.0.0.1 that speak the real APIs of outside services, for tests.

- `FakeHTTPServer` (tests/fakes/http.py): threaded http.server base that records requests and can be
  scripted to fail (status, body, headers, delay). Subclass it and implement `handle()`.
- `FakeOpenAIServer` (tests/fakes/openai_server.py): OpenAI-compatible POST /v1/embeddings.
- `FakeOpenAIChatServer`, `FakeAnthropicServer` (tests/fakes/llm_chat.py): OpenAI-compatible POST
  /v1/chat/completions and Anthropic's POST /v1/messages, streaming included.
- `FakeArxiv` (tests/fakes/arxiv.py): the arXiv API's GET /api/query, Atom feeds and error feeds.
- `FakeMediaWiki` (tests/fakes/mediawiki.py): MediaWiki's /w/api.php, list=search and prop=extracts JSON.
- `FakeWeb`, `resolve_names`, `DripServer` (tests/fakes/web.py): a Brave/SearXNG search API with HTML
  pages and redirects, a DNS stand-in for names that resolve to private addresses, a byte-dripping server.

Fixtures exposing them live in tests/conftest.py (`fake_openai`, `openai_embeddings`).
"""
