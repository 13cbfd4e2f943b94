"""Who reads on the command line (tenants/cli.py): `manage.py search` and `ask` take the same
`--tenant` and `--audience`, and an unknown tenant stops either before it reads anything."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from conftest import Cast
from tenants.cli import reader_from

pytestmark = pytest.mark.django_db


def test_a_reader_is_a_tenant_and_its_audiences_public_by_default(acme: Cast) -> None:
    assert reader_from({"tenant": "acme", "audience": None}) == (acme.tenant, ["public"])
    assert reader_from({"tenant": "acme", "audience": ["customer"]}) == (acme.tenant, ["customer"])


@pytest.mark.parametrize("command", ["search", "ask"])
def test_an_unknown_tenant_stops_the_command(command: str) -> None:
    with pytest.raises(CommandError, match="tenant 'nobody' does not exist"):
        call_command(command, "How do refunds work?", tenant="nobody")
