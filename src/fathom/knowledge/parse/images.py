"""Images inside documents, for image indexes: the bytes embedded in a document, never a URL.

An embedded image (a Markdown or HTML ``data:image/...;base64`` URL, a picture of a Word document) is
taken out of the text and replaced by a short reference, ``![alt](image:<key>)``, where ``<key>`` is the
first 16 hex digits of the SHA-256 of its bytes: the same document always gives the same text and the
same keys, so an interrupted import chunks it the same way again. Images the text only links to
(``https://…``) are left as they are and are never fetched: reading a URL named by a document would let
the document make the server request any address (SSRF).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass

IMAGE_MIME = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "webp": "image/webp"}
IMAGE_FORMATS = tuple(IMAGE_MIME)  # the image files an image collection takes
MAX_IMAGE_BYTES = 20 * 1024 * 1024  # larger embedded images are left out (vision APIs refuse them)

_DATA_URL = r"data:(image/[a-zA-Z0-9.+-]+);base64,([A-Za-z0-9+/=\s]+)"
_MARKDOWN_IMAGE = re.compile(r"!\[([^\]\n]*)\]\(\s*" + _DATA_URL + r"\s*\)")
_HTML_IMAGE = re.compile(r"<img\b[^>]*?\bsrc\s*=\s*[\"']" + _DATA_URL + r"[\"'][^>]*>", re.IGNORECASE)
_ALT = re.compile(r"\balt\s*=\s*[\"']([^\"']*)[\"']", re.IGNORECASE)
IMAGE_REF = re.compile(r"!\[[^\]\n]*\]\(image:([0-9a-f]{16})\)")
_ESCAPED_REF = re.compile(r"!\\\[([^\]\n]*?)\\\]\(image:([0-9a-f]{16})\)")


@dataclass(frozen=True)
class EmbeddedImage:
    key: str
    mime: str
    data: bytes

    def data_url(self) -> str:
        """The image as a ``data:`` URL (what an OpenAI-compatible vision request carries)."""
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"


def image_of(data: bytes, mime: str) -> EmbeddedImage:
    return EmbeddedImage(hashlib.sha256(data).hexdigest()[:16], mime, data)


def image_ref(image: EmbeddedImage, alt: str = "") -> str:
    return f"![{alt.strip()}](image:{image.key})"


def image_keys(text: str) -> list[str]:
    """The keys of the image references in ``text``, in order, each once."""
    return list(dict.fromkeys(IMAGE_REF.findall(text)))


def unescape_refs(text: str) -> str:
    """References a Markdown writer escaped (``!\\[alt\\](image:…)``, as trafilatura writes text that
    looks like Markdown) made references again."""
    return _ESCAPED_REF.sub(lambda m: f"![{m.group(1)}](image:{m.group(2)})", text)


def _decoded(mime: str, payload: str) -> EmbeddedImage | None:
    try:
        data = base64.b64decode("".join(payload.split()), validate=True)
    except (binascii.Error, ValueError):
        return None
    if not data or len(data) > MAX_IMAGE_BYTES:
        return None
    return image_of(data, mime.lower())


def extract_data_url_images(text: str) -> tuple[str, list[EmbeddedImage]]:
    """``text`` with its Markdown and HTML ``data:`` images replaced by references, and the images (each
    once, in order). A data URL that does not decode is left in the text."""
    found: dict[str, EmbeddedImage] = {}

    def markdown(match: re.Match[str]) -> str:
        image = _decoded(match.group(2), match.group(3))
        if image is None:
            return match.group(0)
        found.setdefault(image.key, image)
        return image_ref(image, match.group(1))

    def html(match: re.Match[str]) -> str:
        image = _decoded(match.group(1), match.group(2))
        if image is None:
            return match.group(0)
        found.setdefault(image.key, image)
        alt = _ALT.search(match.group(0))
        return image_ref(image, alt.group(1) if alt else "")

    text = _HTML_IMAGE.sub(html, _MARKDOWN_IMAGE.sub(markdown, text))
    return text, list(found.values())
