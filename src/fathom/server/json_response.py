"""The chat's JSON answer (``stream: false``): Starlette's ``JSONResponse`` with its body encoded by
``orjson`` (:mod:`fathom.json_text`; the same compact text, non-ASCII kept). Not the app's default response
class: for a route with a return annotation FastAPI writes JSON with pydantic-core directly (17 µs for a
50-row list, against 31 µs through a response class and orjson), which a custom default would turn off."""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse

from fathom import json_text


class CompactJSONResponse(JSONResponse):
    """``application/json`` in FastGPT's compact form; NaN and infinity are written ``null``."""

    def render(self, content: Any) -> bytes:
        return json_text.dumps_bytes(content)
