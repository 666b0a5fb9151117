"""Training items on SQLite and PostgreSQL: deleting one (FastGPT's ``deleteTrainingData``) takes a waiting
item out of the collection's training left, a failed one out of its errors, and a training run that had the
item in hand drops its result instead of writing it."""

from __future__ import annotations

import pytest

from fathom.store.db import Database
from fathom.store.knowledge import SqlChunkRepository, SqlDatasetRepository
from fathom.store.knowledge.training import NewTrainingItem, SqlTrainingRepository
from fathom.store.protocols import AlreadyTrained, ChunkToWrite, CollectionRecord
from fathom.store.repositories import SqlTeamRepository


async def _collection_with_items(db: Database) -> tuple[CollectionRecord, list[str]]:
    team = await SqlTeamRepository(db).create_team("T")
    datasets = SqlDatasetRepository(db)
    dataset = await datasets.create_dataset(team.id, "KB", vector_model="test-model")
    collection = await datasets.create_collection(team.id, dataset.id, "faq", type="virtual")
    training = SqlTrainingRepository(db)
    items = [NewTrainingItem(i, f"chunk {i}") for i in range(3)]
    assert await training.add_items(team.id, dataset.id, collection.id, "qa", items) == 3
    pending = await training.pending(collection.id)
    return collection, [item.id for item in pending]


async def _left(db: Database, collection: CollectionRecord) -> int:
    current = await SqlDatasetRepository(db).get_collection(collection.team_id, collection.id)
    return current.chunks_total - current.chunks_done


async def test_deleting_items_takes_them_out_of_the_training_left_and_the_errors(database: Database) -> None:
    collection, (first, second, third) = await _collection_with_items(database)
    training = SqlTrainingRepository(database)
    assert await _left(database, collection) == 3
    await training.fail(second, "the model is overloaded")
    assert await _left(database, collection) == 2

    assert await training.delete_item(collection.team_id, collection.id, first)  # waiting
    assert await _left(database, collection) == 1
    assert await training.delete_item(collection.team_id, collection.id, second)  # failed
    assert await _left(database, collection) == 1
    counts = await training.counts([collection.id])
    assert counts[collection.id].failed_total == 0 and counts[collection.id].pending == {"qa": 1}
    assert await training.in_collection(collection.team_id, collection.id, first) is None
    # gone already, another collection's, another team's: nothing to delete
    assert not await training.delete_item(collection.team_id, collection.id, first)
    assert not await training.delete_item(collection.team_id, "0" * 24, third)
    assert not await training.delete_item("0" * 24, collection.id, third)
    assert (await training.in_collection(collection.team_id, collection.id, third)) is not None


async def test_a_run_holding_a_deleted_item_writes_nothing(database: Database) -> None:
    collection, (first, *_rest) = await _collection_with_items(database)
    assert await SqlTrainingRepository(database).delete_item(collection.team_id, collection.id, first)
    chunks = SqlChunkRepository(database)
    written = ChunkToWrite("q", "a", 0, ["q"], [[1.0, 0.0]])
    with pytest.raises(AlreadyTrained):
        await chunks.write_chunks(
            collection.team_id,
            collection.dataset_id,
            collection.id,
            [written],
            model="m",
            training_item=first,
        )
    assert await chunks.written_chunk_indexes(collection.id) == set()
    assert await _left(database, collection) == 2
