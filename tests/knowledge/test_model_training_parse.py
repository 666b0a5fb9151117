"""How a model's training answer is read: QA pairs as FastGPT's ``formatSplitText`` reads them (``Q<n>:``
question line, ``A<n>:`` answer up to the next ``Q<digit>`` or the end, literal ``\\n`` as a line break,
no pair: the chunk itself), and auto-index lines; and what the model is sent."""

from __future__ import annotations

import pytest

from fathom.knowledge.model_training import (
    MAX_AUTO_INDEXES,
    QA_INSTRUCTIONS,
    AutoIndex,
    auto_index_prompt,
    parse_auto_indexes,
    qa_prompt,
    qa_rows,
)

QA_CASES = [
    (
        "two pairs",
        "Q1: Who pays?\nA1: The shop.\nQ2: When?\nA2: In five days.",
        [("Who pays?", "The shop."), ("When?", "In five days.")],
    ),
    (
        "literal \\n is a line break",
        "Q1: Who pays?\\nA1: The shop.\\nQ2: When?\\nA2: Soon.",
        [("Who pays?", "The shop."), ("When?", "Soon.")],
    ),
    (
        "multi-line answer",
        "Q1: Steps?\nA1: First this.\n- then that\n\nQ2: Done?\nA2: Yes.",
        [("Steps?", "First this.\n- then that"), ("Done?", "Yes.")],
    ),
    ("text before the first pair is ignored", "Sure! Here they are:\nQ1: Who?\nA1: Me.", [("Who?", "Me.")]),
    ("a pair without a question is dropped", "Q1:\nA1: orphan\nQ2: Kept?\nA2: Yes.", [("Kept?", "Yes.")]),
    ("same line", "Q1: Who pays? A1: The shop.", [("Who pays?", "The shop.")]),
    (
        "an answer ends at the next Q<digit>, as FastGPT's",
        "Q1: Which quarter?\nA1: Q3 of 2024.",
        [("Which quarter?", "")],
    ),
]


@pytest.mark.parametrize(("answer", "expected"), [c[1:] for c in QA_CASES], ids=[c[0] for c in QA_CASES])
def test_qa_answers_are_read_as_fastgpt_reads_them(answer: str, expected: list[tuple[str, str]]) -> None:
    assert qa_rows(answer, "the chunk") == expected


def test_an_answer_without_pairs_keeps_the_chunk() -> None:
    assert qa_rows("I found nothing to ask.", "the chunk") == [("the chunk", "")]


def test_the_qa_prompt_is_the_instructions_then_the_format_and_the_chunk() -> None:
    default = qa_prompt("Refunds take five days.")
    assert default.startswith(QA_INSTRUCTIONS) and default.rstrip().endswith(
        "<Context>\nRefunds take five days.\n</Context>"
    )
    assert "Q1:" in default and "A1:" in default
    custom = qa_prompt("Refunds take five days.", "Write FAQ entries.")
    assert custom.startswith("Write FAQ entries.\n") and QA_INSTRUCTIONS not in custom
    assert qa_prompt("x", "   ").startswith(QA_INSTRUCTIONS)  # a blank qaPrompt is no qaPrompt
    assert "<Context>\na {text} b\n</Context>" in qa_prompt("a {text} b")  # the chunk is kept verbatim


AUTO_CASES = [
    (
        "labelled lines",
        "Summary: refunds in five days.\nQuestion: How long do refunds take?",
        [AutoIndex("refunds in five days.", "summary"), AutoIndex("How long do refunds take?", "question")],
    ),
    (
        "bullets and numbering dropped",
        "- Summary: s\n1. Question: q1\n* q2\nQ3: q3",
        [
            AutoIndex("s", "summary"),
            AutoIndex("q1", "question"),
            AutoIndex("q2", "question"),
            AutoIndex("q3", "question"),
        ],
    ),
    (
        "repeats, blanks and the chunk itself left out",
        "Question: a\n\nquestion: A\nthe chunk\n",
        [AutoIndex("a", "question")],
    ),
]


@pytest.mark.parametrize(("answer", "expected"), [c[1:] for c in AUTO_CASES], ids=[c[0] for c in AUTO_CASES])
def test_auto_index_answers(answer: str, expected: list[AutoIndex]) -> None:
    assert parse_auto_indexes(answer, "the chunk") == expected


def test_auto_indexes_are_capped() -> None:
    answer = "\n".join(f"Question: q{i}" for i in range(20))
    assert len(parse_auto_indexes(answer)) == MAX_AUTO_INDEXES


def test_the_auto_index_prompt_carries_the_chunk() -> None:
    prompt = auto_index_prompt("Refunds take five days.")
    assert "<Context>\nRefunds take five days.\n</Context>" in prompt and "Summary:" in prompt
