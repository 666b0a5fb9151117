"""Spreadsheets (.xlsx/.xlsm): every sheet as a ``## name`` heading and a Markdown table."""

from __future__ import annotations

import io
from typing import Any

from fathom.knowledge.parse.tables import rows_to_markdown
from fathom.knowledge.parse.types import DocumentParseError, EncryptedDocumentError, ParsedDocument

_OLE_MAGIC = b"\xd0\xcf\x11\xe0"  # encrypted OOXML files are OLE containers


def _value(cell: Any) -> object:
    if isinstance(cell, float) and cell.is_integer():
        return int(cell)
    return cell


def parse_xlsx(data: bytes, filename: str) -> ParsedDocument:
    """Cell values (formulas as their cached results), one table per sheet, first row the header."""
    from openpyxl import load_workbook

    if data.startswith(_OLE_MAGIC):
        raise EncryptedDocumentError(filename)
    try:
        workbook = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises several types for broken packages
        raise DocumentParseError(filename, f"not a readable spreadsheet ({exc})") from exc
    blocks: list[str] = []
    sheets: list[str] = []
    try:
        for sheet in workbook.worksheets:
            sheets.append(sheet.title)
            rows = [[_value(v) for v in row] for row in sheet.iter_rows(values_only=True)]
            table = rows_to_markdown(rows)
            if table:
                blocks.append(f"## {sheet.title}\n\n{table}")
    finally:
        workbook.close()
    return ParsedDocument(text="\n\n".join(blocks), format="xlsx", metadata={"sheets": sheets})
