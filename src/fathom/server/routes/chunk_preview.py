"""``/api/core/dataset/file/getPreviewChunks``: the first chunks a text or an uploaded file would become
with the given chunk settings, before anything is stored (FastGPT's import preview).

JSON ``{datasetId, text, chunkSize?, chunkSplitter?, chunkOverlapRatio?, qaPairs?, ...}`` or multipart
(``file`` plus ``data``, a JSON string of the same fields without ``text``). Nothing is written: no
file, no collection, no job. The dataset's embedding model sets the index size, as in ingestion.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import Field
from starlette.datastructures import UploadFile

from fathom.datasets.collection_service import check_file_format
from fathom.server.auth import AuthContext
from fathom.server.errors import ApiError, envelope
from fathom.server.routes.dataset_models import ChunkSettings, PreviewResult
from fathom.server.routes.datasets import kb_caller, load_dataset
from fathom.server.routes.knowledge_routing import knowledge_bases
from fathom.server.typed import BLANK_IS_NONE, ObjectId, answers, parsed
from fathom.server.uploads import admit_upload, check_file_name, member_or_key

router = APIRouter(tags=["collections"])

PREVIEW_DEFAULT = 10
PREVIEW_MAX = 50


class PreviewChunks(ChunkSettings):
    """The text (absent with an uploaded file), the chunk settings and how many chunks to show."""

    datasetId: ObjectId
    text: Annotated[str | None, BLANK_IS_NONE] = Field(None, examples=["First paragraph.\n\nSecond one."])
    limit: Annotated[Annotated[int, Field(ge=1, le=PREVIEW_MAX)] | None, BLANK_IS_NONE] = None


async def _file_text(request: Request, auth: AuthContext, qa_pairs: bool) -> str | None:
    """The text of the uploaded file (None for a JSON request); an upload counts against the caller's
    uploads a minute."""
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        return None
    upload = (await request.form()).get("file")
    if not isinstance(upload, UploadFile):
        raise ApiError(400, "missingParams", "file: is required in a multipart preview")
    await admit_upload(request, member_or_key(auth))
    name = check_file_name(upload.filename or "upload", "file")
    check_file_format(name, "file")
    content = await upload.read()
    return await knowledge_bases(request).previews.file_text(name, content, qa_pairs=qa_pairs)


@router.api_route(
    "/api/core/dataset/file/getPreviewChunks",
    methods=["POST"],
    summary="Preview the chunks of a text or file",
    responses=answers(PreviewResult),
)
async def preview_chunks(
    request: Request,
    auth: AuthContext = Depends(kb_caller),
    payload: PreviewChunks = parsed(PreviewChunks, form_field="data"),
) -> dict[str, Any]:
    """``chunks`` (the first ``limit``, each ``{q, a, chars}``), ``total`` and the resolved settings."""
    file_text = await _file_text(request, auth, payload.qaPairs is True)
    if file_text is None:
        text = payload.text
        if text is None or not text.strip():
            raise ApiError(400, "missingParams", "text: is required (or upload a file)")
    else:
        text = file_text
    limit = payload.limit or PREVIEW_DEFAULT
    dataset, _ = await load_dataset(request, auth, payload.datasetId, "read")
    preview = await knowledge_bases(request).previews.preview(dataset, payload.chunk_settings(), text)
    chunks, settings = preview.chunks, preview.settings
    return envelope(
        {
            "chunks": [{"q": q, "a": a, "chars": len(q) + len(a)} for q, a in chunks[:limit]],
            "total": len(chunks),
            "chunkSize": settings.chunk_size,
            "indexSize": settings.index_size,
            "overlapRatio": settings.overlap_ratio,
            "chunkSplitRule": settings.split_rule,
            "chunkSplitter": list(settings.custom_separators),
            "qaPairs": preview.qa_pairs,
        }
    )
