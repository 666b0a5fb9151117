"""A knowledge base's collection tags over FastGPT's paths (``/api/core/dataset/tag/*``, and
``/api/proApi/core/dataset/tag/*`` where FastGPT's console calls them): create, update, delete, list,
getAllTags, tagUsage and addToCollections.

A tag is ``{_id, tag, teamId, datasetId}``; collections carry tag *names* on the wire
(``collection/create*``, ``collection/update``, ``listV2``, ``detail``), as FastGPT's do, and names new to
the knowledge base become tags."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import Field, StringConstraints

from fathom.datasets.records import TagRecord
from fathom.server.auth import AuthContext
from fathom.server.errors import envelope
from fathom.server.routes.collection_fields import TAG_MAX
from fathom.server.routes.common import ANY_METHOD
from fathom.server.routes.dataset_models import DatasetPageQuery
from fathom.server.routes.datasets import kb_caller, load_knowledge_base
from fathom.server.routes.knowledge_routing import knowledge_bases
from fathom.server.typed import BLANK_IS_NONE, ApiModel, ObjectId, answers, parsed

router = APIRouter(tags=["tags"])
PREFIXES = ("/api/core/dataset/tag", "/api/proApi/core/dataset/tag")
COLLECTIONS_MAX = 1000

TagText = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=TAG_MAX),
    Field(examples=["refunds"], json_schema_extra={"pattern": r"\S"}),
]


class DatasetRef(ApiModel):
    datasetId: ObjectId


class CreateTag(DatasetRef):
    tag: TagText


class UpdateTag(DatasetRef):
    tagId: ObjectId
    tag: TagText


class DeleteTag(DatasetRef):
    id: ObjectId = Field(description="The tag's id")


class ListTags(DatasetPageQuery):
    datasetId: ObjectId
    current: Annotated[int | None, BLANK_IS_NONE] = Field(
        None, description="1-based page (FastGPT's console)"
    )


class AddToCollections(DatasetRef):
    tag: TagText = Field(description="A tag's id or name (a new name becomes a tag)")
    collectionIds: Annotated[list[ObjectId], Field(max_length=COLLECTIONS_MAX)] = Field(
        description="The collections that get the tag"
    )
    originCollectionIds: Annotated[list[ObjectId] | None, Field(max_length=COLLECTIONS_MAX)] = Field(
        None, description="The collections that had it: those left out of collectionIds lose it"
    )


def _tag_view(tag: TagRecord) -> dict[str, Any]:
    return {"_id": tag.id, "tag": tag.tag, "teamId": tag.team_id, "datasetId": tag.dataset_id}


def _tag_route(name: str, summary: str, data: Any) -> Any:
    def register(handler: Any) -> Any:
        for index, prefix in enumerate(PREFIXES):
            router.api_route(
                f"{prefix}/{name}",
                methods=ANY_METHOD,
                summary=summary,
                responses=answers(data),
                include_in_schema=index == 0,
            )(handler)
        return handler

    return register


@_tag_route("create", "Create a tag", str)
async def create_tag(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: CreateTag = parsed(CreateTag)
) -> dict[str, Any]:
    """``{datasetId, tag}`` → the tag's id; ``Tag already exists`` (409) for a name the knowledge base has."""
    dataset = await load_knowledge_base(request, auth, payload.datasetId, "write")
    tag = await knowledge_bases(request).tags.create(auth.team_id, dataset.id, payload.tag)
    return envelope(tag.id)


@_tag_route("update", "Rename a tag (and on every collection carrying it)", None)
async def update_tag(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: UpdateTag = parsed(UpdateTag)
) -> dict[str, Any]:
    dataset = await load_knowledge_base(request, auth, payload.datasetId, "write")
    await knowledge_bases(request).tags.rename(auth.team_id, dataset.id, payload.tagId, payload.tag)
    return envelope(None)


@_tag_route("delete", "Delete a tag (and take it off every collection)", None)
async def delete_tag(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: DeleteTag = parsed(DeleteTag)
) -> dict[str, Any]:
    """FastGPT's ``?id=&datasetId=``; needs manage permission on the knowledge base."""
    dataset = await load_knowledge_base(request, auth, payload.datasetId, "manage")
    await knowledge_bases(request).tags.delete(auth.team_id, dataset.id, payload.id)
    return envelope(None)


@_tag_route("list", "A page of tags, newest first", dict[str, Any])
async def list_tags(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: ListTags = parsed(ListTags)
) -> dict[str, Any]:
    """``{datasetId, searchText?, offset | pageNum | current, pageSize}`` → ``{list, total}``."""
    dataset = await load_knowledge_base(request, auth, payload.datasetId, "read")
    if payload.pageNum is None and payload.current is not None:
        payload.pageNum = payload.current
    offset, size = payload.window()
    tags, total = await knowledge_bases(request).tags.list_tags(
        auth.team_id, dataset.id, search=payload.searchText or "", offset=offset, limit=size
    )
    return envelope({"list": [_tag_view(tag) for tag in tags], "total": total})


@_tag_route("getAllTags", "Every tag of a knowledge base", dict[str, Any])
async def all_tags(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: DatasetRef = parsed(DatasetRef)
) -> dict[str, Any]:
    dataset = await load_knowledge_base(request, auth, payload.datasetId, "read")
    tags, _ = await knowledge_bases(request).tags.list_tags(auth.team_id, dataset.id)
    return envelope({"list": [{"_id": tag.id, "tag": tag.tag} for tag in tags]})


@_tag_route("tagUsage", "Which collections carry each tag", list[dict[str, Any]])
async def tag_usage(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: DatasetRef = parsed(DatasetRef)
) -> dict[str, Any]:
    dataset = await load_knowledge_base(request, auth, payload.datasetId, "read")
    usage = await knowledge_bases(request).tags.usage(auth.team_id, dataset.id)
    return envelope([{"tagId": tag_id, "usage": len(ids), "collections": ids} for tag_id, ids in usage])


@_tag_route("addToCollections", "Put a tag on collections (and take it off others)", None)
async def add_to_collections(
    request: Request,
    auth: AuthContext = Depends(kb_caller),
    payload: AddToCollections = parsed(AddToCollections),
) -> dict[str, Any]:
    """The tag goes on ``collectionIds`` and comes off ``originCollectionIds`` not among them; every
    collection must be the knowledge base's, else nothing changes."""
    dataset = await load_knowledge_base(request, auth, payload.datasetId, "write")
    await knowledge_bases(request).tags.put_on(
        auth.team_id, dataset.id, payload.tag, payload.collectionIds, payload.originCollectionIds or []
    )
    return envelope(None)
