"""The viewer's page: one self-contained HTML file (docs/viewer.md).

The page holds the document as JSON in a ``<script type="application/json">`` element,
with every ``<``, ``>``, ``&`` and line separator escaped as ``\\uXXXX``, so no text a
tool returned can close the element or start markup; the script (``assets/viewer.js``,
plain JavaScript written for obelisk, no library) reads it with ``JSON.parse`` and puts
every value on the page as text.  A Content-Security-Policy lets only that script and
that style sheet run (by their SHA-256), loads nothing from the network, and allows
requests to the page's own origin only (``obelisk view --serve`` polls ``data.json``).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from importlib import resources
from typing import Any

from obelisk.interpreter.analysis.drawing import STATUS_COLOURS

__all__ = ["COLOURS", "document_json", "render_page"]

COLOURS: dict[str, str] = {
    **STATUS_COLOURS,
    "awaiting_approval": "#bbdefb",
    "unknown": "#d1c4e9",
    "waiting": "#ffffff",
    "ready": "#ffffff",
    "not run": "#f5f5f5",
    "varies": "#b2ebf2",
}
"""Fill colour of a call by status: ``obelisk graph --trace``'s, plus the statuses only
the viewer shows (``varies``: a dry run's call whose status differs by scenario)."""

_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def document_json(document: Any) -> str:
    """``document`` as JSON text safe inside an HTML ``<script>`` element (and as a
    response body): ``<``, ``>``, ``&``, U+2028 and U+2029 escaped.  A value JSON
    cannot hold (``NaN``, an object that is not JSON) becomes ``null`` or its text."""
    text = json.dumps(_finite(document), ensure_ascii=False, default=str, separators=(",", ":"))
    return text.translate(_ESCAPES)


def _asset(name: str) -> str:
    return (resources.files("obelisk.viewer") / "assets" / name).read_text(encoding="utf-8")


def _digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def render_page(document: dict[str, Any]) -> str:
    """The HTML page of ``document`` (the shape of :mod:`obelisk.viewer.document`):
    the graph, the timeline, a call's details, the state and write log, a loop's turns
    and a dry run's scenarios.  Needs no network; ``document["live"]`` makes it poll
    ``data.json`` on its own origin."""
    script, style = _asset("viewer.js"), _asset("viewer.css")
    data = document_json({"colours": COLOURS, "document": document})
    policy = (
        f"default-src 'none'; script-src {_digest(script)}; style-src {_digest(style)}; "
        "img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'"
    )
    title = html.escape(str(document.get("title") or "obelisk run"))
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        f"<title>{title} · obelisk</title>\n<style>{style}</style>\n</head>\n<body>\n"
        '<main id="app"><noscript>This page draws the run with JavaScript; the run itself is'
        " the JSON in the obelisk-data element of its source.</noscript></main>\n"
        f'<script type="application/json" id="obelisk-data">{data}</script>\n'
        f"<script>{script}</script>\n</body>\n</html>\n"
    )


def _finite(value: Any) -> Any:
    """``value`` with ``NaN`` and infinities as ``None`` (JSON has neither)."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value
