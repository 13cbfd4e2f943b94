"""Website sources go through the one address guard (tenants/netguard.py): every row of its
table, as what a source's host name resolves to, is refused or passes as the table says."""

from __future__ import annotations

from typing import Any

import pytest

from corpus.sources.websync.fetch import UnsafeAddress, check_url
from tenants.tests.address_table import ALLOWED, REFUSED


def _resolves_to(address: str) -> Any:
    def resolve(host: str, port: int) -> list[str]:
        return [address]
    return resolve


@pytest.mark.parametrize("address", [a for a, _ in REFUSED])
def test_a_source_resolving_inside_is_refused(address: str, settings: Any) -> None:
    settings.WEBSYNC_ALLOW_PRIVATE_ADDRESSES = False
    with pytest.raises(UnsafeAddress, match=f"help.example.com resolves to {address}"):
        check_url("https://help.example.com/", resolve=_resolves_to(address))


@pytest.mark.parametrize("address", [a for a, _ in REFUSED if "%" not in a and a != "localhost"])
def test_a_source_on_an_inside_literal_is_refused(address: str, settings: Any) -> None:
    settings.WEBSYNC_ALLOW_PRIVATE_ADDRESSES = False
    url = f"https://[{address}]/" if ":" in address else f"https://{address}/"
    with pytest.raises(UnsafeAddress):
        check_url(url)


@pytest.mark.parametrize("address", ALLOWED)
def test_a_source_resolving_to_a_public_address_passes(address: str, settings: Any) -> None:
    settings.WEBSYNC_ALLOW_PRIVATE_ADDRESSES = False
    assert check_url("https://help.example.com/", resolve=_resolves_to(address)) == [address]
