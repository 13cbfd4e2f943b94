"""A job for the two-worker test (config/tests/test_two_workers.py): it says when it starts and,
after `seconds`, that it finished, in files of `folder`; a second finish is written apart."""

from __future__ import annotations

import os
import time
from pathlib import Path

from django_tasks import task


@task()
def recorded_job(*, number: int, folder: str, seconds: float) -> int:
    place = Path(folder)
    with (place / f"{number}.started").open("a", encoding="utf-8") as started:
        started.write(f"{os.getpid()}\n")
    time.sleep(seconds)
    try:
        # O_EXCL: the first finish creates the file; a second one (a job run twice) cannot.
        done = os.open(place / f"{number}.done", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        (place / f"{number}.twice").write_text(str(os.getpid()), encoding="utf-8")
        return number
    os.write(done, str(os.getpid()).encode())
    os.close(done)
    return number
