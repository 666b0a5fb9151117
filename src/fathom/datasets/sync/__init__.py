"""Knowledge that stays current: FastGPT's API file library, website datasets, and re-sync by content
hash, on demand and on a schedule (``autoSync``)."""

from fathom.datasets.sync.api_library import ApiFileLibrary, ApiLibraryError, ApiServer
from fathom.datasets.sync.crawl import WebsiteConfig
from fathom.datasets.sync.scheduler import SyncScheduler
from fathom.datasets.sync.service import SYNC_JOB_KIND, NotSyncable, SourceGone, SourceSyncService
from fathom.security import EgressDenied, EgressRedirectError, EgressSizeError

#: the egress guard's refusals of a source address (private, redirected away, too large): a source the
#: server will not read, answered as the user's error rather than a fault
SOURCE_REFUSED: tuple[type[Exception], ...] = (EgressDenied, EgressRedirectError, EgressSizeError)

__all__ = [
    "SOURCE_REFUSED",
    "SYNC_JOB_KIND",
    "ApiFileLibrary",
    "ApiLibraryError",
    "ApiServer",
    "NotSyncable",
    "SourceGone",
    "SourceSyncService",
    "SyncScheduler",
    "WebsiteConfig",
]
