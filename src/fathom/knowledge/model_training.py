"""What a dataset's model is asked when it trains a chunk, and how its answer is read.

- **QA** (FastGPT's ``generateQA``): the model learns the chunk and writes question/answer pairs. The
  instructions ask what FastGPT's ``Prompt_AgentQA`` asks (questions with detailed answers that keep the
  text's wording, Markdown allowed, at most 30); a collection's ``qaPrompt`` replaces them, the fixed part
  (the answer format and the chunk) always follows. The answer is read as FastGPT's ``formatSplitText``
  reads it: ``Q<n>:`` question line, ``A<n>:`` answer up to the next ``Q<digit>`` or the end; an answer
  with no pair in it keeps the chunk itself as one row.
- **Auto indexes**: the model writes a one-sentence summary and questions the chunk answers; each becomes
  an extra index text of the chunk (``summary`` / ``question``), at most :data:`MAX_AUTO_INDEXES`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

QA_INSTRUCTIONS = """The text inside <Context></Context> is a piece of a document. Study it and write down \
what you learnt as questions and answers:
- Ask questions about the text and give the answer to each.
- Answers must be detailed and complete; keep the text's own wording where you can.
- Answers may contain plain text, links, code, tables, formulas and media links in Markdown.
- Ask at most 30 questions."""

QA_FORMAT = """Write what you learnt in this format:
<Context>
text
</Context>
Q1: a question.
A1: its answer.
Q2:
A2:

------

Let's begin!

<Context>
{text}
</Context>
"""

AUTO_INDEX_PROMPT = """The text inside <Context></Context> is a piece of a document in a search index. \
Write what a reader might search for to find it:
- one line "Summary: " with a one-sentence summary of the text;
- up to {questions} lines "Question: " with questions the text answers, each understandable on its own.
Write in the language of the text and nothing else.

<Context>
{text}
</Context>
"""

MAX_AUTO_INDEXES = 5  # as many as a row's custom indexes (pushData's limit)

_PAIR = re.compile(r"Q\d+:(\s*)(.*)(\s*)A\d+:(\s*)([\s\S]*?)(?=Q\d|\Z)")
_BULLET = re.compile(r"^\s*(?:[-*•]+|\d+[.)、]|Q\d*[:：])\s*")
_LABEL = re.compile(r"^(summary|question)\s*[:：]\s*", re.IGNORECASE)


def qa_prompt(text: str, instructions: str | None = None) -> str:
    """The one user message of a QA call: the instructions (a collection's ``qaPrompt``, or the default)
    then the answer format with the chunk."""
    return f"{(instructions or '').strip() or QA_INSTRUCTIONS}\n{QA_FORMAT.replace('{text}', text)}"


def _parse_qa_answer(answer: str) -> list[tuple[str, str]]:
    """The (question, answer) pairs of the model's answer, in order; pairs without a question are
    dropped. Literal ``\\n`` sequences are read as line breaks (FastGPT does the same)."""
    answer = answer.replace("\\n", "\n")
    pairs = []
    for match in _PAIR.finditer(answer):
        q, a = match.group(2).strip(), match.group(5).strip()
        if q:
            pairs.append((q, a))
    return pairs


def qa_rows(answer: str, chunk: str) -> list[tuple[str, str]]:
    """The rows a QA answer makes: its pairs, or (no pair in it) the chunk itself with an empty answer."""
    return _parse_qa_answer(answer) or [(chunk, "")]


def auto_index_prompt(text: str, questions: int = MAX_AUTO_INDEXES - 1) -> str:
    """The one user message of an auto-index call for a chunk's text."""
    return AUTO_INDEX_PROMPT.replace("{questions}", str(questions)).replace("{text}", text)


@dataclass(frozen=True)
class AutoIndex:
    text: str
    type: str  # FastGPT's index types: "summary" or "question"


def parse_auto_indexes(answer: str, chunk: str = "") -> list[AutoIndex]:
    """The index texts of an auto-index answer: one per non-empty line, a ``Summary:`` line typed
    ``summary``, every other line ``question``; bullets and numbering dropped, repeats and the chunk's
    own text left out, at most :data:`MAX_AUTO_INDEXES`."""
    found: list[AutoIndex] = []
    seen = {chunk.strip().casefold()} if chunk.strip() else set()
    for line in answer.replace("\\n", "\n").splitlines():
        text = _BULLET.sub("", line.strip())
        label = _LABEL.match(text)
        kind = "summary" if label and label.group(1).lower() == "summary" else "question"
        text = text[label.end() :].strip() if label else text.strip()
        if not text or text.casefold() in seen or text.startswith("<"):
            continue
        seen.add(text.casefold())
        found.append(AutoIndex(text, kind))
        if len(found) == MAX_AUTO_INDEXES:
            break
    return found


# Image indexes (FastGPT's image index / image parse prompts ask the same): the vision model describes an
# image so that a text search finds it; an image of text has its text written out.
IMAGE_INDEX_PROMPT = """Describe the image for a search index: what it shows and what it means, in full, \
so that a reader searching for its content finds it. If the image is text (a scan, a table, a screenshot \
of text), write its text out in reading order instead. The text around the image in its document is inside \
<Context></Context>; use it to understand the image. Write in the language of the image and its context, \
and write only the description.

<Context>
{text}
</Context>
"""

IMAGE_PARSE_PROMPT = """Describe the image for a search index. If it is text (a scan, a table, a \
screenshot of text), write its text out in reading order as Markdown. Otherwise describe fully what it \
shows and what it means (a photo, a diagram, a flow chart, a screenshot of an application). Write in the \
language of the image, and write only the description."""


def image_messages(image_url: str, context: str | None = None) -> list[dict[str, object]]:
    """The one user message of a vision call: the instructions (with the text around the image, for an
    image index; without, for an image collection) and the image as an ``image_url`` part."""
    prompt = IMAGE_PARSE_PROMPT if context is None else IMAGE_INDEX_PROMPT.replace("{text}", context)
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": prompt},
                {"type": "image_url", "image_url": {"url": image_url}},
            ],
        }
    ]
