"""loco's diamond: fetch -> analyze + enrich (in parallel) -> combine."""

from __future__ import annotations

from typing_extensions import TypedDict

from obelisk import tool


class Document(TypedDict):
    url: str
    title: str
    text: str


class Analysis(TypedDict):
    words: int
    longest: str


@tool(pure=True)
def fetch_document(url: str) -> Document:
    """Fetch a document (a canned one here: no network)."""
    return {"url": url, "title": "field notes", "text": "plans are data and data flows"}


@tool(pure=True)
def analyze(text: str) -> Analysis:
    """Word count and the longest word (the first one on ties)."""
    words = text.split()
    return {"words": len(words), "longest": max(words, key=len)}


@tool(pure=True)
def enrich(title: str) -> dict[str, str]:
    """Metadata for a title."""
    return {"title": title.title(), "slug": title.replace(" ", "-")}


@tool(pure=True)
def combine_report(analysis: Analysis, metadata: dict[str, str]) -> str:
    """One-line report from an analysis and metadata."""
    return f"{metadata['title']}: {analysis['words']} words, longest '{analysis['longest']}'"
