"""The durable job queue: rows claimed with a lease, kept by heartbeats, retried a bounded number of times.

Claiming is one atomic ``UPDATE … WHERE id = (SELECT … LIMIT 1) RETURNING``. On PostgreSQL the inner
select uses ``FOR UPDATE SKIP LOCKED`` so many ``fathom worker`` processes claim without blocking each
other; SQLite serialises writers, which makes the same statement atomic there. A job whose lease has
expired (its worker died) is claimable again.

Priority first: a job of a higher ``priority`` is claimed before any of a lower one (0 is normal; the
first-start demo's ingestion is queued below it, so it runs only when nothing of the user's waits).

Fair order: then, among claimable jobs of the same priority, the team with the fewest running jobs goes
first, then the *lane* (the knowledge base a job works on, set at enqueue) with the fewest running jobs,
then the lane served least recently (never served first), then the oldest job. So workers take jobs
round-robin across knowledge bases and teams: a one-line import is claimed next to a large import that is
already running instead of after all of it. Jobs without a lane keep first-in, first-out among themselves.

``attempts`` counts the runs of the job itself: a claim from the queue is one, a failure of the handler
uses it up. A run whose worker died (the lease lapsed) is not the job's failure: it is claimed again with
the same attempt and counted in ``lease_expiries`` instead, bounded by ``max_lease_expiries`` so that a
job which kills every worker that runs it still ends.
"""

from __future__ import annotations

import heapq
from collections import defaultdict, deque
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, case, func, or_, select, update
from sqlalchemy.orm import aliased

from fathom.store.db import Database
from fathom.store.job_doorbell import JobDoorbell, announce_job
from fathom.store.models import Job, utcnow
from fathom.store.protocols import JobRecord, JobStatus, NotFound


def _job_record(row: Job) -> JobRecord:
    return JobRecord(
        id=row.id,
        team_id=row.team_id,
        kind=row.kind,
        payload=dict(row.payload or {}),
        status=row.status,  # type: ignore[arg-type]
        attempts=row.attempts,
        max_attempts=row.max_attempts,
        run_after=row.run_after,
        lease_owner=row.lease_owner,
        lease_expiries=row.lease_expiries,
        lease_expires_at=row.lease_expires_at,
        last_error=row.last_error,
        result=row.result,
        created_at=row.created_at,
        lane=row.lane,
        claimed_at=row.claimed_at,
        priority=row.priority,
    )


MAX_LEASE_EXPIRIES = 10


