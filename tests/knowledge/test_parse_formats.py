"""Parsers on small documents built in the test (real files, no fixtures on disk)."""

from __future__ import annotations

import io

import pytest

from fathom.knowledge.parse import (
    DocumentParseError,
    UnsupportedFormatError,
    detect_format,
    parse_document,
    rows_to_markdown,
)


def test_detect_format_aliases() -> None:
    assert [detect_format(n) for n in ["a.HTM", "b.xlsm", "c.markdown", "d"]] == ["html", "xlsx", "md", ""]


def test_text_decoding_falls_back_from_utf8_to_gb18030() -> None:
    assert parse_document("知识库".encode("gb18030"), "a.txt").text == "知识库"
    assert parse_document("\ufeffhello\r\nworld".encode(), "a.md").text == "hello\nworld"


def test_unsupported_format_names_the_file() -> None:
    with pytest.raises(UnsupportedFormatError, match=r"^video\.mp4: unsupported file type 'mp4'"):
        parse_document(b"x", "video.mp4")


def test_csv_semicolon_with_quoted_cells_becomes_a_table() -> None:
    doc = parse_document(b'a;b\n1;"x;y"\n2;z\n', "t.csv")
    assert doc.text == "| a | b |\n| - | - |\n| 1 | x;y |\n| 2 | z |"


def test_rows_to_markdown_escapes_pipes_and_pads_rows() -> None:
    assert rows_to_markdown([["h1", "h2"], ["a|b"], [None, None]]) == "| h1 | h2 |\n| - | - |\n| a\\|b |  |"


def test_html_keeps_main_content_not_navigation() -> None:
    nav = "".join(f"<li><a href='/p{i}'>Menu entry {i}</a></li>" for i in range(20))
    article = "".join(
        f"<p>Paragraph {i} explains how retrieval augmented generation works in detail.</p>" for i in range(8)
    )
    page = (
        "<html><head><title>RAG guide</title></head><body>"
        f"<nav><ul>{nav}</ul></nav><article><h1>RAG</h1>{article}</article>"
        "<footer>Copyright footer</footer></body></html>"
    )
    doc = parse_document(page.encode(), "page.html")
    assert "Paragraph 7 explains" in doc.text
    assert "Menu entry 3" not in doc.text
    assert doc.metadata["title"] == "RAG guide"


def test_docx_headings_lists_and_tables_in_order() -> None:
    import docx

    document = docx.Document()
    document.add_heading("Guide", level=1)
    document.add_paragraph("Intro text.")
    document.add_paragraph("first point", style="List Bullet")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "k", "v"
    table.cell(1, 0).text, table.cell(1, 1).text = "a", "1"
    document.add_heading("Details", level=2)
    buffer = io.BytesIO()
    document.save(buffer)
    doc = parse_document(buffer.getvalue(), "guide.docx")
    assert (
        doc.text == "# Guide\n\nIntro text.\n\n- first point\n\n| k | v |\n| - | - |\n| a | 1 |\n\n## Details"
    )


def test_xlsx_sheets_become_headed_tables() -> None:
    from openpyxl import Workbook

    workbook = Workbook()
    sheet = workbook.active
    sheet.title = "Prices"
    sheet.append(["item", "price"])
    sheet.append(["tea", 3.0])
    workbook.create_sheet("Empty")
    buffer = io.BytesIO()
    workbook.save(buffer)
    doc = parse_document(buffer.getvalue(), "book.xlsx")
    assert doc.text == "## Prices\n\n| item | price |\n| - | - |\n| tea | 3 |"
    assert doc.metadata["sheets"] == ["Prices", "Empty"]


def test_pptx_title_text_and_table() -> None:
    from pptx import Presentation
    from pptx.util import Inches

    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[5])  # title only
    slide.shapes.title.text = "Quarterly results"
    box = slide.shapes.add_textbox(Inches(1), Inches(2), Inches(4), Inches(1))
    box.text_frame.text = "Revenue grew."
    shape = slide.shapes.add_table(2, 2, Inches(1), Inches(3), Inches(4), Inches(1))
    for (r, c), value in {(0, 0): "q", (0, 1): "n", (1, 0): "Q1", (1, 1): "5"}.items():
        shape.table.cell(r, c).text = value
    buffer = io.BytesIO()
    presentation.save(buffer)
    doc = parse_document(buffer.getvalue(), "deck.pptx")
    assert doc.text == "# Quarterly results\n\nRevenue grew.\n\n| q | n |\n| - | - |\n| Q1 | 5 |"
    assert doc.metadata["slides"] == 1


@pytest.mark.parametrize("name", ["broken.pdf", "broken.docx", "broken.xlsx", "broken.pptx"])
def test_garbage_gives_a_named_parse_error(name: str) -> None:
    with pytest.raises(DocumentParseError, match=rf"^{name}: "):
        parse_document(b"this is not a real office or pdf file", name)
