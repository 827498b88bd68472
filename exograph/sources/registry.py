"""Which source adapters a research session reads: `adapters_for(kinds)` is the pipeline's only way in.

kinds are among paper | article | local. Network adapters (arxiv, wikipedia, web) are registered by the
sources module when configured; `local` (the platform's World Graph) needs no network and is also the
fallback when no network adapter is configured, so a session completes offline.
"""

from __future__ import annotations

from collections.abc import Sequence

from exograph.sources.base import SourceAdapter
from exograph.sources.local import LocalSource


def adapters_for(kinds: Sequence[str]) -> list[SourceAdapter]:
    """The adapters serving kinds (in that order); [LocalSource()] when none of them is configured."""
    adapters: list[SourceAdapter] = []
    if "local" in kinds:
        adapters.append(LocalSource())
    return adapters or [LocalSource()]
