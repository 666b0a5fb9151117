"""Built-in node handlers, one module per node family, registered by ``flowNodeType`` into
:data:`fathom.workflow.dispatch.default_registry` on import."""

from . import (  # noqa: F401  (imported for registration)
    answer,
    app_module,
    chat,
    code,
    custom_feedback,
    dataset,
    form_input,
    http_request,
    if_else,
    loop,
    noop,
    plugin_io,
    start,
    text_editor,
    user_select,
    variable_update,
)
