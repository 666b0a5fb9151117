"""Request and answer models of the chat history routes (``routes/history.py``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from fathom.server.pagination import PageQuery
from fathom.server.typed import ApiModel, Flag, ObjectId, OptionalObjectId, Token

TITLE_MAX = 500  # a chat's title and customTitle, in characters
Title = Annotated[str, StringConstraints(max_length=TITLE_MAX)]
Source = Annotated[str, StringConstraints(max_length=32)]


class Visitor(ApiModel):
    """A share page's visitor fields (FastGPT's outLink form): with them no key is needed."""

    shareId: Token | None = Field(None, description="The share link a visitor chats through")
    outLinkUid: Token | None = Field(None, description="The visitor's id on that link")


class ListHistories(PageQuery, Visitor):
    appId: OptionalObjectId = Field(None, description="The app (no app: an empty list)")
    source: Source | None = Field(None, description="Only chats of this channel (api, online, share, test)")


class ChatOfApp(ApiModel):
    appId: ObjectId
    chatId: Token = Field(description="The chat")


class UpdateHistory(ChatOfApp):
    title: Title | None = None
    customTitle: Title | None = None
    top: Flag = Field(None, description="Pin (true) or unpin (false)")


class ClearHistories(ApiModel):
    appId: ObjectId


class ChatInit(ApiModel):
    appId: ObjectId
    chatId: Token | None = Field(None, description="A chat to resume (absent: a new one)")


class Records(PageQuery, Visitor):
    appId: OptionalObjectId = None
    chatId: Token | None = None
    loadCustomFeedbacks: Flag = None


class ResData(Visitor):
    appId: OptionalObjectId = None
    chatId: Token | None = None
    dataId: Token | None = Field(None, description="The answer's dataId")


class DeleteRecord(ApiModel):
    appId: ObjectId
    chatId: Token | None = None
    contentId: Token | None = Field(None, description="The record's dataId (FastGPT's name)")
    dataId: Token | None = None


class HistoryItem(BaseModel):
    chatId: str
    updateTime: str | None
    appId: str
    customTitle: str
    title: str
    top: bool


class RecordView(BaseModel):
    """A chat record: obj, value, dataId, feedback."""

    model_config = ConfigDict(extra="allow")


class ChatInitView(BaseModel):
    chatId: str
    appId: str
    title: str | None
    variables: dict[str, Any]
    app: dict[str, Any] = Field(description="The app's chat settings, name, avatar and intro")


class ShareInitView(ChatInitView):
    """``outLink/init``: ``core/chat/init``'s data plus what the page may show of the link."""

    outLink: dict[str, Any] = Field(description="The link's name and visibility settings")


class ChatLogView(BaseModel):
    """One conversation of an app's logs (FastGPT's getChatLogs item)."""

    id_: str = Field(alias="_id")
    id: str
    chatId: str
    title: str
    customTitle: str
    source: str
    time: str | None
    updateTime: str | None
    createTime: str | None
    messageCount: int
    userGoodFeedbackCount: int
    userBadFeedbackCount: int
    markCount: int
    averageResponseTime: float | None
    tmbId: str | None
    outLinkUid: str | None
    shareId: str | None
    ownerType: Literal["member", "key", "visitor"] = Field(description="Who owns the chat")
    ownerName: str = Field(description="The member's or the key's name, or the visitor's outLinkUid")
    apiKeyId: str | None = Field(None, description="The key that owns a key's chat")
