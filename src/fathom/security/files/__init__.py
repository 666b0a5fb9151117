"""Workflow file contexts (spec §6.5): registration, ownership, signed previews, child isolation."""

from fathom.security.files.context import (
    PreparedWorkflowFileContext,
    WorkflowFileContext,
    WorkflowFileRegistrar,
    prepare_workflow_file_context,
)
from fathom.security.files.derive import (
    ChildFileRegistrar,
    DerivedWorkflowFiles,
    WorkflowFileStore,
    current_workflow_files,
    run_with_derived_workflow_file_context,
    set_workflow_files,
)
from fathom.security.files.refs import (
    ChatKeyOwnerLookup,
    ChatObjectSource,
    ExternalHttpSource,
    FileLimits,
    FileOwnerLookup,
    FileScope,
    FileSource,
    FileUrlWhitelist,
    WorkflowFileError,
    WorkflowFileRef,
    external_identity,
    is_absolute_http_url,
)
from fathom.security.files.signing import PreviewUrlError, PreviewUrlSigner

__all__ = [
    "ChatKeyOwnerLookup",
    "ChatObjectSource",
    "ChildFileRegistrar",
    "DerivedWorkflowFiles",
    "ExternalHttpSource",
    "FileLimits",
    "FileOwnerLookup",
    "FileScope",
    "FileSource",
    "FileUrlWhitelist",
    "PreparedWorkflowFileContext",
    "PreviewUrlError",
    "PreviewUrlSigner",
    "WorkflowFileContext",
    "WorkflowFileError",
    "WorkflowFileRef",
    "WorkflowFileRegistrar",
    "WorkflowFileStore",
    "current_workflow_files",
    "external_identity",
    "is_absolute_http_url",
    "prepare_workflow_file_context",
    "run_with_derived_workflow_file_context",
    "set_workflow_files",
]
