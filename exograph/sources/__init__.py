"""Outside knowledge sources shared by chat (engine web) and research: a safe page fetcher
(`fetch`), web search clients (`search`), main-text extraction (`extract`) and chat's `web` adapter."""
