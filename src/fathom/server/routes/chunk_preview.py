"""``/api/core/dataset/file/getPreviewChunks``: the first chunks a text or an uploaded file would become
with the given chunk settings, before anything is stored (FastGPT's import preview).

JSON ``{datasetId, text, chunkSize?, chunkSplitter?, chunkOverlapRatio?, qaPairs?, ...}`` or multipart
(``file`` plus ``data``, a JSON string of the same fields without ``text``). Nothing is written: no
file, no collection, no job. The dataset's embedding model sets the index size, as in ingestion.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from fastapi import APIRouter, Depends, Request
from starlette.datastructures import UploadFile

from fathom.datasets.chunking import collection_chunk_settings, split_collection_text
from fathom.knowledge.parse import (
    SUPPORTED_FORMATS,
    DocumentParseError,
    decode_text,
    detect_format,
    parse_document,
)
from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import ApiError, envelope
from fathom.server.routes.collections import chunk_settings_of
from fathom.server.routes.common import object_id, params, platform_of
from fathom.server.routes.datasets import load_dataset

router = APIRouter(tags=["collections"])

PREVIEW_DEFAULT = 10
PREVIEW_MAX = 50


async def _request_values(request: Request) -> tuple[dict[str, Any], str | None]:
    """The fields, and the text of an uploaded file (None for a JSON request)."""
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        return await params(request), None
    form = await request.form()
    try:
        values = json.loads(str(form.get("data") or "{}"))
    except json.JSONDecodeError:
        raise ApiError(400, "invalidParams", "data: must be a JSON string of the chunk settings") from None
    if not isinstance(values, dict):
        raise ApiError(400, "invalidParams", "data: must be a JSON object")
    upload = form.get("file")
    if not isinstance(upload, UploadFile):
        raise ApiError(400, "missingParams", "file: is required in a multipart preview")
    name = upload.filename or "upload"
    if detect_format(name) not in SUPPORTED_FORMATS:
        raise ApiError(
            400,
            "invalidParams",
            f"file: {name!r} has an unsupported type; supported: {', '.join(SUPPORTED_FORMATS)}",
        )
    content = await upload.read()
    if not content:
        raise ApiError(400, "invalidParams", "file is empty")
    if values.get("qaPairs") is True:
        return values, decode_text(content)[0]
    try:
        parsed = await asyncio.to_thread(parse_document, content, name)
    except DocumentParseError as exc:
        raise ApiError(400, "invalidParams", f"file: {exc}") from None
    return values, parsed.text


def _limit(values: dict[str, Any]) -> int:
    raw = values.get("limit", PREVIEW_DEFAULT)
    if isinstance(raw, bool) or not isinstance(raw, int | str) or not str(raw).isdigit():
        raise ApiError(400, "invalidParams", f"limit: must be a whole number from 1 to {PREVIEW_MAX}")
    limit = int(raw)
    if not 1 <= limit <= PREVIEW_MAX:
        raise ApiError(400, "invalidParams", f"limit: must be a whole number from 1 to {PREVIEW_MAX}")
    return limit


@router.api_route(
    "/api/core/dataset/file/getPreviewChunks",
    methods=["POST"],
    summary="Preview the chunks of a text or file",
)
async def preview_chunks(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    """``chunks`` (the first ``limit``, each ``{q, a, chars}``), ``total`` and the resolved settings."""
    values, file_text = await _request_values(request)
    if file_text is None:
        text = values.get("text")
        if not isinstance(text, str) or not text.strip():
            raise ApiError(400, "missingParams", "text: is required (or upload a file)")
    else:
        text = file_text
    limit = _limit(values)
    dataset, _ = await load_dataset(request, auth, object_id(values, "datasetId"), "read")
    chosen = {**dataset.chunk_settings, **chunk_settings_of(values)}
    settings = collection_chunk_settings(platform_of(request).embedders, dataset.vector_model, chosen)
    qa_pairs = bool(chosen.get("qaPairs"))
    chunks = await asyncio.to_thread(split_collection_text, text, settings, qa_pairs=qa_pairs)
    return envelope(
        {
            "chunks": [{"q": q, "a": a, "chars": len(q) + len(a)} for q, a in chunks[:limit]],
            "total": len(chunks),
            "chunkSize": settings.chunk_size,
            "indexSize": settings.index_size,
            "overlapRatio": settings.overlap_ratio,
            "chunkSplitter": list(settings.custom_separators),
            "qaPairs": qa_pairs,
        }
    )
