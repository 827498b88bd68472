"""Small template helpers for the web UI: {% load exograph_ui %}."""

from __future__ import annotations

from django import template

from exograph.core.scope import Scope

register = template.Library()

SCOPE_WORDS = {Scope.WORLD.value: "World", Scope.PRIVATE.value: "Private"}


@register.filter
def scope_word(scope: str | None) -> str:
    """The scope in a word ("World" or "Private"), for places an icon cannot go (an <option>)."""
    return SCOPE_WORDS.get(str(scope or ""), "Private")


@register.inclusion_tag("_scope.html")
def scope_badge(scope: str | None) -> dict[str, object]:
    """The scope in words plus an inline SVG icon (a globe or a padlock): never an emoji alone, which renders as an
    empty box where no emoji font is installed."""
    value = Scope.WORLD.value if str(scope or "") == Scope.WORLD.value else Scope.PRIVATE.value
    return {"scope": value, "word": SCOPE_WORDS[value]}
