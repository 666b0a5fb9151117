"""Who owns a chat, and the one rule for who may do what to it (DESIGN §2: "everything a caller makes
has an owner").

A chat is owned by exactly one of:

- a **member** — a console session (or the editor's chat test) started it;
- an **API key** — the key's own identity, never the member who created the key;
- a **share-link visitor** — the link's ``shareId`` and the visitor's ``outLinkUid``.

The rule (FastGPT's ``authChatCrud``, made stricter for keys): the owner may do everything; a caller
who manages the app (FastGPT's chat-log permission) may read and delete any chat of it, never append to
it or change it; anyone else is answered as for a chat that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fathom.store.protocols import ChatRecord

OwnerKind = Literal["member", "key", "visitor"]
ChatAction = Literal["read", "write", "delete"]
MEMBER: OwnerKind = "member"
KEY: OwnerKind = "key"
VISITOR: OwnerKind = "visitor"
# what managing the app (and not owning the chat) allows
_MANAGER_ACTIONS: frozenset[str] = frozenset({"read", "delete"})


def owner_kind(*, api_key_id: str | None, share_id: str | None) -> OwnerKind:
    """The kind of owner a new chat gets from the request that starts it."""
    if share_id:
        return VISITOR
    return KEY if api_key_id else MEMBER


def _identity(
    kind: str | None,
    member_id: str | None,
    api_key_id: str | None,
    share_id: str | None,
    out_link_uid: str | None,
) -> tuple[str, ...] | None:
    """Who an owner is, comparable: the kind and the ids that name one of that kind (None: nobody)."""
    if kind == VISITOR and share_id is not None and out_link_uid is not None:
        return (VISITOR, share_id, out_link_uid)
    if kind == KEY and api_key_id is not None:
        return (KEY, api_key_id)
    if kind == MEMBER and member_id is not None:
        return (MEMBER, member_id)
    return None


@dataclass(frozen=True)
class ChatCaller:
    """Who asks for a chat, as the access rule sees them.

    ``kind`` None is nobody (a visitor of an expired link): they own nothing. ``manages_app``: the
    caller may manage the chat's app (never true for a visitor or a key limited to one app)."""

    kind: OwnerKind | None
    member_id: str | None = None
    api_key_id: str | None = None
    share_id: str | None = None
    out_link_uid: str | None = None
    manages_app: bool = False

    @classmethod
    def of_member_or_key(cls, member_id: str, api_key_id: str | None, *, manages_app: bool) -> ChatCaller:
        """A console session (no key) or an API key; the key is the owner of what it starts."""
        if api_key_id:
            return cls(KEY, member_id=member_id, api_key_id=api_key_id, manages_app=manages_app)
        return cls(MEMBER, member_id=member_id, manages_app=manages_app)

    @classmethod
    def of_visitor(cls, share_id: str, out_link_uid: str, *, link_live: bool = True) -> ChatCaller:
        """A share-link visitor; the visitor of an expired link owns nothing any more."""
        if not link_live:
            return cls(None)
        return cls(VISITOR, share_id=share_id, out_link_uid=out_link_uid)

    def owns(self, chat: ChatRecord) -> bool:
        """Whether ``chat`` is this caller's own."""
        mine = _identity(self.kind, self.member_id, self.api_key_id, self.share_id, self.out_link_uid)
        theirs = _identity(chat.owner_kind, chat.member_id, chat.api_key_id, chat.share_id, chat.out_link_uid)
        return mine is not None and mine == theirs

    def same_owner(self, other: object) -> bool:
        """Whether ``other`` (the caller that started a run) is this caller's own identity."""
        if not isinstance(other, ChatCaller):
            return False
        mine = _identity(self.kind, self.member_id, self.api_key_id, self.share_id, self.out_link_uid)
        theirs = _identity(other.kind, other.member_id, other.api_key_id, other.share_id, other.out_link_uid)
        return mine is not None and mine == theirs

    def may(self, chat: ChatRecord | None, action: ChatAction) -> bool:
        """The access rule: the owner may do anything, an app manager may read and delete."""
        if chat is None:
            return False
        return self.owns(chat) or (self.manages_app and action in _MANAGER_ACTIONS)


__all__ = ["ChatAction", "ChatCaller", "OwnerKind", "owner_kind"]
