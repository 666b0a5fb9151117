"""dataset_search argument patching (spec §3.7.5)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fathom.agent.system_tools.files_search import _patch_dataset_search_args


@pytest.mark.parametrize(
    ("args", "files", "query"),
    [
        ({"query": "  hello "}, [], ["hello"]),
        ({"query": ["a", " ", "", " b "]}, [], ["a", "b"]),
        (
            {},
            ["https://x/a.pdf", "/local/b.pdf", "files/c.pdf", "HTTP://Y/d"],
            ["https://x/a.pdf", "HTTP://Y/d"],
        ),
        ({"query": None}, ["ftp://x/a"], []),
    ],
)
def test_query_is_a_trimmed_list_plus_absolute_http_files(
    args: dict[str, object], files: list[str], query: list[str]
) -> None:
    assert _patch_dataset_search_args(args, files)["query"] == query


@given(
    st.one_of(st.text(), st.lists(st.text(), max_size=5), st.none()),
    st.lists(st.sampled_from(["https://h/a", "http://h/b", "rel/c", "/abs/d", "file:///e"]), max_size=5),
)
def test_patched_query_is_always_clean(query: object, files: list[str]) -> None:
    patched = _patch_dataset_search_args({"query": query}, files)["query"]
    assert all(isinstance(q, str) and q == q.strip() and q for q in patched)
    assert not any(q in ("rel/c", "/abs/d", "file:///e") for q in patched if q not in (query or []))
