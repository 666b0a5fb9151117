"""Word (.docx) and PowerPoint (.pptx) documents as Markdown."""

from __future__ import annotations

import io
from typing import Any

from fathom.knowledge.parse.images import EmbeddedImage, image_of, image_ref
from fathom.knowledge.parse.tables import rows_to_markdown
from fathom.knowledge.parse.types import DocumentParseError, ParsedDocument

_W_NS = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
_BLIP = "{http://schemas.openxmlformats.org/drawingml/2006/main}blip"
_EMBED = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}embed"


def _pictures(element: Any, part: Any, found: dict[str, EmbeddedImage]) -> list[str]:
    """References to the pictures of a paragraph (their bytes are the document's own parts, never a
    linked URL), each picture added to ``found``."""
    refs: list[str] = []
    for blip in element.iter(_BLIP):
        related = part.related_parts.get(blip.get(_EMBED) or "")
        blob = getattr(related, "blob", None)
        content_type = str(getattr(related, "content_type", ""))
        if not blob or not content_type.startswith("image/"):
            continue
        image = found.setdefault(image_of(blob, content_type).key, image_of(blob, content_type))
        refs.append(image_ref(image))
    return refs


def _textbox_lines(element: Any) -> list[str]:
    """Text of text boxes and shapes anchored in a paragraph (the ``mc:Fallback`` copies skipped)."""
    lines: list[str] = []
    for box in element.iter(f"{_W_NS}txbxContent"):
        ancestors = {a.tag for a in box.iterancestors()}
        if _MC_FALLBACK in ancestors or f"{_W_NS}txbxContent" in ancestors:
            continue
        for paragraph in box.iter(f"{_W_NS}p"):
            text = "".join(t.text or "" for t in paragraph.iter(f"{_W_NS}t")).strip()
            if text:
                lines.append(text)
    return lines


def _docx_paragraph(paragraph: Any) -> str:
    text = paragraph.text.strip()
    if not text:
        return ""
    style = (paragraph.style.name if paragraph.style is not None else "") or ""
    lowered = style.lower()
    if lowered == "title":
        return f"# {text}"
    if lowered.startswith("heading"):
        level = "".join(ch for ch in style if ch.isdigit())
        return f"{'#' * min(int(level or 1), 6)} {text}"
    if "list" in lowered:
        return f"{'1.' if 'number' in lowered else '-'} {text}"
    return text


def _docx_table(table: Any) -> str:
    rows: list[list[str]] = []
    for row in table.rows:
        cells: list[str] = []
        for cell in row.cells:
            cells.append(" ".join(p.text.strip() for p in cell.paragraphs if p.text.strip()))
        rows.append(cells)
    return rows_to_markdown(rows)


def parse_docx(data: bytes, filename: str, *, images: bool = False) -> ParsedDocument:
    """Paragraphs and tables in document order; heading styles become ``#`` headings, list styles
    ``-``/``1.`` items, tables Markdown tables. With ``images``, each picture becomes an
    ``![](image:<key>)`` reference after its paragraph's text (``fathom.knowledge.parse.images``)."""
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:  # python-docx raises several types for broken packages
        raise DocumentParseError(filename, f"not a readable Word document ({exc})") from exc
    blocks: list[str] = []
    found: dict[str, EmbeddedImage] = {}
    for element in document.element.body.iterchildren():
        if element.tag == f"{_W_NS}p":
            blocks.append(_docx_paragraph(Paragraph(element, document)))
            blocks.extend(_textbox_lines(element))
            if images:
                blocks.extend(_pictures(element, document.part, found))
        elif element.tag == f"{_W_NS}tbl":
            blocks.append(_docx_table(Table(element, document)))
    metadata: dict[str, object] = {"tables": len(document.tables)}
    title = document.core_properties.title
    if title:
        metadata["title"] = title
    return ParsedDocument(
        text="\n\n".join(b for b in blocks if b),
        format="docx",
        metadata=metadata,
        images=tuple(found.values()),
    )


def _shape_blocks(shape: Any, found: dict[str, EmbeddedImage] | None = None) -> list[str]:
    """A shape's text; with ``found`` (images asked for), a picture's reference, the picture added."""
    blocks: list[str] = []
    if getattr(shape, "shape_type", None) == 6 and hasattr(shape, "shapes"):  # group
        for child in shape.shapes:
            blocks.extend(_shape_blocks(child, found))
        return blocks
    if found is not None and getattr(shape, "shape_type", None) == 13:  # a picture (its own bytes)
        picture = shape.image
        if str(picture.content_type).startswith("image/"):
            image = found.setdefault(
                image_of(picture.blob, picture.content_type).key, image_of(picture.blob, picture.content_type)
            )
            blocks.append(image_ref(image))
        return blocks
    if getattr(shape, "has_table", False):
        rows = [[cell.text for cell in row.cells] for row in shape.table.rows]
        blocks.append(rows_to_markdown(rows))
    elif getattr(shape, "has_text_frame", False):
        is_title = bool(getattr(shape, "is_placeholder", False)) and _placeholder_is_title(shape)
        lines: list[str] = []
        for paragraph in shape.text_frame.paragraphs:
            text = "".join(run.text for run in paragraph.runs).strip() or paragraph.text.strip()
            if not text:
                continue
            if is_title:
                lines.append(f"# {text}")
            elif paragraph.level > 0:
                lines.append(f"{'  ' * (paragraph.level - 1)}- {text}")
            else:
                lines.append(text)
        if lines:
            blocks.append("\n".join(lines))
    return blocks


def _placeholder_is_title(shape: Any) -> bool:
    try:
        return "TITLE" in str(shape.placeholder_format.type)
    except (AttributeError, ValueError):
        return False


def parse_pptx(data: bytes, filename: str, *, images: bool = False) -> ParsedDocument:
    """Slides in order: title placeholders as ``#`` headings, text frames, tables, notes. With ``images``,
    each picture becomes an ``![](image:<key>)`` reference where it is on its slide."""
    from pptx import Presentation

    try:
        presentation = Presentation(io.BytesIO(data))
    except Exception as exc:  # python-pptx raises several types for broken packages
        raise DocumentParseError(filename, f"not a readable PowerPoint file ({exc})") from exc
    blocks: list[str] = []
    found: dict[str, EmbeddedImage] | None = {} if images else None
    slides = 0
    for slide in presentation.slides:
        slides += 1
        for shape in slide.shapes:
            try:
                blocks.extend(_shape_blocks(shape, found))
            except Exception:  # an unrecognised shape must not lose the slide
                continue
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            if notes is not None and notes.text.strip():
                blocks.append(notes.text.strip())
    return ParsedDocument(
        text="\n\n".join(b for b in blocks if b),
        format="pptx",
        metadata={"slides": slides},
        images=tuple((found or {}).values()),
    )
