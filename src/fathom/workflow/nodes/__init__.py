"""Built-in node handlers, one module per node family, registered by ``flowNodeType`` into
:data:`fathom.workflow.dispatch.default_registry` on import."""

from . import (  # noqa: F401  (imported for registration)
    agent,
    answer,
    app_module,
    chat,
    classify_question,
    code,
    content_extract,
    custom_feedback,
    dataset,
    form_input,
    http_request,
    if_else,
    loop,
    noop,
    plugin_io,
    plugin_module,
    query_extension,
    read_files,
    start,
    text_editor,
    tool_call,
    tool_node,
    user_select,
    variable_update,
)
