"""The model-visible tool catalog of one run: runtime tools plus enabled system tools (spec §3.6.1).

Runtime tools whose name equals an enabled system tool are removed. Model-visible order: runtime tools,
``ask_user``, ``set_plan``, ``update_plan``, sandbox tools, ``read_files``, ``dataset_search``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from fathom.agent.system_tools.ask import ASK_USER, ASK_USER_SCHEMA
from fathom.agent.system_tools.files_search import (
    DATASET_SEARCH,
    DATASET_SEARCH_SCHEMA,
    LEGACY_READ_FILES,
    READ_FILES,
    read_files_schema,
)
from fathom.agent.system_tools.plan import SET_PLAN, SET_PLAN_SCHEMA, UPDATE_PLAN, UPDATE_PLAN_SCHEMA
from fathom.agent.system_tools.sandbox import sandbox_tool_schemas
from fathom.agent.types import SystemToolsConfig
from fathom.tools import ToolDefinition, as_tool_definition

ToolKind = Literal["runtime", "ask", "plan", "sandbox", "read_files", "dataset_search"]
CONTROL_KINDS = ("ask", "plan")


@dataclass
class RunCatalog:
    """Schemas the model sees, runtime definitions by name, and each visible name's kind."""

    schemas: list[dict[str, Any]] = field(default_factory=list)
    runtime: dict[str, ToolDefinition] = field(default_factory=dict)
    kinds: dict[str, ToolKind] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)

    def kind(self, name: str) -> ToolKind:
        """The kind of a called name (unknown names are runtime calls: ``Call tool not found``)."""
        return self.kinds.get(name, "runtime")

    def is_batchable(self, name: str) -> bool:
        """``canBatchTool``: only runtime tools run concurrently; system tools run serially."""
        return self.kind(name) == "runtime"


def _enabled_system_tools(config: SystemToolsConfig) -> list[tuple[str, ToolKind, dict[str, Any]]]:
    """Enabled system tools as ``(name, kind, schema)`` in model-visible order."""
    items: list[tuple[str, ToolKind, dict[str, Any]]] = []
    if config.ask:
        items.append((ASK_USER, "ask", ASK_USER_SCHEMA))
    if config.plan:
        items += [(SET_PLAN, "plan", SET_PLAN_SCHEMA), (UPDATE_PLAN, "plan", UPDATE_PLAN_SCHEMA)]
    if config.sandbox is not None and config.sandbox.enabled:
        items += [(s["function"]["name"], "sandbox", s) for s in sandbox_tool_schemas()]
    if config.read_file is not None and config.read_file.enabled:
        items.append((READ_FILES, "read_files", read_files_schema(config.read_file.max_file_amount)))
    if config.dataset_search is not None and config.dataset_search.enabled:
        items.append((DATASET_SEARCH, "dataset_search", DATASET_SEARCH_SCHEMA))
    return items


def _schema_only(ctx: Any) -> Any:
    raise RuntimeError("this tool has only a schema: give the runtime an execute_tool")


def _definition(tool: Any) -> ToolDefinition:
    """A runtime tool: a ToolDefinition, a seed-002/004 dict, or a plain OpenAI tool schema (which
    then needs ``runtime.execute_tool``)."""
    if isinstance(tool, Mapping) and "execute" not in tool and isinstance(tool.get("function"), Mapping):
        return ToolDefinition.from_model_tool(tool, _schema_only)
    return as_tool_definition(tool)


def build_run_catalog(runtime_tools: Sequence[Any], config: SystemToolsConfig) -> RunCatalog:
    """Normalise the catalog of one run (collisions removed, spec order)."""
    system = _enabled_system_tools(config)
    system_names = {name for name, _, _ in system}
    if any(kind == "read_files" for _, kind, _ in system):
        system_names.add(LEGACY_READ_FILES)
    catalog = RunCatalog()
    for tool in runtime_tools:
        definition = _definition(tool)
        if definition.name in system_names:
            catalog.removed.append(definition.name)
            continue
        catalog.runtime[definition.name] = definition
        catalog.kinds[definition.name] = "runtime"
        catalog.schemas.append(definition.schema)
    for name, kind, schema in system:
        catalog.kinds[name] = kind
        catalog.schemas.append(schema)
    if LEGACY_READ_FILES in system_names:
        catalog.kinds[LEGACY_READ_FILES] = "read_files"
    return catalog


__all__ = ["CONTROL_KINDS", "RunCatalog", "ToolKind", "build_run_catalog"]
