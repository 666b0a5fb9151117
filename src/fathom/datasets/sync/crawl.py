"""Website crawl: from a start URL, the pages of its own site (under a path prefix), breadth first.

Rules: only ``http``/``https`` links of the start URL's scheme, host and port whose path starts with
``prefix``; fragments dropped; at most ``max_depth`` links from the start page and ``max_pages`` pages;
``robots.txt`` honoured for the ``Fathom`` user agent (a robots.txt that cannot be read allows all, as
crawlers do for a 4xx, but a 5xx stops the crawl: the site may be down); at most ``concurrency`` (≤ 2)
requests in flight. A redirect is followed (each hop checked by the egress guard) and the page is
known by the URL it ends at, when that is still on the site. Every request goes through the client the
caller passes (the egress guard's).
"""

from __future__ import annotations

import asyncio
import hashlib
import urllib.robotparser
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit

import httpx
from lxml import html as lxml_html

from fathom.knowledge.parse.selector import web_page_text

USER_AGENT = "Fathom"
MAX_CONCURRENCY = 2
PAGE_TYPES = ("text/html", "application/xhtml+xml")


@dataclass(frozen=True)
class WebsiteConfig:
    """FastGPT's ``websiteConfig`` (``url``, ``selector``) and Fathom's crawl limits."""

    url: str
    selector: str | None = None
    prefix: str | None = None  # default: the whole site ("/")
    max_depth: int = 3
    max_pages: int = 100
    concurrency: int = MAX_CONCURRENCY

    def view(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "selector": self.selector or "",
            "prefix": self.path_prefix,
            "maxDepth": self.max_depth,
            "maxPages": self.max_pages,
        }

    @property
    def path_prefix(self) -> str:
        return self.prefix or "/"

    @property
    def origin(self) -> tuple[str, str]:
        parts = urlsplit(self.url)
        return parts.scheme.lower(), parts.netloc.lower()


@dataclass(frozen=True)
class Page:
    url: str
    title: str
    text: str

    @property
    def content_hash(self) -> str:
        return content_hash(self.text)


@dataclass
class CrawlResult:
    pages: list[Page] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)  # url → why it could not be read
    gone: set[str] = field(default_factory=set)  # urls that answered 404 / 410
    skipped_by_robots: set[str] = field(default_factory=set)
    complete: bool = True  # False when the page limit cut the crawl short


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def normalise(url: str) -> str:
    """The URL without its fragment, with a path of at least ``/``."""
    bare, _ = urldefrag(url)
    parts = urlsplit(bare)
    path = parts.path or "/"
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{path}{query}"


def _on_site(config: WebsiteConfig, url: str) -> bool:
    parts = urlsplit(url)
    return (parts.scheme.lower(), parts.netloc.lower()) == config.origin and (parts.path or "/").startswith(
        config.path_prefix
    )


def _page_links(markup: bytes, base_url: str) -> list[str]:
    try:
        root = lxml_html.document_fromstring(markup)
    except (ValueError, lxml_html.etree.ParserError):
        return []
    hrefs = root.xpath("//a/@href")
    return [normalise(urljoin(base_url, str(href).strip())) for href in hrefs if str(href).strip()]


class _Robots:
    def __init__(self, parser: urllib.robotparser.RobotFileParser | None) -> None:
        self.parser = parser

    def allows(self, url: str) -> bool:
        return self.parser is None or self.parser.can_fetch(USER_AGENT, url)


async def _robots(client: Any, config: WebsiteConfig) -> _Robots:
    scheme, netloc = config.origin
    response = await client.get(f"{scheme}://{netloc}/robots.txt")
    if response.status_code >= 500:
        raise httpx.HTTPStatusError(
            f"robots.txt answered {response.status_code}", request=response.request, response=response
        )
    if response.status_code >= 400:
        return _Robots(None)
    parser = urllib.robotparser.RobotFileParser()
    parser.parse(response.text.splitlines())
    return _Robots(parser)


async def crawl_site(config: WebsiteConfig, client_factory: Callable[..., Any]) -> CrawlResult:
    """Crawl the site; a page that fails is recorded in ``failures`` and the crawl goes on. The start
    URL itself refused by the egress guard (or robots.txt unreadable for a 5xx) raises."""
    result = CrawlResult()
    limit = asyncio.Semaphore(max(1, min(config.concurrency, MAX_CONCURRENCY)))
    start = normalise(config.url)
    async with client_factory(headers={"User-Agent": USER_AGENT}) as client:
        robots = await _robots(client, config)
        seen: set[str] = {start}
        frontier = [start] if robots.allows(start) or _note(result, start) else []
        depth = 0
        while frontier and len(result.pages) < config.max_pages:
            fetched = await asyncio.gather(*(_fetch(client, limit, url) for url in frontier))
            next_frontier: list[str] = []
            for url, outcome in zip(frontier, fetched, strict=True):
                if isinstance(outcome, str):
                    if outcome == "gone":
                        result.gone.add(url)
                    else:
                        result.failures[url] = outcome
                    continue
                final_url, body = outcome
                if final_url != url and not _on_site(config, final_url):
                    continue  # redirected off the site (or out of the prefix)
                if len(result.pages) >= config.max_pages:
                    result.complete = False
                    break
                try:
                    text = web_page_text(body, final_url, config.selector)
                except Exception as exc:  # a page the selector misses, or that does not parse
                    result.failures[url] = f"{type(exc).__name__}: {exc}"
                    continue
                title = _title(body) or final_url
                if text.strip() and final_url not in {page.url for page in result.pages}:
                    result.pages.append(Page(final_url, title, text))
                if depth < config.max_depth:
                    for link in _page_links(body, final_url):
                        if link not in seen and _on_site(config, link):
                            seen.add(link)
                            next_frontier.append(link)
            frontier = [url for url in next_frontier if robots.allows(url) or _note(result, url)]
            depth += 1
        if frontier and len(result.pages) >= config.max_pages:
            result.complete = False
    return result


def _note(result: CrawlResult, url: str) -> bool:
    result.skipped_by_robots.add(url)
    return False


def _title(body: bytes) -> str:
    try:
        root = lxml_html.document_fromstring(body)
    except (ValueError, lxml_html.etree.ParserError):
        return ""
    return " ".join((root.findtext(".//title") or "").split())


async def _fetch(client: Any, limit: asyncio.Semaphore, url: str) -> tuple[str, bytes] | str:
    """(final URL, body) of an HTML page, or why not: ``gone`` (404/410), or an error text."""
    from fathom.security import EgressDenied, EgressRedirectError, EgressSizeError

    async with limit:
        try:
            response = await client.get(url)
        except (EgressDenied, EgressRedirectError, EgressSizeError) as exc:
            return f"{type(exc).__name__}: {exc}"
        except httpx.HTTPError as exc:
            return f"{type(exc).__name__}: {exc}"
    if response.status_code in (404, 410):
        return "gone"
    if response.status_code >= 400:
        return f"HTTP {response.status_code}"
    content_type = response.headers.get("content-type", "text/html").split(";")[0].strip().lower()
    if content_type not in PAGE_TYPES:
        return f"not a web page ({content_type})"
    return normalise(str(response.url)), response.content
