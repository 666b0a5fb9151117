"""SQL implementations of the repository Protocols, one class per domain term."""

from fathom.store.repositories.accounts import SqlAccountRepository
from fathom.store.repositories.api_keys import SqlApiKeyRepository
from fathom.store.repositories.apps import SqlAppRepository
from fathom.store.repositories.chats import SqlChatRepository
from fathom.store.repositories.jobs import SqlJobQueue
from fathom.store.repositories.share_links import SqlShareLinkRepository
from fathom.store.repositories.teams import SqlTeamRepository
from fathom.store.repositories.usage import SqlUsageRepository

__all__ = [
    "SqlAccountRepository",
    "SqlApiKeyRepository",
    "SqlAppRepository",
    "SqlChatRepository",
    "SqlJobQueue",
    "SqlShareLinkRepository",
    "SqlTeamRepository",
    "SqlUsageRepository",
]
