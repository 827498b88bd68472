"""Every entity type the extractors write has its own colour in the explorer and its swatch in the legend."""

from __future__ import annotations

import re

from django.conf import settings

from exograph.documents.extraction.types import ENTITY_TYPES


def test_every_entity_type_has_an_explorer_colour_and_a_legend_swatch() -> None:
    static = settings.BASE_DIR / "exograph" / "static"
    script = (static / "js" / "explorer.js").read_text()
    colours = dict(
        re.findall(r"\b([A-Z]+): \"(#[0-9a-f]{6})\"", script.split("TYPE_COLOURS = {", 1)[1].split("}", 1)[0])
    )
    css = (static / "css" / "exograph.css").read_text()
    swatches = dict(re.findall(r"\.type-swatch\.type-([a-z]+) \{ background:(#[0-9a-f]{6}); \}", css))
    for entity_type in ENTITY_TYPES:
        assert entity_type in colours, f"{entity_type} would be drawn as 'Other'"
        assert swatches.get(entity_type.lower()) == colours[entity_type], entity_type
    assert len(set(colours.values())) == len(colours)  # no two types share a colour
