"""The front-end packages come from npm (package.json) and are served by Django, never a CDN."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("static_path", "package", "major"),
    [
        ("vendor/htmx/htmx.min.js", "htmx.org", "2"),
        ("vendor/cytoscape/cytoscape.min.js", "cytoscape", "3"),
        ("vendor/pdfjs/build/pdf.min.mjs", "pdfjs-dist", "6"),
        ("vendor/pdfjs/build/pdf.worker.min.mjs", "pdfjs-dist", "6"),
        ("vendor/pdfjs/standard_fonts/FoxitDingbats.pfb", "pdfjs-dist", "6"),
        ("vendor/pdfjs/cmaps/78-H.bcmap", "pdfjs-dist", "6"),
        ("vendor/layout-base/layout-base.js", "layout-base", "2"),
        ("vendor/cose-base/cose-base.js", "cose-base", "2"),
        ("vendor/cytoscape-fcose/cytoscape-fcose.js", "cytoscape-fcose", "2"),
    ],
)
def test_vendor_script_is_served_from_the_pinned_npm_package(static_path, package, major):
    assert finders.find(static_path), f"{static_path} not found: run `npm ci`"
    # layout-base and cose-base come with cytoscape-fcose (the lock pins them); the others are named in package.json.
    spec = json.loads((ROOT / "package.json").read_text())["dependencies"].get(package, "")
    assert spec.lstrip("^~").split(".")[0] == major or package in ("layout-base", "cose-base")
    lock = json.loads((ROOT / "package-lock.json").read_text())
    assert lock["packages"][f"node_modules/{package}"]["version"].split(".")[0] == major
