"""The context reminder injected into the current user message (spec §3.10).

``<system-reminder>`` … ``</system-reminder>`` then the original query; sections (skills, conversation
files, datasets, background) appear only when non-empty, joined by blank lines; every value is
XML-escaped (``& < > " '``). With no section the query is returned unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"}


def _escape_xml(value: Any) -> str:
    """Escape ``& < > " '``."""
    return "".join(_ESCAPES.get(ch, ch) for ch in str(value))


def _get(item: Any, *keys: str) -> Any:
    for key in keys:
        value = item.get(key) if isinstance(item, Mapping) else getattr(item, key, None)
        if value not in (None, ""):
            return value
    return None


@dataclass(frozen=True)
class ReminderBackground:
    """The background section: current time and the sandbox working directory (either optional)."""

    current_time: str | None = None
    sandbox_workdir: str | None = None


def _skills_section(skills: Sequence[Any]) -> str:
    """``<available_skills>`` with each skill's name, description and SKILL.md location."""
    if not skills:
        return ""
    items = "\n".join(
        "<skill>"
        f"<name>{_escape_xml(_get(s, 'name') or '')}</name>"
        f"<description>{_escape_xml(_get(s, 'description') or '')}</description>"
        f"<location>{_escape_xml(_get(s, 'location', 'path') or '')}</location>"
        "</skill>"
        for s in skills
    )
    return (
        f"<available_skills>\n{items}\n</available_skills>\n"
        "Before using a skill, read its full SKILL.md with sandbox_read_file, then follow it."
    )


def _files_section(files: Sequence[Any]) -> str:
    """Conversation files (``<file><name/><type/><url/>[<sandboxPath/>]</file>``) readable by read_files."""
    if not files:
        return ""
    rows = []
    for f in files:
        sandbox_path = _get(f, "sandboxPath", "sandbox_path")
        rows.append(
            "<file>"
            f"<name>{_escape_xml(_get(f, 'name') or '')}</name>"
            f"<type>{_escape_xml(_get(f, 'type') or '')}</type>"
            f"<url>{_escape_xml(_get(f, 'url') or '')}</url>"
            + (f"<sandboxPath>{_escape_xml(sandbox_path)}</sandboxPath>" if sandbox_path else "")
            + "</file>"
        )
    return "Files in this conversation (read documents with read_files):\n" + "\n".join(rows)


def _datasets_section(datasets: Sequence[Any]) -> str:
    """Available knowledge bases (``<dataset><id/><name/>[<description/>]</dataset>``)."""
    if not datasets:
        return ""
    rows = []
    for d in datasets:
        description = _get(d, "description", "intro")
        rows.append(
            "<dataset>"
            f"<id>{_escape_xml(_get(d, 'id', 'datasetId') or '')}</id>"
            f"<name>{_escape_xml(_get(d, 'name') or '')}</name>"
            + (f"<description>{_escape_xml(description)}</description>" if description else "")
            + "</dataset>"
        )
    return "Knowledge bases you can search with dataset_search:\n" + "\n".join(rows)


def _background_section(background: ReminderBackground | None) -> str:
    """Current time and sandbox working directory."""
    if background is None:
        return ""
    lines = []
    if background.current_time:
        lines.append(f"Current time: {_escape_xml(background.current_time)}")
    if background.sandbox_workdir:
        lines.append(f"Sandbox working directory: {_escape_xml(background.sandbox_workdir)}")
    return "\n".join(lines)


def build_context_reminder(
    query: str,
    *,
    skills: Sequence[Any] = (),
    files: Sequence[Any] = (),
    datasets: Sequence[Any] = (),
    background: ReminderBackground | None = None,
) -> str:
    """The current user message with its ``<system-reminder>`` (unchanged when no section applies)."""
    sections = [
        section
        for section in (
            _skills_section(skills),
            _files_section(files),
            _datasets_section(datasets),
            _background_section(background),
        )
        if section
    ]
    if not sections:
        return query
    return "<system-reminder>\n" + "\n\n".join(sections) + "\n</system-reminder>\n" + query


def build_history_reminder(query: str, files: Sequence[Any]) -> str:
    """A historical user message: files section only (never datasets or time), so ids stay stable."""
    return build_context_reminder(query, files=files)
