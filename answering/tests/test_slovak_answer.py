"""A Slovak tenant answers in Slovak (issue 49 item 5, docs/decisions/0125): searchable is not yet
answered; the gate, the extractive answer and its citation run on the Slovak keys too. The
keys' own cases are in retrieval/tests/test_slovak_keys.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from answering.pipeline.config import configuration
from answering.pipeline.flow import answer
from corpus.ingest.flow import ingest_paths
from tenants import actions

PAGES = {
    "venceni.md": "# Venčenie\n\nKaždého psa venčíme dvakrát denne, ráno a večer.\n",
    "krmenie.md": "# Kŕmenie\n\nPsovi dávame granule raz denne.\n",
    "doprava.md": "# Doprava\n\nZásielky doručujeme do dvoch pracovných dní od objednávky.\n",
}


@pytest.mark.django_db
def test_a_slovak_tenant_answers_a_slovak_question_in_other_word_forms(tmp_path: Path) -> None:
    tenant = actions.tenant_create(slug="sk-answers", name="Slovenská poradňa", language="sk")
    for name, text in PAGES.items():
        (tmp_path / name).write_text(text)
    ingest_paths(tenant=tenant, paths=[tmp_path])
    config = configuration().with_overrides({"answer.use_cache": False})
    walked = answer(tenant=tenant, audiences=["public"], question="Koľkokrát denne venčíte psa?", config=config)
    assert walked.action == "answered" and "dvakrát denne" in walked.text, walked
    # `zásielku` as asked, `Zásielky` as written (and `doručíte` is doručiť, `doručujeme` doručovať: no match).
    shipped = answer(tenant=tenant, audiences=["public"], question="Kedy mi doručíte zásielku?", config=config)
    assert shipped.action == "answered" and [s["slug"] for s in shipped.sources] == ["doprava"], shipped
