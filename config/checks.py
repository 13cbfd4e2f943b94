"""System check: the application's connection must be one that row-level security binds.

Isolation under the scope rests on PostgreSQL's row-level security, which silently does not
apply to a superuser, to a role with BYPASSRLS (common for a hosted service's `postgres`
role) or, through ALTER TABLE, to a table's owner. With `DATABASE_URL` set and no separate
application role, the app would run as the owner and nothing would say so. These checks are
Errors, and the ASGI/WSGI entry points run them before serving (`refuse_unsafe_start`), so
such a server does not start (docs/decisions/0035).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.checks import CheckMessage, Error, register
from django.core.management.base import SystemCheckError
from django.db import DatabaseError, connections

TAG = "row_level_security"
HINT = ("Connect the application as its own role: CREATE ROLE answerdesk_app LOGIN NOSUPERUSER NOBYPASSRLS; "
        "set APP_DATABASE_URL to connect as it and APP_DATABASE_ROLE to its name; keep DATABASE_URL for the "
        "owner, which runs `manage.py migrate` and grants the application role what it needs.")

# One row about current_user. "Can become" counts role membership: a member of a superuser or
# BYPASSRLS role can SET ROLE to it, and a member of a table's owner holds the owner's rights
# (ALTER TABLE ... NO FORCE ROW LEVEL SECURITY). Tenant tables are those with RLS enabled.
_ROLE_FACTS = """
SELECT current_user,
       r.rolsuper OR EXISTS (SELECT 1 FROM pg_roles s WHERE s.rolsuper AND s.oid <> r.oid
                              AND pg_has_role(r.oid, s.oid, 'MEMBER')),
       r.rolbypassrls OR EXISTS (SELECT 1 FROM pg_roles b WHERE b.rolbypassrls AND b.oid <> r.oid
                                  AND pg_has_role(r.oid, b.oid, 'MEMBER')),
       coalesce((SELECT array_agg(c.relname::text ORDER BY c.relname)
                   FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                  WHERE c.relkind IN ('r', 'p') AND c.relrowsecurity AND n.nspname = 'public'
                    AND pg_has_role(r.oid, c.relowner, 'MEMBER')), '{}')
  FROM pg_roles r WHERE r.rolname = current_user
"""


def role_problems(cursor: Any) -> list[CheckMessage]:
    """What is wrong with the role `cursor` is connected as; [] when RLS binds it."""
    cursor.execute(_ROLE_FACTS)
    user, superuser, bypass, owned = cursor.fetchone()
    problems: list[CheckMessage] = []
    if superuser:
        problems.append(Error(
            f"The application connects as {user!r}, a superuser (or a member of one): row-level security "
            "does not apply to it, so every tenant's rows are visible to every request.",
            hint=HINT, id="answerdesk.E001"))
    if bypass:
        problems.append(Error(
            f"The application connects as {user!r}, which has BYPASSRLS (itself or through a role it belongs "
            "to): row-level security is switched off for it without a word.",
            hint=HINT + " Hosted services often give their default role BYPASSRLS; do not use it for the app.",
            id="answerdesk.E002"))
    if owned:
        shown = ", ".join(list(owned)[:5]) + (" …" if len(owned) > 5 else "")
        problems.append(Error(
            f"The application connects as {user!r}, which owns tenant tables ({shown}): an owner can turn "
            "their row-level security off, and does not need the grants `migrate` gives.",
            hint=HINT, id="answerdesk.E003"))
    return problems


@register(TAG, "database")
def check_application_role(app_configs: Sequence[Any] | None = None, databases: Sequence[str] | None = None,
                           **kwargs: Any) -> list[CheckMessage]:
    if not databases or "default" not in databases:
        return []
    try:
        with connections["default"].cursor() as cursor:
            return role_problems(cursor)
    except DatabaseError as exc:
        return [Error(
            f"Could not verify the application's database role: {exc}".strip(),
            hint="The server starts only once it has confirmed that row-level security binds its role; "
                 "check that the database is running and APP_DATABASE_URL (or DATABASE_URL) is right.",
            id="answerdesk.E004")]


def refuse_unsafe_start() -> None:
    """Run at the start of the ASGI/WSGI application: raise (and so stop the server) unless
    the application's connection is bound by row-level security. uvicorn and gunicorn run no
    system checks of their own."""
    from django.core import checks

    messages = checks.run_checks(tags=[TAG], databases=["default"])
    serious = [m for m in messages if m.is_serious() and not m.is_silenced()]
    connections["default"].close()  # the check's connection belongs to no request
    if serious:
        raise SystemCheckError("The server will not start:\n" + "\n".join(
            f"{m.id}: {m.msg}\n    HINT: {m.hint}" for m in serious))
