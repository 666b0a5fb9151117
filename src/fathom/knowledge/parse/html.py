"""HTML: the main content (not navigation or boilerplate) as Markdown, via trafilatura."""

from __future__ import annotations

import html as html_lib
import re

from fathom.knowledge.parse.plain import decode_text
from fathom.knowledge.parse.types import ParsedDocument

_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def parse_html(data: bytes | str, url: str | None = None) -> ParsedDocument:
    """Extract the main content with trafilatura (tables and formatting kept, links dropped); pages
    trafilatura judges empty fall back to all visible text."""
    import trafilatura

    markup = data if isinstance(data, str) else decode_text(data)[0]
    text = trafilatura.extract(
        markup,
        url=url,
        output_format="markdown",
        include_tables=True,
        include_formatting=True,
        include_links=False,
        include_comments=False,
        favor_recall=True,
    )
    extractor = "trafilatura"
    if not text:
        text = trafilatura.html2txt(markup) or ""
        extractor = "html2txt"
    title = _TITLE.search(markup)
    metadata: dict[str, object] = {"extractor": extractor}
    if title:
        metadata["title"] = " ".join(html_lib.unescape(title.group(1)).split())
    if url:
        metadata["url"] = url
    return ParsedDocument(text=text, format="html", metadata=metadata)
