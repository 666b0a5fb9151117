"""Knowledge that stays current: FastGPT's API file library, website datasets, and re-sync by content
hash, on demand and on a schedule (``autoSync``)."""

from fathom.datasets.sync.api_library import ApiFileLibrary, ApiLibraryError, ApiServer
from fathom.datasets.sync.crawl import WebsiteConfig
from fathom.datasets.sync.scheduler import SyncScheduler
from fathom.datasets.sync.service import SYNC_JOB_KIND, NotSyncable, SourceGone, SourceSyncService

__all__ = [
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
