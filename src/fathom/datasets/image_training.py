"""Image indexes, run by the model trainer (``fathom.datasets.model_training``) with the knowledge base's
vision model (``vlmModel``).

- ``image`` items (a chunk collection with ``imageIndex``): one per image embedded in a chunk of the
  source (``fathom.knowledge.parse.images``); ``q`` is the image's reference, ``a`` the chunk's text (the
  context the model gets). The description is added to that chunk as an index of type ``image``.
- ``imageParse`` items (an image collection: an uploaded png/jpg/webp): one item; the description
  becomes the collection's chunk.

The image bytes are never kept in the item: they are read again from the collection's source (a
document parses to the same images under the same keys), so a retried item needs its source only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fathom.knowledge.parse import IMAGE_MIME, EmbeddedImage, detect_format, image_keys, image_of
from fathom.knowledge.parse.images import IMAGE_REF
from fathom.store.knowledge.training import NewTrainingItem

IMAGE_MODE, IMAGE_PARSE_MODE = "image", "imageParse"
IMAGE_MODES = (IMAGE_MODE, IMAGE_PARSE_MODE)

Images = Mapping[str, EmbeddedImage]


def image_index_items(pieces: Sequence[tuple[str, str]], written: set[int]) -> list[NewTrainingItem]:
    """An ``image`` item per image reference of each chunk not written yet (each image of a chunk once)."""
    items = []
    for position, (q, a) in enumerate(pieces):
        if position in written:
            continue
        seen: set[str] = set()
        for match in IMAGE_REF.finditer(q):
            if match.group(1) not in seen:
                seen.add(match.group(1))
                items.append(NewTrainingItem(position, match.group(0), f"{q}\n{a}".strip()))
    return items


def image_file(name: str, data: bytes) -> EmbeddedImage | None:
    """An uploaded file as an image, when its name says png, jpg/jpeg or webp."""
    mime = IMAGE_MIME.get(detect_format(name))
    return image_of(data, mime) if mime else None


def image_parse_item(image: EmbeddedImage) -> NewTrainingItem:
    """The one item of an image collection: its image's reference at position 0."""
    return NewTrainingItem(0, f"![](image:{image.key})")


def image_key(item_q: str) -> str | None:
    """The key of the image an item's ``q`` references."""
    keys = image_keys(item_q)
    return keys[0] if keys else None
