"""Webhook targets go through the one address guard (tenants/netguard.py): every row of its
table, as the literal host of a webhook URL, is refused or passes as the table says."""

from __future__ import annotations

from typing import Any

import pytest

from answering.handoff import targets
from tenants.tests.address_table import ALLOWED, REFUSED


def _url(address: str) -> str:
    return f"https://[{address}]/hook" if ":" in address else f"https://{address}/hook"


@pytest.mark.parametrize("address", [a for a, _ in REFUSED if "%" not in a and a != "localhost"])
def test_a_webhook_on_an_inside_address_is_refused(address: str, settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
    with pytest.raises(targets.UnsafeTarget):
        targets.target_check(_url(address))


@pytest.mark.parametrize("address", ALLOWED)
def test_a_webhook_on_a_public_address_passes(address: str, settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
    assert len(targets.target_check(_url(address))) == 1
