"""The refusals of the knowledge-base services. The server maps each to FastGPT's answer (status code,
``statusText`` and message); the message names the field and the fix."""

from __future__ import annotations


class DatasetRequestError(Exception):
    """A knowledge-base request the service refuses; ``str(exc)`` is the message the caller sees."""


class InvalidDatasetRequest(DatasetRequestError):
    """A value the request sent cannot be used (FastGPT's ``invalidParams``); the message names it."""


class EmbeddingModelNotConfigured(DatasetRequestError):
    """The embedding model asked for is not configured here (FastGPT: ``System not embedding model: …``)."""

    def __init__(self, model_id: str) -> None:
        super().__init__(f"System not embedding model: {model_id}")
        self.model_id = model_id


class TagExists(DatasetRequestError):
    """A tag of that name is already in the knowledge base."""

    def __init__(self) -> None:
        super().__init__("Tag already exists")


class TagMissing(DatasetRequestError):
    """The knowledge base has no tag with that id."""

    def __init__(self) -> None:
        super().__init__("Tag not found")


class CollectionMissing(DatasetRequestError):
    """A collection the request names is not the knowledge base's (FastGPT's ``unExistCollection``)."""


class RecordMissing(DatasetRequestError):
    """The record the request names does not exist for the caller: ``kind`` is FastGPT's record kind
    (``data``, ``collection``…), answered as the same "does not exist" as any other missing record."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