class SqlJobQueue:
    def __init__(self, db: Database, *, max_lease_expiries: int = MAX_LEASE_EXPIRIES) -> None:
        self.db = db
        self.max_lease_expiries = max_lease_expiries
        self.doorbell = JobDoorbell()  # rung once a job written here is committed: idle workers wake

    async def enqueue(
        self,
        kind: str,
        payload: dict[str, Any],
        *,
        team_id: str | None = None,
        max_attempts: int = 3,
        run_after: datetime | None = None,
        lane: str | None = None,
        priority: int = 0,
    ) -> JobRecord:
        """Queue a job; ``lane`` (e.g. a knowledge base id) groups jobs that workers take round-robin;
        a job of a higher ``priority`` is claimed before any of a lower one (0: normal)."""
        if not kind:
            raise ValueError("job kind: must not be empty")
        if max_attempts < 1:
            raise ValueError("max_attempts: must be at least 1")
        async with self.db.transaction() as session:
            row = Job(
                kind=kind,
                payload=payload,
                team_id=team_id,
                max_attempts=max_attempts,
                run_after=run_after or utcnow(),
                status="queued",
                lane=lane,
                priority=priority,
            )
            session.add(row)
            await session.flush()
            await announce_job(session)
            record = _job_record(row)
        self.doorbell.ring()  # one that runs later is found by the workers' poll then
        return record

    async def claim(
        self, worker_id: str, *, lease_seconds: float, kinds: list[str] | None = None
    ) -> JobRecord | None:
        """Lease the next runnable job to ``worker_id``; None when there is nothing to do."""
        while True:
            row = await self._claim_one(worker_id, lease_seconds, kinds)
            if row is None:
                return None
            if row.lease_expiries <= self.max_lease_expiries:
                return row
            # The worker running it died more often than any healthy job makes one die: give up on it.
            await self._finish(
                row.id,
                worker_id,
                status="failed",
                last_error=(
                    f"lease expired {row.lease_expiries} times (the worker stopped while running it each "
                    "time); retry it once the cause is fixed"
                ),
            )

    async def _claim_one(
        self, worker_id: str, lease_seconds: float, kinds: list[str] | None
    ) -> JobRecord | None:
        now = utcnow()
        candidate = aliased(Job)
        running = aliased(Job)
        running_in_team = (
            select(func.count())
            .select_from(running)
            .where(
                running.status == "running",
                running.team_id == candidate.team_id,
                running.lease_expires_at >= now,
            )
            .scalar_subquery()
        )
        in_lane = aliased(Job)
        running_in_lane = (
            select(func.count())
            .select_from(in_lane)
            .where(
                in_lane.lane == candidate.lane,
                in_lane.status == "running",
                in_lane.lease_expires_at >= now,
            )
            .scalar_subquery()
        )
        served = aliased(Job)
        lane_last_claimed = (
            select(func.max(served.claimed_at)).where(served.lane == candidate.lane).scalar_subquery()
        )
        claimable = or_(
            and_(candidate.status == "queued", candidate.run_after <= now),
            and_(candidate.status == "running", candidate.lease_expires_at < now),
        )
        query = select(candidate.id).where(claimable)
        if kinds:
            query = query.where(candidate.kind.in_(kinds))
        query = query.order_by(
            candidate.priority.desc(),
            running_in_team,
            running_in_lane,
            lane_last_claimed.asc().nulls_first(),
            candidate.run_after,
            candidate.created_at,
            candidate.id,
        ).limit(1)
        if self.db.is_postgres:
            query = query.with_for_update(skip_locked=True, of=candidate)
        statement = (
            update(Job)
            .where(Job.id == query.scalar_subquery())
            .values(
                status="running",
                # a queued job starts an attempt; one whose worker died goes on with the same attempt
                attempts=case((Job.status == "queued", Job.attempts + 1), else_=Job.attempts),
                lease_expiries=case(
                    (Job.status == "running", Job.lease_expiries + 1), else_=Job.lease_expiries
                ),
                lease_owner=worker_id,
                lease_expires_at=now + timedelta(seconds=lease_seconds),
                claimed_at=now,
                updated_at=now,
            )
            .returning(Job)
        )
        async with self.db.transaction() as session:
            row = (await session.execute(statement)).scalar_one_or_none()
            return _job_record(row) if row is not None else None

    async def heartbeat(self, job_id: str, worker_id: str, *, lease_seconds: float) -> bool:
        """Extend the lease; False means this worker no longer holds the job and must stop."""
        now = utcnow()
        async with self.db.transaction() as session:
            result = await session.execute(
                update(Job)
                .where(Job.id == job_id, Job.lease_owner == worker_id, Job.status == "running")
                .values(lease_expires_at=now + timedelta(seconds=lease_seconds), updated_at=now)
            )
            return bool(result.rowcount)  # type: ignore[attr-defined]

    async def _finish(self, job_id: str, worker_id: str, **values: Any) -> bool:
        async with self.db.transaction() as session:
            result = await session.execute(
                update(Job)
                .where(Job.id == job_id, Job.lease_owner == worker_id, Job.status == "running")
                .values(lease_owner=None, lease_expires_at=None, updated_at=utcnow(), **values)
            )
            return bool(result.rowcount)  # type: ignore[attr-defined]

    async def complete(self, job_id: str, worker_id: str, result: dict[str, Any] | None = None) -> bool:
        return await self._finish(job_id, worker_id, status="done", result=result, last_error=None)

    async def fail(
        self,
        job_id: str,
        worker_id: str,
        error: str,
        *,
        retry_delay_seconds: float = 0,
        permanent: bool = False,
    ) -> bool:
        """Record the error; the job is queued again while attempts remain, else (or when ``permanent``: no
        retry can fix it) it is failed for good."""
        async with self.db.sessions() as session:
            row = await session.get(Job, job_id)
            if row is None:
                raise NotFound(f"job {job_id} not found")
            attempts, max_attempts = row.attempts, row.max_attempts
        if attempts < max_attempts and not permanent:
            return await self._finish(
                job_id,
                worker_id,
                status="queued",
                last_error=error,
                run_after=utcnow() + timedelta(seconds=retry_delay_seconds),
            )
        return await self._finish(job_id, worker_id, status="failed", last_error=error)

    async def retry(self, job_id: str) -> JobRecord:
        """Queue a failed job again with a fresh attempt budget (its last error stays visible)."""
        async with self.db.transaction() as session:
            row = await session.get(Job, job_id)
            if row is None:
                raise NotFound(f"job {job_id} not found")
            if row.status != "failed":
                raise ValueError(f"job {job_id} is {row.status}; only failed jobs can be retried")
            row.status = "queued"
            row.attempts = 0
            row.lease_expiries = 0
            row.run_after = utcnow()
            await session.flush()
            await announce_job(session)
            record = _job_record(row)
        self.doorbell.ring()
        return record

    async def get(self, job_id: str) -> JobRecord:
        async with self.db.sessions() as session:
            row = await session.get(Job, job_id)
            if row is None:
                raise NotFound(f"job {job_id} not found")
            return _job_record(row)

    async def list_jobs(self, *, status: JobStatus | None = None, kind: str | None = None) -> list[JobRecord]:
        query = select(Job)
        if status is not None:
            query = query.where(Job.status == status)
        if kind is not None:
            query = query.where(Job.kind == kind)
        async with self.db.sessions() as session:
            return [_job_record(row) for row in await session.scalars(query.order_by(Job.created_at, Job.id))]

    async def queue_positions(self, kinds: list[str] | None = None) -> dict[str, int]:
        """Job id → 1-based place in the claim order of every queued job (of ``kinds``), as the fair
        order would take them one at a time from now (running jobs count as they are)."""
        now = utcnow()
        queued = select(Job.id, Job.team_id, Job.lane, Job.run_after, Job.created_at, Job.priority).where(
            Job.status == "queued"
        )
        running = select(Job.team_id, Job.lane).where(Job.status == "running", Job.lease_expires_at >= now)
        if kinds:
            queued = queued.where(Job.kind.in_(kinds))
        async with self.db.sessions() as session:
            waiting = (await session.execute(queued)).all()
            if not waiting:
                return {}
            busy = (await session.execute(running)).all()
            lanes = {row.lane for row in waiting if row.lane is not None}
            served = dict(
                (
                    await session.execute(
                        select(Job.lane, func.max(Job.claimed_at))
                        .where(Job.lane.in_(lanes))
                        .group_by(Job.lane)
                    )
                ).all()
            )
        return _fair_positions(waiting, busy, served)


