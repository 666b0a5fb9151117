"""The JSON answer of every route: Starlette's ``JSONResponse`` with its body encoded by ``orjson``
(:mod:`fathom.json_text`; the same compact text, non-ASCII kept)."""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse

from fathom import json_text


class CompactJSONResponse(JSONResponse):
    """``application/json`` in FastGPT's compact form; NaN and infinity are written ``null``."""

    def render(self, content: Any) -> bytes:
        return json_text.dumps_bytes(content)
