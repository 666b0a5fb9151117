"""FastGPT's ``webPageSelector``: the supported subset of CSS, table-driven, and what is refused."""

from __future__ import annotations

import pytest

from fathom.knowledge.parse.selector import SelectorError, _select_html, web_page_text

PAGE = (
    "<html><head><title>T</title></head><body><nav class='menu'>MENU</nav>"
    "<main id='content' role='main'><div class='doc body'><h1>Head</h1><p>One</p><p>Two</p></div>"
    "<aside data-x='y'>Side</aside></main><footer>FOOT</footer></body></html>"
)


@pytest.mark.parametrize(
    ("selector", "kept", "dropped"),
    [
        ("main", ["Head", "One", "Side"], ["MENU", "FOOT"]),
        ("#content", ["Head", "Side"], ["MENU"]),
        (".doc", ["Head", "One"], ["Side", "MENU"]),
        ("div.doc.body", ["One"], ["Side"]),
        ("main > aside", ["Side"], ["One"]),
        ("main p", ["One", "Two"], ["Head"]),
        ("[role=main] h1, footer", ["Head", "FOOT"], ["One", "MENU"]),
        ("[data-x]", ["Side"], ["One"]),
        ("* > p", ["One", "Two"], ["Head"]),
    ],
)
def test_supported_selectors_keep_only_what_they_match(
    selector: str, kept: list[str], dropped: list[str]
) -> None:
    picked = _select_html(PAGE, selector)
    assert picked is not None
    for text in kept:
        assert text in picked
    for text in dropped:
        assert text not in picked


@pytest.mark.parametrize("selector", ["a:hover", "p ~ p", "h1 + p", "[href^=x]", "", "main >", ", p", "> p"])
def test_other_selectors_are_refused_naming_the_part(selector: str) -> None:
    with pytest.raises(SelectorError, match="webPageSelector"):
        _select_html(PAGE, selector)


def test_a_selector_that_matches_nothing_fails_the_page() -> None:
    assert _select_html(PAGE, ".missing") is None
    with pytest.raises(ValueError, match="matches nothing"):
        web_page_text(PAGE.encode(), "https://example.com/", ".missing")


def test_an_element_inside_another_match_is_kept_once() -> None:
    picked = _select_html(PAGE, "main, .doc")
    assert picked is not None and picked.count("One") == 1
