"""The data dir's write check as several processes run it at once (serve and worker start together)."""

from __future__ import annotations

import threading
from pathlib import Path

from fathom.config import Settings


def test_processes_starting_together_on_one_data_dir_all_pass_the_write_check(tmp_path: Path) -> None:
    # The probe file used to have one fixed name: a worker and a server (or the killed-worker test's
    # poller) checking the same dir at once unlinked each other's probe and one refused to start (ENOENT).
    settings = Settings(data_dir=tmp_path / "data")
    failures: list[BaseException] = []
    start = threading.Barrier(8)

    def check_repeatedly() -> None:
        start.wait()
        for _ in range(300):
            try:
                settings.ensure_data_dir()
            except BaseException as exc:  # noqa: BLE001 - every failure is the finding
                failures.append(exc)
                return

    threads = [threading.Thread(target=check_repeatedly) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert list((tmp_path / "data").iterdir()) == []
