"""The address guard (tenants/netguard.py), row by row: every refused address names why, every
public one passes. The same rows go through both callers in
answering/tests/test_handoff_target_addresses.py and corpus/tests/test_websync_addresses.py."""

from __future__ import annotations

import pytest

from tenants.netguard import address_refusal, first_refused
from tenants.tests.address_table import ALLOWED, REFUSED


@pytest.mark.parametrize(("address", "why"), REFUSED)
def test_refused_addresses_name_why(address: str, why: str) -> None:
    refusal = address_refusal(address)
    assert refusal is not None and why in refusal, refusal


@pytest.mark.parametrize("address", ALLOWED)
def test_public_addresses_pass(address: str) -> None:
    assert address_refusal(address) is None


def test_one_inside_address_among_public_ones_refuses_the_name() -> None:
    assert first_refused(["8.8.8.8", "2002:7f00:1::", "1.1.1.1"]) == ("2002:7f00:1::", "6to4 127.0.0.1, loopback (127.0.0.0/8)")
    assert first_refused(["8.8.8.8", "2606:4700::1111"]) is None
