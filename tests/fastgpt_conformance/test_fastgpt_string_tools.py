"""FastGPT's string-tool and text-splitter cases, restated as data, against Fathom's counterparts.

Sources (labring/FastGPT):
- ``packages/global/test/common/string/tools.test.ts`` at 030708c734a220c7794c635975afc8997573fdb4:
  ``simpleText`` → ``fathom.knowledge.text.normalize_text``; ``sliceJsonStr`` →
  ``fathom.workflow.nodes.content_extract._slice_json_object``. Not mapped, because Fathom has no
  counterpart (it never needs one): ``strIsLink``, ``hashStr``, ``replaceSensitiveText``, ``getNanoid``,
  ``customNanoid``, ``replaceRegChars``, ``sliceStrStartEnd``, ``formatNumberWithUnit``.

The text splitter's cases (``textSplitter.test.ts``) are in ``test_fastgpt_text_splitter.py``.

Each case gives FastGPT's expected value; where Fathom differs, ``fathom`` gives Fathom's value and
``why`` the reason, and the test asserts both that Fathom returns its value and that it is not FastGPT's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from fathom.knowledge.text import normalize_text
from fathom.workflow.nodes.content_extract import _slice_json_object

TOOLS = "string tools > "
LOSSLESS = (
    "normalize_text is simpleText minus its lossy parts: every chunk is stored and cited as the user's "
    "text, so blanks between CJK characters, runs of spaces (code, aligned tables) survive"
)
TRAILING = "normalize_text drops trailing blanks before a line break (they carry nothing and vary by editor)"
OBJECT_ONLY = (
    "_slice_json_object feeds the content-extract node, whose answer must be one JSON object: arrays are "
    "not sliced, and text without an object gives '' so the node reports nothing extracted instead of "
    "parsing prose"
)

SIMPLE_TEXT: list[dict[str, Any]] = [
    {
        "test": "should normalize text formatting",
        "input": "  你 好 \r\n\r\n\r\nfoo\x00bar  ",
        "fastgpt": "你好 \n\nfoo bar",
        "fathom": "你 好\n\nfoo bar",
        "why": f"{LOSSLESS}; {TRAILING}",
    },
    {
        "test": "should normalize text formatting",
        "input": "a   b",
        "fastgpt": "a b",
        "fathom": "a   b",
        "why": LOSSLESS,
    },
    {
        "test": "should collapse blanks between chinese characters",
        "input": "中文  中文",
        "fastgpt": "中文中文",
        "fathom": "中文  中文",
        "why": LOSSLESS,
    },
    {
        "test": "should collapse blanks between chinese characters",
        "input": "中文\t中文",
        "fastgpt": "中文中文",
        "fathom": "中文\t中文",
        "why": LOSSLESS,
    },
    {
        "test": "should collapse blanks between chinese characters",
        "input": "中文\u3000中文",
        "fastgpt": "中文中文",
        "fathom": "中文\u3000中文",
        "why": LOSSLESS,
    },
    {
        "test": "should keep brackets and line indentation while normalizing blanks",
        "input": "参考 [[ 知识库 ]] 一节",
        "fastgpt": "参考 [[ 知识库 ]] 一节",
    },
    {
        "test": "should keep brackets and line indentation while normalizing blanks",
        "input": '{"matrix": [[]]}',
        "fastgpt": '{"matrix": [[]]}',
    },
    {
        "test": "should keep brackets and line indentation while normalizing blanks",
        "input": "中文 ]中文",
        "fastgpt": "中文 ]中文",
    },
    {
        "test": "should keep brackets and line indentation while normalizing blanks",
        "input": "def f():\n    return 1",
        "fastgpt": "def f():\n    return 1",
    },
    {
        "test": "should keep brackets and line indentation while normalizing blanks",
        "input": "line  \nnext",
        "fastgpt": "line  \nnext",
        "fathom": "line\nnext",
        "why": TRAILING,
    },
]

SLICE_JSON: list[dict[str, Any]] = [
    {"test": "should slice json from mixed text", "input": 'prefix {"a":1} suffix', "fastgpt": '{"a":1}'},
    {
        "test": "should slice json from mixed text",
        "input": "  [1,2,3] trailing",
        "fastgpt": "[1,2,3]",
        "fathom": "",
        "why": OBJECT_ONLY,
    },
    {
        "test": "should slice json from mixed text",
        "input": "no json here",
        "fastgpt": "no json here",
        "fathom": "",
        "why": OBJECT_ONLY,
    },
    {
        "test": "should slice json from mixed text",
        "input": 'prefix {"a":1',
        "fastgpt": 'prefix {"a":1',
        "fathom": "",
        "why": OBJECT_ONLY,
    },
]


def check(case: dict[str, Any], function: Callable[[Any], Any]) -> None:
    found = function(case["input"])
    if "fathom" in case:  # an explained difference
        assert case["why"]
        assert found == case["fathom"] and found != case["fastgpt"]
    else:
        assert found == case["fastgpt"]


@pytest.mark.parametrize(
    "case", SIMPLE_TEXT, ids=[f"{TOOLS}{c['test']} [{i}]" for i, c in enumerate(SIMPLE_TEXT)]
)
def test_simple_text_matches_fastgpt_or_differs_as_explained(case: dict[str, Any]) -> None:
    check(case, normalize_text)


@pytest.mark.parametrize(
    "case", SLICE_JSON, ids=[f"{TOOLS}{c['test']} [{i}]" for i, c in enumerate(SLICE_JSON)]
)
def test_slice_json_str_matches_fastgpt_or_differs_as_explained(case: dict[str, Any]) -> None:
    check(case, _slice_json_object)
