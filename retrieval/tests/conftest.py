"""A small committed world for retrieval: two tenants, audiences, archived and contested text,
embedded with the real model so the vector leg is tested for real."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import Cast, _make_cast
from corpus.ingest.flow import ingest_paths

ACME_DOCS = {
    "billing/refunds.md": "# Refunds\n\n## Refund window\n\nRefunds are issued within 14 days of a purchase. "
                          "Partial refunds are allowed for annual plans.\n",
    "api/errors.md": "# Error codes\n\n## E1042\n\nError E1042 means the API key was revoked. Create a new key.\n\n"
                     "## E1043\n\nError E1043 means the signature timestamp is too old.\n",
    "config/limits.md": "# Limits\n\n## Connections\n\nSet max_connections to raise the connection ceiling; "
                        "the default is 100.\n",
    "guides/webhooks.md": "# Webhooks\n\n## Retries\n\nFailed webhook deliveries are retried with exponential "
                          "backoff for three days.\n",
    "internal/escalation.md": "---\naudience: internal\n---\n# Escalation runbook\n\n## Paging\n\n"
                              "Page the duty manager through the quokkaline pager.\n",
    "old/pricing-2023.md": "# Pricing 2023\n\n## Plans\n\nThe starter plan costs $9 per month.\n",
    "pricing.md": "---\nsupersedes: old/pricing-2023\n---\n# Pricing\n\n## Plans\n\nThe starter plan costs $12 per month.\n",
}
GLOBEX_DOCS = {
    "secret.md": "# Globex vault\n\n## Zanzibar protocol\n\nThe zanzibar protocol rotates vault keys every "
                 "six hours using the marmoset scheduler.\n",
}


@dataclass
class RetrievalWorld:
    acme: Cast
    globex: Cast


def _write(root: Path, docs: dict[str, str]) -> Path:
    for name, text in docs.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture(scope="session")
def retrieval_world(django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory) -> RetrievalWorld:
    root = tmp_path_factory.mktemp("retrieval")
    with django_db_blocker.unblock():
        acme, globex = _make_cast("ret-acme"), _make_cast("ret-globex")
        ingest_paths(tenant=acme.tenant, paths=[_write(root / "acme", ACME_DOCS)])
        ingest_paths(tenant=globex.tenant, paths=[_write(root / "globex", GLOBEX_DOCS)])
    return RetrievalWorld(acme, globex)
