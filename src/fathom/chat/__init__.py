"""fathom.chat: the application services between HTTP and the engines — apps and versions (simple
apps compiled to workflows), chat runs (history per ``chatId``, variable merge, interactive resume,
numbered frames for SSE and resumption, stop), chat items and usage records, chat history."""

from fathom.chat.application import ChatApplication
from fathom.chat.apps import (
    SIMPLE_KEY,
    AppGraph,
    AppService,
    TeamChildAppLoader,
    check_workflow,
    draft_workflow,
    tool_config_status,
    version_workflow,
)
from fathom.chat.channel import DONE, ChatKey, Frame, RunChannel, RunRegistry
from fathom.chat.chat_logs import AdminFeedback, ChatLogService
from fathom.chat.chat_service import ChatService
from fathom.chat.errors import (
    APP_KEY_REQUIRED,
    DATA_ID_REQUIRED,
    MESSAGES_EMPTY,
    MESSAGES_NOT_ARRAY,
    USER_QUESTION_EMPTY,
    WORKFLOW_TOO_OLD,
    AppNotPublished,
    ChatError,
    ChatForbidden,
    WorkflowCheckFailed,
)
from fathom.chat.history import HistoryService, record_preview
from fathom.chat.ids import nanoid
from fathom.chat.messages import split_messages, value_text
from fathom.chat.projection import completion_response, frame_visible
from fathom.chat.run_services import NO_MODEL_HINT, ModelPool, NoChatModelConfigured, RunServicesFactory
from fathom.chat.run_state import ChatOutcome, ChatRequest, PreparedRun
from fathom.chat.secret_variables import public_chat_config, without_password_variables
from fathom.chat.simple_app import compile_simple_app, validate_simple_config
from fathom.chat.templates import apply_template, template_detail, template_list
from fathom.store.protocols import ChatLogEntry, ChatLogQuery, FeedbackFilter
from fathom.workflow import text_adapt_gpt_response
from fathom.workflow.nodes.system_tools import system_tool_templates

__all__ = [
    "text_adapt_gpt_response",
    "AdminFeedback",
    "ChatLogEntry",
    "ChatLogQuery",
    "ChatLogService",
    "FeedbackFilter",
    "public_chat_config",
    "without_password_variables",
    "apply_template",
    "system_tool_templates",
    "template_detail",
    "template_list",
    "APP_KEY_REQUIRED",
    "DATA_ID_REQUIRED",
    "DONE",
    "MESSAGES_EMPTY",
    "MESSAGES_NOT_ARRAY",
    "NO_MODEL_HINT",
    "SIMPLE_KEY",
    "USER_QUESTION_EMPTY",
    "WORKFLOW_TOO_OLD",
    "AppGraph",
    "AppNotPublished",
    "AppService",
    "ChatApplication",
    "ChatError",
    "ChatForbidden",
    "WorkflowCheckFailed",
    "ChatKey",
    "ChatOutcome",
    "ChatRequest",
    "ChatService",
    "Frame",
    "HistoryService",
    "ModelPool",
    "NoChatModelConfigured",
    "PreparedRun",
    "RunChannel",
    "RunRegistry",
    "RunServicesFactory",
    "TeamChildAppLoader",
    "check_workflow",
    "compile_simple_app",
    "completion_response",
    "draft_workflow",
    "tool_config_status",
    "frame_visible",
    "nanoid",
    "record_preview",
    "split_messages",
    "validate_simple_config",
    "value_text",
    "version_workflow",
]
