"""The local MiniLM embedder: shape, normalisation, truncation, semantic sanity."""

from __future__ import annotations

import numpy as np
import pytest

from fathom.knowledge.ports import Embedder
from fathom.llm.local_embedding import LOCAL_EMBEDDING_MODEL_ID, SPINNING_STOP_KEY, LocalEmbedder


@pytest.fixture
def embedder(local_embedder: LocalEmbedder) -> LocalEmbedder:
    return local_embedder


def test_local_embedder_satisfies_the_knowledge_protocol(embedder: LocalEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.model_id == LOCAL_EMBEDDING_MODEL_ID == "local/all-MiniLM-L6-v2-int8"
    assert embedder.dimensions == 384


async def test_vectors_are_unit_length_and_384_wide(embedder: LocalEmbedder) -> None:
    vectors = await embedder.embed(["A cat sits on the mat.", "", "x" * 3000])
    array = np.asarray(vectors)
    assert array.shape == (3, 384)
    assert np.allclose(np.linalg.norm(array, axis=1), 1.0, atol=1e-5)


async def test_related_sentences_are_closer_than_unrelated_ones(embedder: LocalEmbedder) -> None:
    a, b, c = await embedder.embed(
        [
            "How do I reset my account password?",
            "Steps to recover a forgotten login password",
            "The recipe needs two cups of flour and an egg.",
        ]
    )
    related = float(np.dot(a, b))
    unrelated = float(np.dot(a, c))
    assert related > unrelated + 0.2


async def test_batching_and_padding_do_not_change_a_vector(embedder: LocalEmbedder) -> None:
    short = "Vitamin D deficiency and bone health."
    alone = (await embedder.embed([short]))[0]
    padded = (await embedder.embed([short, "A much longer sentence " * 20]))[0]
    assert float(np.dot(alone, padded)) > 0.9999


def test_the_model_threads_stop_spinning_when_a_run_returns(embedder: LocalEmbedder) -> None:
    # spinning on after a run took a core from whatever followed a query's embedding (the search)
    embedder.embed_sync(["loaded"])
    options = embedder._session.get_session_options()
    assert options.get_session_config_entry(SPINNING_STOP_KEY) == "1"
    assert options.intra_op_num_threads == embedder.intra_op_threads == 2


def test_truncation_is_256_not_the_shipped_128(embedder: LocalEmbedder) -> None:
    base = "word " * 140
    first = embedder.embed_sync([base + "apple banana cherry"])[0]
    second = embedder.embed_sync([base + "quantum chromodynamics lattice"])[0]
    # with truncation at 128 both inputs would be cut before their last words and be identical
    assert float(np.dot(first, second)) < 0.9999
    assert embedder.count_tokens("word " * 300) == 300


def test_token_coverage_is_the_share_of_characters_the_vocabulary_knows(embedder: LocalEmbedder) -> None:
    english, chinese, empty, mixed = embedder.token_coverage(
        [
            "0-dimensional biomaterials show inductive properties.",
            "战国史模式主打哪两个模式？",
            "  ",
            "BRCA1 与乳腺癌",
        ]
    )
    assert english == 1.0 and empty == 1.0
    assert 0 < chinese < 0.6  # MiniLM turns most CJK characters into [UNK]
    assert chinese < mixed < 1.0  # the Latin part of a mixed query is read
    assert embedder.token_coverage([]) == []


def test_a_batch_is_bounded_by_texts_times_longest_squared_and_vectors_do_not_change() -> None:
    """Memory: long texts go in small batches (activations grow with texts × tokens²), short ones in
    large batches; how texts are grouped never changes their vectors, which come back in order."""
    bounded = LocalEmbedder(max_batch_cells=2 * 64 * 64)
    short, long = "Refunds within five days.", "Parcels ship from Rotterdam every morning. " * 12
    texts = [short, short, short, long, long, long, short]
    bounded._load()
    batches = bounded._batches(texts)
    # shortest first (texts of one length share a batch, so it pads little): 8 tokens each, 4 x 8^2
    # fits; 86 tokens: 2 x 86^2 > 2 x 64^2, so each long text is a batch alone
    assert [[texts[p] for p in batch] for batch in batches] == [[short] * 4, [long], [long], [long]]
    assert sorted(p for batch in batches for p in batch) == list(range(len(texts)))
    together = np.asarray(bounded.embed_sync(texts))
    alone = np.asarray([bounded.embed_sync([text])[0] for text in texts])
    assert np.allclose(np.sum(together * alone, axis=1), 1.0, atol=1e-4)
