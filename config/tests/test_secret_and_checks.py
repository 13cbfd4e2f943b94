"""Defaults a stranger cannot exploit (issue 15 items 4 and 8): a generated secret key, and a
server that refuses an application connection row-level security does not bind."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from io import StringIO
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
from django.conf import settings
from django.core import signing
from django.core.management import call_command
from django.core.management.base import CommandError
from psycopg import sql

from config import checks
from config.secret import SecretKeyFileInvalid, generated_secret_key

ROOT = Path(__file__).resolve().parents[2]
# The key committed in config/settings.py until issue 15; anyone could sign with it.
PUBLISHED_DEV_SECRET = "answerdesk-dev-only-insecure-secret-key-change-me-0123456789abcdef"


# --- the secret key --------------------------------------------------------------------------

def test_the_key_is_generated_once_private_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "var" / "secret_key"
    key = generated_secret_key(path)
    assert len(key) >= 50 and key != PUBLISHED_DEV_SECRET
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert generated_secret_key(path) == key
    assert sorted(p.name for p in path.parent.iterdir()) == ["secret_key"]  # no temporary file left


def test_processes_starting_at_once_agree_on_one_key(tmp_path: Path) -> None:
    path = tmp_path / "secret_key"
    with ProcessPoolExecutor(max_workers=6) as pool:
        keys = set(pool.map(generated_secret_key, [path] * 24))
    assert keys == {path.read_text().strip()}


def test_a_damaged_or_shared_key_file_is_refused_and_kept(tmp_path: Path) -> None:
    short = tmp_path / "short"
    short.write_text("abc\n")
    short.chmod(0o600)
    with pytest.raises(SecretKeyFileInvalid, match="fewer than 50"):
        generated_secret_key(short)
    assert short.read_text() == "abc\n"  # never overwritten: whatever it signed is not lost
    shared = tmp_path / "shared"
    shared.write_text("k" * 60)
    shared.chmod(0o644)
    with pytest.raises(SecretKeyFileInvalid, match="chmod 600"):
        generated_secret_key(shared)


def _settings_key(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    code = "import django; django.setup(); from django.conf import settings; print(settings.SECRET_KEY)"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"})


def test_two_settings_loads_share_the_persisted_key(tmp_path: Path) -> None:
    env = {**os.environ, "DEBUG": "1", "ANSWERDESK_SECRET_KEY_FILE": str(tmp_path / "secret_key")}
    env.pop("SECRET_KEY", None)
    first, second = _settings_key(env), _settings_key(env)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout and first.stdout.strip() == (tmp_path / "secret_key").read_text().strip()
    assert _settings_key({**env, "SECRET_KEY": "y" * 60}).stdout.strip() == "y" * 60  # the environment wins


def test_no_published_key_remains_and_its_signatures_are_refused() -> None:
    assert settings.SECRET_KEY != PUBLISHED_DEV_SECRET
    for path in (ROOT / "config").glob("*.py"):
        assert PUBLISHED_DEV_SECRET not in path.read_text(), path
    forged = signing.dumps({"t": 1, "r": 1}, salt="answerdesk.chat.feedback", key=PUBLISHED_DEV_SECRET)
    with pytest.raises(signing.BadSignature):
        signing.loads(forged, salt="answerdesk.chat.feedback")


# --- the application role ----------------------------------------------------------------------

def _connect(role: str) -> psycopg.Connection[Any]:
    cfg = settings.DATABASES["default"]
    return psycopg.connect(host=cfg["HOST"], dbname=cfg["NAME"], user=role, port=cfg.get("PORT") or None,
                           autocommit=True)


ROLES = {
    "adtest_superuser": "LOGIN SUPERUSER",
    "adtest_bypassrls": "LOGIN NOSUPERUSER BYPASSRLS",
    "adtest_owner_member": "LOGIN NOSUPERUSER NOBYPASSRLS",
}


@pytest.fixture(scope="module")
def roles(django_db_setup: Any) -> Iterator[dict[str, str]]:
    """Real roles in the throwaway cluster: a superuser, a BYPASSRLS role, a member of the
    owner role, next to the owner itself and the application role."""
    owner = settings.DATABASES["owner"]["USER"]
    with _connect("postgres") as conn:
        existing = {r for (r,) in conn.execute("SELECT rolname FROM pg_roles")}
        for name, attributes in ROLES.items():
            if name not in existing:
                conn.execute(sql.SQL("CREATE ROLE {} " + attributes).format(sql.Identifier(name)))
        conn.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(owner), sql.Identifier("adtest_owner_member")))
    yield {"owner": owner, "app": settings.DATABASES["default"]["USER"], **{name: name for name in ROLES}}


def _ids(role: str) -> list[str | None]:
    with _connect(role) as conn, conn.cursor() as cursor:
        return [message.id for message in checks.role_problems(cursor)]


def test_the_application_role_passes(roles: dict[str, str]) -> None:
    assert _ids(roles["app"]) == []


@pytest.mark.parametrize("role, expected", [
    ("adtest_superuser", "answerdesk.E001"),
    ("adtest_bypassrls", "answerdesk.E002"),
    ("owner", "answerdesk.E003"),
    ("adtest_owner_member", "answerdesk.E003"),
])
def test_a_role_that_rls_does_not_bind_is_an_error(roles: dict[str, str], role: str, expected: str) -> None:
    assert expected in _ids(roles[role])
    if role == "adtest_bypassrls":
        assert _ids(roles[role]) == ["answerdesk.E002"]


@pytest.mark.django_db
def test_the_registered_check_passes_for_the_test_servers_connection() -> None:
    from django.core.checks import run_checks

    assert [m.id for m in run_checks(tags=[checks.TAG], databases=["default"])] == []


def _start_asgi(app_role: str) -> subprocess.CompletedProcess[str]:
    """Import config.asgi as uvicorn would, against the throwaway server through DATABASE_URL."""
    cfg = settings.DATABASES["default"]
    host = quote(str(cfg["HOST"]), safe="")
    env = {**os.environ, "DATABASE_URL": f"postgresql://{settings.DATABASES['owner']['USER']}@{host}/{cfg['NAME']}",
           "APP_DATABASE_URL": f"postgresql://{app_role}@{host}/{cfg['NAME']}", "APP_DATABASE_ROLE": app_role,
           "DJANGO_SETTINGS_MODULE": "config.settings"}
    return subprocess.run([sys.executable, "-c", "import config.asgi"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=180)


def test_the_server_refuses_to_start_as_a_bypassrls_role_and_starts_as_the_app_role(roles: dict[str, str]) -> None:
    refused = _start_asgi(roles["adtest_bypassrls"])
    assert refused.returncode != 0
    assert "will not start" in refused.stderr and "answerdesk.E002" in refused.stderr, refused.stderr[-2000:]
    started = _start_asgi(roles["app"])
    assert started.returncode == 0, started.stderr[-2000:]


# --- what migrate says --------------------------------------------------------------------------

@pytest.mark.django_db(databases=["default", "owner"])
def test_migrate_says_what_it_granted(roles: dict[str, str]) -> None:
    out = StringIO()
    call_command("migrate", verbosity=1, stdout=out, stderr=StringIO())
    assert f"Granted the application role {roles['app']!r} SELECT, INSERT, UPDATE, DELETE on" in out.getvalue()


@pytest.mark.django_db(databases=["default", "owner"])
def test_migrate_says_why_it_could_not_grant(roles: dict[str, str], settings: Any) -> None:
    settings.DATABASE_APP_ROLE = "adtest_no_such_role"
    with pytest.raises(CommandError, match="'adtest_no_such_role'.*does not exist"):
        call_command("migrate", verbosity=0, stdout=StringIO(), stderr=StringIO())
    settings.DATABASE_APP_ROLE = None
    err = StringIO()
    call_command("migrate", verbosity=0, stdout=StringIO(), stderr=err)
    assert "Granted nothing: APP_DATABASE_ROLE is not set" in err.getvalue()
    settings.DATABASE_APP_ROLE = roles["adtest_bypassrls"]
    err = StringIO()
    call_command("migrate", verbosity=0, stdout=StringIO(), stderr=err)
    assert "a BYPASSRLS role" in err.getvalue() and "refuses to start" in err.getvalue()
