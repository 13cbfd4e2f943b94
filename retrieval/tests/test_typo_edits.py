"""A hurried typo is one edit from the word meant (docs/decisions/0099): `lnog` shares one
trigram with `long`, so trigrams alone left it, the question was called a name the pages never
mention, and it escalated while the spelled question answered. Negative tests first: a word the
dictionary knows is never moved, another tenant's and a hidden audience's vocabulary offer no
correction, and a word with no neighbour stays what it was."""

from __future__ import annotations

import pytest

from answering.pipeline.gate import confidence_gate
from retrieval.search import corrected_text, search
from retrieval.tests.conftest import RetrievalWorld
from retrieval.typos import Correction, one_edit
from tenants.scope import TenantScope


def _public(world: RetrievalWorld) -> TenantScope:
    return TenantScope(tenant_id=world.acme.tenant.id, audience_ids=(world.acme.public_id,))


def test_one_edit_covers_swaps_drops_additions_and_replacements() -> None:
    variants = one_edit("lnog")
    assert {"long", "log", "lnogs", "lnig"} <= variants and "lnog" not in variants
    assert "refund" in one_edit("refnud")
    assert "gnol" not in variants  # two edits away


def test_the_corrected_text_replaces_whole_words_as_written() -> None:
    typos = [Correction("lnog", "long", 0.75, kind="edit"), Correction("refnud", "refund", 0.83, kind="edit")]
    written = {"lnog": "lnog", "refnud": "refnuds"}
    assert corrected_text("How lnog do Refnuds take? lnogx", typos, written) == "How long do refund take? lnogx"


@pytest.mark.django_db
def test_a_hurried_question_is_corrected_and_passes_the_gate(retrieval_world: RetrievalWorld) -> None:
    result = search(scope=_public(retrieval_world), query="Are rfeunds issued within 14 days?", ts_config="english",
                    k=5)
    assert [(c.original, c.corrected, c.kind) for c in result.corrections] == [("rfeund", "refund", "edit")]
    assert result.corrected_query == "Are refund issued within 14 days?"
    assert result.candidates[0].slug == "billing/refunds"
    decision = confidence_gate(result.candidates, result.query_coverage, unknown_names=result.unknown_names)
    assert decision.passed, decision.reason


@pytest.mark.django_db
def test_a_typo_of_a_word_the_pages_lack_is_no_name(retrieval_world: RetrievalWorld) -> None:
    """These pages never say `long`: `lnog` stays uncorrected, but as a typo (one edit from a
    word the dictionary knows), not as a name the pages never mention (0077's rule)."""
    result = search(scope=_public(retrieval_world), query="how lnog do refnuds take", ts_config="english", k=5)
    assert [(c.original, c.corrected) for c in result.corrections] == [("refnud", "refund")]
    assert result.unknown_names == ()


@pytest.mark.django_db
def test_a_word_the_dictionary_knows_is_not_moved_by_an_edit(retrieval_world: RetrievalWorld) -> None:
    """`widow` is one edit from the pages' `window` and too short for trigrams to call alike;
    it is a word, only absent from these pages. Its control, `windwo`, is a typo of it."""
    result = search(scope=_public(retrieval_world), query="Is there a widow discount?", ts_config="english", k=5)
    assert "widow" not in {c.original for c in result.corrections}
    control = search(scope=_public(retrieval_world), query="Is there a windwo discount?", ts_config="english", k=5)
    assert ("windwo", "window") in {(c.original, c.corrected) for c in control.corrections}


@pytest.mark.django_db
def test_another_tenants_and_a_hidden_audiences_words_offer_no_edit(retrieval_world: RetrievalWorld) -> None:
    """`mramoset` is one swap from globex's `marmoset`, `qoukkaline` from acme's internal
    `quokkaline` (both too far for trigrams): neither is visible to acme's public reader, so
    neither is offered; each is offered where it is visible."""
    for question in ("mramoset scheduler", "qoukkaline pager"):
        result = search(scope=_public(retrieval_world), query=question, ts_config="english", k=5)
        assert not result.corrections, (question, result.corrections)
    globex = TenantScope(tenant_id=retrieval_world.globex.tenant.id, audience_ids=(retrieval_world.globex.public_id,))
    control = search(scope=globex, query="mramoset scheduler", ts_config="english", k=5)
    assert [(c.corrected, c.kind) for c in control.corrections] == [("marmoset", "edit")]
    staff = TenantScope(tenant_id=retrieval_world.acme.tenant.id,
                        audience_ids=(retrieval_world.acme.public_id, retrieval_world.acme.internal_id))
    inside = search(scope=staff, query="qoukkaline pager", ts_config="english", k=5)
    assert [c.kind for c in inside.corrections] == ["edit"]
