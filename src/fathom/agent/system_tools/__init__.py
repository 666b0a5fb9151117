"""System tools of the agent loop: plan, ask, sandbox, read_files, dataset_search (spec §3.7)."""

from fathom.agent.system_tools.ask import (
    ASK_INVALID_JSON,
    ASK_USER,
    ASK_USER_SCHEMA,
    ASK_WAITING_RESPONSE,
    BLOCKER_TYPES,
    build_ask_answer_text,
    parse_ask_arguments,
)
from fathom.agent.system_tools.catalog import RunCatalog, build_run_catalog
from fathom.agent.system_tools.files_search import (
    DATASET_SEARCH,
    DATASET_SEARCH_NOT_AVAILABLE,
    READ_FILE_NOT_AVAILABLE,
    READ_FILES,
    run_dataset_search,
    run_read_files,
)
from fathom.agent.system_tools.plan import (
    SET_PLAN,
    STEP_STATUSES,
    UPDATE_PLAN,
    PlanOutcome,
    is_plan_finished,
    normalize_plan,
    run_set_plan,
    run_update_plan,
)
from fathom.agent.system_tools.sandbox import (
    SANDBOX_METHODS,
    SANDBOX_NOT_AVAILABLE,
    SANDBOX_TOOL_NAMES,
    run_sandbox_tool,
    sandbox_tool_schemas,
)

__all__ = [
    "ASK_INVALID_JSON",
    "ASK_USER",
    "ASK_USER_SCHEMA",
    "ASK_WAITING_RESPONSE",
    "BLOCKER_TYPES",
    "DATASET_SEARCH",
    "DATASET_SEARCH_NOT_AVAILABLE",
    "READ_FILES",
    "READ_FILE_NOT_AVAILABLE",
    "SANDBOX_METHODS",
    "SANDBOX_NOT_AVAILABLE",
    "SANDBOX_TOOL_NAMES",
    "SET_PLAN",
    "STEP_STATUSES",
    "UPDATE_PLAN",
    "PlanOutcome",
    "RunCatalog",
    "build_ask_answer_text",
    "build_run_catalog",
    "is_plan_finished",
    "normalize_plan",
    "parse_ask_arguments",
    "run_dataset_search",
    "run_read_files",
    "run_sandbox_tool",
    "run_set_plan",
    "run_update_plan",
    "sandbox_tool_schemas",
]
