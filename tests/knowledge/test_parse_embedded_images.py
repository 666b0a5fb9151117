"""Embedded images for image indexes: taken out of the text as ``![alt](image:<key>)`` references with their
bytes (Markdown and HTML ``data:`` images, the pictures of a Word file); linked images stay links and are
never read; the same document always gives the same text and keys; without ``images`` nothing changes."""

from __future__ import annotations

import base64
import io

from fathom.knowledge.parse import extract_data_url_images, image_keys, parse_document

# a valid 1x1 PNG
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
URL = "data:image/png;base64," + base64.b64encode(PNG).decode()


def test_markdown_data_images_become_references_and_links_stay() -> None:
    text = f"Pay rises. ![pay chart]({URL}) See ![logo](https://example.com/logo.png)."
    out, images = extract_data_url_images(text)
    (image,) = images
    assert out == f"Pay rises. ![pay chart](image:{image.key}) See ![logo](https://example.com/logo.png)."
    assert image.data == PNG and image.mime == "image/png" and image.data_url() == URL
    assert image_keys(out) == [image.key]
    assert extract_data_url_images(text) == (out, images)  # the same text and key every time


def test_a_data_url_that_does_not_decode_is_left_in_the_text() -> None:
    text = "![x](data:image/png;base64,@@@notbase64@@@)"
    assert extract_data_url_images(text) == (text, [])


def test_html_images_survive_the_html_extractor_as_references() -> None:
    page = (
        "<html><body><article><h1>Pay</h1><p>The chart below shows pay over the years.</p>"
        f"<img alt='pay chart' src='{URL}'><p>After the chart the text goes on for a while.</p>"
        "<img src='https://example.com/remote.png'></article></body></html>"
    )
    parsed = parse_document(page.encode(), "pay.html", images=True)
    (image,) = parsed.images
    assert f"![pay chart](image:{image.key})" in parsed.text and "base64" not in parsed.text


def test_word_pictures_are_referenced_after_their_paragraph() -> None:
    import docx

    document = docx.Document()
    document.add_paragraph("Before the picture.")
    document.add_picture(io.BytesIO(PNG))
    document.add_paragraph("After.")
    buffer = io.BytesIO()
    document.save(buffer)
    parsed = parse_document(buffer.getvalue(), "a.docx", images=True)
    (image,) = parsed.images
    assert parsed.text == f"Before the picture.\n\n![](image:{image.key})\n\nAfter."
    assert image.data == PNG and image.mime == "image/png"
    plain = parse_document(buffer.getvalue(), "a.docx")
    assert plain.text == "Before the picture.\n\nAfter." and plain.images == ()


def test_slide_pictures_are_referenced_where_they_are() -> None:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Floor plan"
    slide.shapes.add_picture(io.BytesIO(PNG), Inches(1), Inches(2))
    buffer = io.BytesIO()
    deck.save(buffer)
    parsed = parse_document(buffer.getvalue(), "a.pptx", images=True)
    (image,) = parsed.images
    assert parsed.text == f"# Floor plan\n\n![](image:{image.key})" and image.data == PNG
    assert parse_document(buffer.getvalue(), "a.pptx").text == "# Floor plan"
