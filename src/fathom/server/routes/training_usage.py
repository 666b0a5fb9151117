"""FastGPT's training bill: ``POST /api/support/wallet/usage/createTrainingUsage`` ``{datasetId, name?}``
answers a ``billId`` that ``pushData`` and the collection imports accept; the usage records of those
trainings carry it, and ``/api/support/usage/summary`` lists the totals per bill (``byBill``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import Field, StringConstraints

from fathom.server.auth import AuthContext
from fathom.server.errors import envelope
from fathom.server.routes.common import ANY_METHOD
from fathom.server.routes.datasets import kb_caller, load_dataset
from fathom.server.routes.knowledge_routing import knowledge_bases
from fathom.server.typed import BLANK_IS_NONE, ApiModel, ObjectId, answers, parsed

router = APIRouter(tags=["usage"])

BILL_NAME_MAX = 200


class CreateTrainingUsage(ApiModel):
    datasetId: ObjectId
    name: Annotated[
        Annotated[str, StringConstraints(strip_whitespace=True, max_length=BILL_NAME_MAX)] | None,
        BLANK_IS_NONE,
    ] = Field(None, description="The bill's name (default: the knowledge base's)", examples=["docs-import"])


@router.api_route(
    "/api/support/wallet/usage/createTrainingUsage",
    methods=ANY_METHOD,
    summary="Create a training bill (its id is the billId trainings name)",
    responses=answers(str, description="``data`` is the billId"),
)
async def create_training_usage(
    request: Request,
    auth: AuthContext = Depends(kb_caller),
    payload: CreateTrainingUsage = parsed(CreateTrainingUsage),
) -> dict[str, Any]:
    """Needs write permission on the knowledge base, as FastGPT's does."""
    dataset, _ = await load_dataset(request, auth, payload.datasetId, "write")
    bill_id = await knowledge_bases(request).training.create_bill(
        auth.team_id,
        dataset.id,
        payload.name or dataset.name,
        member_id=auth.member_id,
        api_key_id=auth.api_key_id,
    )
    return envelope(bill_id)
