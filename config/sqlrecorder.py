"""Every distinct SQL statement a process sends, with the code that sent it (docs/decisions/0120).

The hook sits in psycopg's cursor classes, below Django: the ORM, `connection.cursor()` and raw
`psycopg.connect()` cursors (the embedded server's bootstrap, the process tests) all pass through
`Cursor.execute`, so nothing reaches the server unseen. What is kept is the statement as the code
wrote it, with `%s` / `%(name)s` placeholders turned into `$n`, not the bound values: one
template per call site, so the set stays small however many rows the suite writes.

Off unless `install()` is called: the pytest plugin (config/statement_check.py) calls it in the
test process and sets ANSWERDESK_RECORD_SQL_DIR, so that the app and worker processes the tests
start (uvicorn, `db_worker`) install it too from config/apps.py and append their statements to
a file of their own there, one JSON line per new statement, written at once (a worker killed
mid-job keeps what it sent).
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import psycopg
from psycopg import sql

ENV_DIR = "ANSWERDESK_RECORD_SQL_DIR"
ROOT = Path(__file__).resolve().parent.parent
_ROOT_PREFIX = str(ROOT) + os.sep
_SELF = str(Path(__file__).resolve())
# Frames of libraries: the call site is the first frame of ours past them.
_FOREIGN = (os.sep + ".venv" + os.sep, "site-packages", os.sep + "lib" + os.sep + "python")
_PLACEHOLDER = re.compile(r"%%|%\((?P<name>[^)]+)\)[sbt]|%[sbt]")
_MIGRATING = os.sep.join(("django", "db", "migrations", ""))
_ADMIN = os.sep.join(("django", "contrib", "admin", ""))
# Django names each savepoint afresh ("s1400_x36688"): one template, not thousands.
_SAVEPOINT = re.compile(r'^((?:RELEASE |ROLLBACK TO )?SAVEPOINT) "?[A-Za-z0-9_]+"?$')


@dataclass(frozen=True)
class Recorded:
    """One statement template as one call site sent it."""

    statement: str  # placeholders as $n
    frames: tuple[str, ...]  # our frames, innermost first: "path/to/file.py:function"
    migrating: bool  # Django's migration executor was on the stack
    admin: bool  # Django's admin site (django.contrib.admin) was on the stack
    process: str  # "test" for the pytest process, else the command line's first words
    planted: bool = False  # sent while a test marked planted_sql ran: a bad statement on purpose

    def as_json(self) -> str:
        return json.dumps({"statement": self.statement, "frames": list(self.frames), "migrating": self.migrating,
                           "admin": self.admin, "process": self.process, "planted": self.planted})

    @staticmethod
    def from_json(line: str) -> Recorded:
        data = json.loads(line)
        return Recorded(statement=data["statement"], frames=tuple(data["frames"]),
                        migrating=bool(data["migrating"]), admin=bool(data.get("admin")), process=str(data["process"]),
                        planted=bool(data.get("planted")))


def numbered(*, query: str, has_params: bool) -> str:
    """psycopg's placeholders as PostgreSQL's `$n` (one number per name), so the parser reads it.

    psycopg interprets `%` only when parameters are passed; without them the text went as is."""
    if not has_params:
        return query
    names: dict[str, int] = {}
    counter = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal counter
        if match.group(0) == "%%":
            return "%"
        name = match.group("name")
        if name is not None:
            if name not in names:
                counter += 1
                names[name] = counter
            return f"${names[name]}"
        counter += 1
        return f"${counter}"

    return _PLACEHOLDER.sub(replace, query)


class Recorder:
    """Collects distinct (template, call site) pairs; thread-safe, never raises into the caller."""

    def __init__(self, *, sink: Path | None, process: str) -> None:
        self.sink = sink
        self.process = process
        self.records: list[Recorded] = []
        self.sent = 0  # statements sent, repeats included
        self.planted = False  # set by the plugin around a test marked planted_sql
        self._seen: set[tuple[str, str, int, bool]] = set()
        self._lock = threading.Lock()

    def note(self, *, query: Any, has_params: bool, context: Any) -> None:
        try:
            self.sent += 1
            text = _text(query, context)
            if text is None:
                return
            if "SAVEPOINT" in text[:30]:
                text = _SAVEPOINT.sub(r"\1 s", text)
            frame = sys._getframe(2)
            site = _call_site(frame)
            key = (text, site[0], site[1], self.planted)
            if key in self._seen:
                return
            frames, migrating, admin = _frames(frame)
            record = Recorded(statement=numbered(query=text, has_params=has_params), frames=frames,
                              migrating=migrating, admin=admin, process=self.process, planted=self.planted)
            with self._lock:
                if key in self._seen:
                    return
                self._seen.add(key)
                self.records.append(record)
                if self.sink is not None:
                    with self.sink.open("a", encoding="utf-8") as out:
                        out.write(record.as_json() + "\n")
        except Exception:  # noqa: BLE001 - a recorder fault must never fail the statement it watches
            pass


def _text(query: Any, context: Any) -> str | None:
    if isinstance(query, str):
        return query
    if isinstance(query, bytes):
        return query.decode("utf-8", "replace")
    if isinstance(query, sql.Composable):
        return query.as_string(context)
    return None


def _ours(filename: str) -> bool:
    return filename.startswith(_ROOT_PREFIX) and filename != _SELF and not any(f in filename for f in _FOREIGN)


def _call_site(frame: FrameType | None) -> tuple[str, int]:
    while frame is not None:
        if _ours(frame.f_code.co_filename):
            return frame.f_code.co_filename, frame.f_lineno
        frame = frame.f_back
    return "", 0


def _frames(frame: FrameType | None) -> tuple[tuple[str, ...], bool, bool]:
    frames: list[str] = []
    migrating = admin = False
    while frame is not None:
        filename = frame.f_code.co_filename
        migrating = migrating or _MIGRATING in filename
        admin = admin or _ADMIN in filename
        if _ours(filename) and len(frames) < 16:
            frames.append(f"{filename[len(_ROOT_PREFIX):]}:{frame.f_code.co_name}")
        frame = frame.f_back
    return tuple(frames), migrating, admin


_ACTIVE: Recorder | None = None
_ORIGINALS: dict[tuple[type, str], Any] = {}


def active() -> Recorder | None:
    return _ACTIVE


def install(*, sink: Path | None = None, process: str = "test") -> Recorder:
    """Start recording in this process (idempotent); `sink` appends each new statement as JSON."""
    global _ACTIVE
    if _ACTIVE is not None:
        return _ACTIVE
    _ACTIVE = Recorder(sink=sink, process=process)
    for cls in (psycopg.Cursor, psycopg.ServerCursor, psycopg.AsyncCursor, psycopg.AsyncServerCursor):
        for name in ("execute", "executemany", "stream", "copy"):
            if name in vars(cls):
                _patch(cls, name)
    return _ACTIVE


def uninstall() -> None:
    global _ACTIVE
    for (cls, name), original in _ORIGINALS.items():
        setattr(cls, name, original)
    _ORIGINALS.clear()
    _ACTIVE = None


def install_from_environment() -> None:
    """In a process the tests started: record into ANSWERDESK_RECORD_SQL_DIR when it is set."""
    directory = os.environ.get(ENV_DIR)
    if not directory:
        return
    process = " ".join(Path(a).name for a in sys.argv[:3])
    install(sink=Path(directory) / f"{os.getpid()}.jsonl", process=process)


def _patch(cls: type, name: str) -> None:
    original = vars(cls)[name]
    _ORIGINALS[(cls, name)] = original
    with_params = name in ("execute", "executemany", "stream")

    def wrapper(self: Any, query: Any, params_or_seq: Any = None, *args: Any, **kwargs: Any) -> Any:
        recorder = _ACTIVE
        if recorder is not None:
            has_params = with_params and params_or_seq is not None
            if name == "copy":  # copy(statement, params=None)
                has_params = params_or_seq is not None
            recorder.note(query=query, has_params=has_params, context=self)
        return original(self, query, params_or_seq, *args, **kwargs)

    wrapper.__name__ = original.__name__
    wrapper.__qualname__ = original.__qualname__
    wrapper.__doc__ = original.__doc__
    setattr(cls, name, wrapper)


def read_directory(directory: Path) -> list[Recorded]:
    """What the processes the tests started recorded (a killed one may leave a torn last line)."""
    found: list[Recorded] = []
    for path in sorted(directory.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                found.append(Recorded.from_json(line))
            except (ValueError, KeyError):
                continue
    return found
