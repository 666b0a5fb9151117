"""Variable references and text templates (FastGPT ``getReferenceVariableValue``,
``replaceVariable``, ``replaceEditorVariable``), system-variable stripping and history selection.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from fathom.workflow.constants import MAX_TEMPLATE_DEPTH, SYSTEM_VARIABLE_KEYS, VARIABLE_NODE_ID
from fathom.workflow.runtime import RuntimeNode
from fathom.workflow.values import format_variable_val_by_type, js_truthy, val_to_str

NodeIndex = Mapping[str, RuntimeNode]

_GLOBAL_PATTERN = re.compile(r"\{\{([^}]+)\}\}")
_NODE_PATTERN = re.compile(r"\{\{\$([^.]+)\.([^$]+)\$\}\}")


def is_reference(value: Any) -> bool:
    """``[nodeId, outputId]`` with two strings (FastGPT ``isValidReferenceValueFormat``)."""
    return (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and isinstance(value[0], str)
        and isinstance(value[1], str)
    )


def get_reference_variable_value(value: Any, nodes: NodeIndex, variables: Mapping[str, Any]) -> Any:
    """Resolve a reference or a list of references; anything else is returned unchanged.

    ``VARIABLE_NODE_ID`` reads a global variable; an unknown node id returns the raw value (so a
    two-string array literal survives); a list of references is resolved, flattened one level and
    missing values dropped.
    """
    if not js_truthy(value):
        return value
    if is_reference(value):
        node_id, output_id = value[0], value[1]
        if node_id == VARIABLE_NODE_ID:
            return variables.get(output_id) if output_id else None
        node = nodes.get(node_id)
        if node is None:
            return value
        output = node.outputs_by_id.get(output_id)
        return output.value if output is not None else None
    if isinstance(value, list) and value and all(is_reference(item) for item in value):
        result: list[Any] = []
        for item in value:
            resolved = get_reference_variable_value(item, nodes, variables)
            if isinstance(resolved, list):
                result.extend(x for x in resolved if x is not None)
            elif resolved is not None:
                result.append(resolved)
        return result
    return value


def _self_reference(value_text: str, token: str) -> bool:
    return token in value_text


def replace_variable(text: Any, values: Mapping[str, Any], depth: int = 0) -> Any:
    """Replace ``{{key}}`` with ``values[key]`` for keys present (recursion depth ≤ 10).

    A value that contains its own placeholder is left unreplaced (no self-expansion).
    """
    if not isinstance(text, str) or "{{" not in text or depth > MAX_TEMPLATE_DEPTH:
        return text
    keys = {match.group(1) for match in _GLOBAL_PATTERN.finditer(text)}
    replaced = False
    for key in keys:
        if key not in values:
            continue
        rendered = val_to_str(values[key])
        token = "{{" + key + "}}"
        if _self_reference(rendered, token):
            continue
        text = text.replace(token, rendered)
        replaced = True
    if (
        replaced
        and _GLOBAL_PATTERN.search(text)
        and any(m.group(1) in values for m in _GLOBAL_PATTERN.finditer(text))
    ):
        return replace_variable(text, values, depth + 1)
    return text


def _node_value(node_id: str, key: str, nodes: NodeIndex, variables: Mapping[str, Any]) -> Any:
    if node_id == VARIABLE_NODE_ID:
        return variables.get(key)
    node = nodes.get(node_id)
    if node is None:
        return None
    output = node.outputs_by_id.get(key)
    if output is not None:
        return format_variable_val_by_type(output.value, output.value_type)
    node_input = node.input(key)
    if node_input is not None:
        return get_reference_variable_value(node_input.value, nodes, variables)
    return None


def replace_editor_variable(text: Any, nodes: NodeIndex, variables: Mapping[str, Any], depth: int = 0) -> Any:
    """Render a text input: ``{{key}}`` globals, then ``{{$nodeId.outputId$}}`` references.

    A reference to a missing output falls back to the node's input of that key; self-referencing
    values are skipped; nested templates are expanded up to depth 10.
    """
    if not isinstance(text, str) or text == "" or depth > MAX_TEMPLATE_DEPTH:
        return text
    text = replace_variable(text, variables)
    if "{{$" not in text:
        return text
    done: set[tuple[str, str]] = set()
    replaced = False
    for match in list(_NODE_PATTERN.finditer(text)):
        node_id, key = match.group(1), match.group(2)
        if (node_id, key) in done:
            continue
        done.add((node_id, key))
        value = _node_value(node_id, key, nodes, variables)
        token = "{{$" + node_id + "." + key + "$}}"
        rendered = val_to_str(value)
        if _self_reference(rendered, token):
            continue
        text = text.replace(token, rendered)
        replaced = True
    if replaced and _NODE_PATTERN.search(text):
        return replace_editor_variable(text, nodes, variables, depth + 1)
    return text


def remove_system_variable(
    variables: Mapping[str, Any], external_keys: Iterable[str] = (), extra_keys: Iterable[str] = ()
) -> dict[str, Any]:
    """Variables without the system keys (``userId``, ``appId``, ``chatId``, ``responseChatItemId``,
    ``histories``, ``cTime``) and without external-provider keys."""
    drop = set(SYSTEM_VARIABLE_KEYS) | set(external_keys) | set(extra_keys)
    return {key: value for key, value in variables.items() if key not in drop}


def get_histories(history: Any, histories: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Select chat history for a node: a number ``n`` keeps the last ``n`` rounds (``2n`` items),
    a list is used as given; leading system items are always kept; falsy selects nothing."""
    if not js_truthy(history):
        return []
    first_chat = next((i for i, item in enumerate(histories) if item.get("obj") != "System"), -1)
    if first_chat == -1:
        system, chat = histories[:-1], histories[-1:]
    else:
        system, chat = histories[:first_chat], histories[first_chat:]
    if isinstance(history, bool):
        selected: list[dict[str, Any]] = []
    elif isinstance(history, (int, float)):
        count = int(history * 2)
        selected = chat[-count:] if count > 0 else list(chat)
    elif isinstance(history, list):
        selected = history
    else:
        selected = []
    return [*system, *selected]


def chat_value_to_text(query: Any) -> tuple[str, list[dict[str, Any]]]:
    """Text and files of a user query (a string or FastGPT chat values), like ``chatValue2RuntimePrompt``."""
    if query is None:
        return "", []
    if isinstance(query, str):
        return query, []
    texts: list[str] = []
    files: list[dict[str, Any]] = []
    for item in query:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "text" or "text" in item:
            content = (item.get("text") or {}).get("content")
            if isinstance(content, str):
                texts.append(content)
        if item.get("type") == "file" or "file" in item:
            file = item.get("file")
            if isinstance(file, dict):
                files.append(file)
    return "\n".join(texts), files


def text_query(text: str) -> list[dict[str, Any]]:
    """A user query holding one text value."""
    return [{"type": "text", "text": {"content": text}}]
