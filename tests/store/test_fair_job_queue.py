"""Workers take jobs round-robin across lanes (knowledge bases), on SQLite and PostgreSQL: a small import
is claimed next to a large one instead of after it, and ``queue_positions`` predicts the claim order."""

from __future__ import annotations

from fathom.store.db import Database
from fathom.store.repositories import SqlJobQueue


async def _run_one(jobs: SqlJobQueue, worker: str = "w") -> str | None:
    """Claim the next job, finish it, and return its payload's name."""
    job = await jobs.claim(worker, lease_seconds=30)
    if job is None:
        return None
    assert await jobs.complete(job.id, worker)
    return str(job.payload["name"])


async def test_one_worker_alternates_between_knowledge_bases(database: Database) -> None:
    jobs = SqlJobQueue(database)
    for i in range(4):
        await jobs.enqueue("ingest", {"name": f"big{i}"}, team_id=None, lane="kb-big")
    await jobs.enqueue("ingest", {"name": "small"}, team_id=None, lane="kb-small")
    order = [await _run_one(jobs) for _ in range(6)]
    # first in goes first, then the lane never served, then the big lane's backlog
    assert order == ["big0", "small", "big1", "big2", "big3", None]


async def test_a_lane_with_a_running_job_yields_to_an_idle_lane(database: Database) -> None:
    jobs = SqlJobQueue(database)
    for i in range(3):
        await jobs.enqueue("ingest", {"name": f"big{i}"}, lane="kb-big")
    first = await jobs.claim("w1", lease_seconds=30)
    assert first is not None and first.payload["name"] == "big0" and first.claimed_at is not None
    await jobs.enqueue("ingest", {"name": "small"}, lane="kb-small")
    second = await jobs.claim("w2", lease_seconds=30)
    assert second is not None and second.payload["name"] == "small" and second.lane == "kb-small"


async def test_three_lanes_are_served_in_turn_and_jobs_without_a_lane_stay_first_in_first_out(
    database: Database,
) -> None:
    jobs = SqlJobQueue(database)
    for lane, count in (("a", 3), ("b", 2), ("c", 1)):
        for i in range(count):
            await jobs.enqueue("ingest", {"name": f"{lane}{i}"}, lane=lane)
    order = [await _run_one(jobs) for _ in range(6)]
    assert order == ["a0", "b0", "c0", "a1", "b1", "a2"]
    for i in range(3):
        await jobs.enqueue("demo", {"name": f"plain{i}"})
    assert [await _run_one(jobs) for _ in range(3)] == ["plain0", "plain1", "plain2"]


async def test_queue_positions_predict_the_claim_order(database: Database) -> None:
    jobs = SqlJobQueue(database)
    served = await jobs.enqueue("ingest", {"name": "served"}, lane="a")
    assert await _run_one(jobs) == "served"  # lane a was served: it waits behind never-served lanes
    names: dict[str, str] = {}
    for lane, count in (("a", 3), ("b", 1), ("c", 2)):
        for i in range(count):
            job = await jobs.enqueue("ingest", {"name": f"{lane}{i}"}, team_id="t1", lane=lane)
            names[job.id] = f"{lane}{i}"
    lone = await jobs.enqueue("reembed", {"name": "lone"}, team_id="t1")
    names[lone.id] = "lone"
    positions = await jobs.queue_positions()
    assert served.id not in positions and sorted(positions.values()) == list(range(1, 8))
    predicted = [names[job_id] for job_id, _ in sorted(positions.items(), key=lambda item: item[1])]
    actual = [await _run_one(jobs) for _ in range(7)]
    assert actual == predicted
    assert predicted[:3] == ["b0", "c0", "lone"]  # never-served lanes (and the lane-less job) first
    assert await jobs.queue_positions() == {}


async def test_a_low_priority_lane_waits_behind_every_normal_job_whenever_it_was_queued(
    database: Database,
) -> None:
    jobs = SqlJobQueue(database)
    for i in range(3):  # the first-start demo, queued first and never served: still last
        await jobs.enqueue("ingest", {"name": f"demo{i}"}, lane="kb-demo", priority=-10)
    await jobs.enqueue("ingest", {"name": "user0"}, lane="kb-user")
    await jobs.enqueue("ingest", {"name": "other0"}, lane="kb-other")
    assert await _run_one(jobs) == "user0"
    await jobs.enqueue("ingest", {"name": "user1"}, lane="kb-user")  # a later import still goes first
    names = {job.id: str(job.payload["name"]) for job in await jobs.list_jobs(status="queued")}
    positions = await jobs.queue_positions()
    predicted = [names[job_id] for job_id, _ in sorted(positions.items(), key=lambda item: item[1])]
    actual = [await _run_one(jobs) for _ in range(5)]
    assert actual == predicted == ["other0", "user1", "demo0", "demo1", "demo2"]
    done = {str(job.payload["name"]): job.priority for job in await jobs.list_jobs(status="done")}
    assert done["demo0"] == -10 and done["user1"] == 0
