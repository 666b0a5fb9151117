"""A CSS selector applied to a web page (FastGPT's ``webPageSelector``): only the matching elements are
kept before the page's text is extracted.

The selectors of FastGPT's examples are supported: type (``article``), id (``#main``), class
(``.content``, ``div.doc.body``), attribute presence or equality (``[role=main]``), the universal ``*``,
descendant and child combinators (``main .doc``, ``body > article``) and groups (``h1, .content``).
Anything else (pseudo-classes, ``~``, ``+``, attribute operators other than ``=``) is refused with
:class:`SelectorError` naming the part, rather than silently matching something else.
"""

from __future__ import annotations

import html as html_lib
import re

from lxml import html as lxml_html

from fathom.knowledge.parse.html import parse_html
from fathom.knowledge.parse.plain import decode_text
from fathom.knowledge.parse.types import DocumentParseError

_COMPOUND = re.compile(
    r"""(?P<tag>\*|[A-Za-z][\w-]*)?(?P<rest>(?:\#[\w-]+|\.[\w-]+|\[[\w-]+(?:=(?:"[^"]*"|'[^']*'|[\w-]+))?\])*)$"""
)
_PART = re.compile(r"""\#([\w-]+)|\.([\w-]+)|\[([\w-]+)(?:=("[^"]*"|'[^']*'|[\w-]+))?\]""")


class SelectorError(DocumentParseError):
    """The selector is empty or uses a part this subset of CSS does not support."""

    def __init__(self, reason: str) -> None:
        super().__init__("webPageSelector", reason)


def _literal(value: str) -> str:
    if "'" not in value:
        return f"'{value}'"
    if '"' not in value:
        return f'"{value}"'
    parts = value.split("'")
    return "concat(" + ', "\'", '.join(f"'{part}'" for part in parts) + ")"


def _compound_xpath(compound: str, selector: str) -> str:
    match = _COMPOUND.match(compound)
    if match is None or not compound:
        raise SelectorError(
            f"{compound!r} in {selector!r} is not supported; use tags, #id, .class, "
            "[attr] or [attr=value], joined by spaces, '>' or ','"
        )
    conditions: list[str] = []
    for part in _PART.finditer(match.group("rest") or ""):
        ident, cls, attr, value = part.groups()
        if ident:
            conditions.append(f"@id={_literal(ident)}")
        elif cls:
            conditions.append(
                f"contains(concat(' ', normalize-space(@class), ' '), {_literal(' ' + cls + ' ')})"
            )
        elif value is None:
            conditions.append(f"@{attr}")
        else:
            conditions.append(f"@{attr}={_literal(value.strip(chr(34) + chr(39)))}")
    tag = (match.group("tag") or "*").lower()
    return tag + "".join(f"[{condition}]" for condition in conditions)


def css_to_xpath(selector: str) -> str:
    """The XPath of a selector of the supported subset (:class:`SelectorError` otherwise)."""
    groups = [group.strip() for group in selector.split(",")]
    if not selector.strip() or any(not group for group in groups):
        raise SelectorError(f"{selector!r} is empty or has an empty group")
    paths: list[str] = []
    for group in groups:
        tokens = re.sub(r"\s*>\s*", " > ", group).split()
        path, axis = "", "//"
        for token in tokens:
            if token == ">":
                if not path or axis == "/":
                    raise SelectorError(f"{group!r}: '>' needs a selector on each side")
                axis = "/"
                continue
            path += axis + _compound_xpath(token, selector)
            axis = "//"
        if axis == "/":
            raise SelectorError(f"{group!r}: '>' needs a selector on each side")
        paths.append(path)
    return " | ".join(paths)


def _select_html(markup: str, selector: str) -> str | None:
    """The matching elements (document order, an element inside another match kept once) as one HTML
    document, with the page's ``<title>``; None when nothing matches."""
    xpath = css_to_xpath(selector)
    root = lxml_html.document_fromstring(markup)
    found = root.xpath(xpath)
    elements = [element for element in found if isinstance(element.tag, str)]
    chosen = set(elements)
    kept = [e for e in elements if not any(a in chosen for a in e.iterancestors())]
    if not kept:
        return None
    title = root.findtext(".//title") or ""
    body = "".join(lxml_html.tostring(element, encoding="unicode") for element in kept)
    head = f"<head><title>{html_lib.escape(title)}</title></head>"
    return f"<html>{head}<body>{body}</body></html>"


class SelectorMatchesNothing(DocumentParseError):
    """The page has no element the selector matches."""

    def __init__(self, url: str, selector: str) -> None:
        super().__init__(url, f"webPageSelector {selector!r} matches nothing on the page")


def web_page_text(data: bytes, url: str, selector: str | None = None) -> str:
    """A web page's main text; with ``selector``, only the text of the elements it matches."""
    markup = decode_text(data)[0]
    if selector and selector.strip():
        picked = _select_html(markup, selector)
        if picked is None:
            raise SelectorMatchesNothing(url, selector)
        markup = picked
    return parse_html(markup, url).text