def _fair_positions(waiting: Any, busy: Any, served: dict[Any, datetime | None]) -> dict[str, int]:
    """Simulate the claim order of :meth:`SqlJobQueue._claim_one` over ``waiting`` rows (id, team_id,
    lane, run_after, created_at, priority), with ``busy`` (team_id, lane) rows running and ``served`` the
    time each lane was last claimed: each lane offers its first job (highest priority, then oldest); the
    highest priority goes first, then the fair order; the lane taken goes to the back."""
    team_running: dict[Any, int] = defaultdict(int)
    lane_running: dict[Any, int] = defaultdict(int)
    for team_id, lane in busy:
        team_running[team_id] += 1
        if lane is not None:
            lane_running[lane] += 1
    per_lane: dict[Any, list[Any]] = defaultdict(list)
    for row in waiting:
        per_lane[row.lane if row.lane is not None else ("job", row.id)].append(row)
    queues = {
        key: deque(sorted(rows, key=lambda r: (-r.priority, r.run_after, r.created_at, r.id)))
        for key, rows in per_lane.items()
    }

    def rank(key: Any, last: tuple[int, Any]) -> tuple[Any, ...]:
        head = queues[key][0]
        lane = head.lane
        running = lane_running[lane] if lane is not None else 0
        return (
            -head.priority,
            team_running[head.team_id],
            running,
            last,
            head.run_after,
            head.created_at,
            head.id,
            key,
        )

    heap: list[tuple[Any, ...]] = []
    for key in queues:
        last_time = served.get(key) if not isinstance(key, tuple) else None
        last = (0, 0.0) if last_time is None else (1, last_time.timestamp())
        heapq.heappush(heap, rank(key, last))
    positions: dict[str, int] = {}
    turn = 0
    while heap:
        entry = heapq.heappop(heap)
        key = entry[-1]
        positions[queues[key].popleft().id] = len(positions) + 1
        if queues[key]:
            turn += 1
            heapq.heappush(heap, rank(key, (2, float(turn))))
    return positions
