"""The context reminder (spec §3.10)."""

from __future__ import annotations

from fathom.agent import ReminderBackground, build_context_reminder, build_history_reminder
from fathom.agent.reminder import _escape_xml


def test_no_sections_leaves_the_query_unchanged() -> None:
    assert build_context_reminder("hello") == "hello"
    assert build_context_reminder("hello", background=ReminderBackground()) == "hello"


def test_values_are_xml_escaped() -> None:
    assert _escape_xml("a&b<c>\"d'") == "a&amp;b&lt;c&gt;&quot;d&apos;"


def test_sections_in_order_separated_by_blank_lines() -> None:
    text = build_context_reminder(
        "What now?",
        skills=[{"name": "pdf", "description": "Read <PDF>", "location": "/skills/pdf/SKILL.md"}],
        files=[{"name": "a&b.pdf", "type": "pdf", "url": "https://f/a.pdf", "sandboxPath": "/w/a.pdf"}],
        datasets=[{"id": "d1", "name": "Docs"}],
        background=ReminderBackground(current_time="2026-11-29 10:00", sandbox_workdir="/w"),
    )
    assert text == (
        "<system-reminder>\n"
        "<available_skills>\n<skill><name>pdf</name><description>Read &lt;PDF&gt;</description>"
        "<location>/skills/pdf/SKILL.md</location></skill>\n</available_skills>\n"
        "Before using a skill, read its full SKILL.md with sandbox_read_file, then follow it.\n\n"
        "Files in this conversation (read documents with read_files):\n"
        "<file><name>a&amp;b.pdf</name><type>pdf</type><url>https://f/a.pdf</url>"
        "<sandboxPath>/w/a.pdf</sandboxPath></file>\n\n"
        "Knowledge bases you can search with dataset_search:\n"
        "<dataset><id>d1</id><name>Docs</name></dataset>\n\n"
        "Current time: 2026-11-29 10:00\nSandbox working directory: /w\n"
        "</system-reminder>\nWhat now?"
    )


def test_history_messages_get_the_files_section_only() -> None:
    text = build_history_reminder("old", [{"name": "x", "type": "txt", "url": "u"}])
    assert "<file>" in text and "<dataset>" not in text and "Current time" not in text
