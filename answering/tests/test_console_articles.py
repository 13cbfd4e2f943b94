"""Knowledge-base articles are written, not copied (issue 48, item 1; docs/decisions/0104).

Resolving with "add to the knowledge base" no longer files the agent's personal reply: it
starts a draft article (question, answer, audience; internal by default) prefilled from the
thread with the greeting, the sign-off and the asker's name taken out. A member holding the
draft's audience edits and publishes it; a narrower one gets 403, another tenant's member 404.
The published article is a ticket document, listed, archived and deleted like any other.

Forced fails seen red: publishing the reply as it stands (the pre-issue path), the cleaner
left without the name removal, and article_may_edit returning True for everyone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from answering.console import articles, escalations
from answering.models import Escalation
from answering.pipeline.flow import answer
from answering.tests.console_data import escalation_make, staff_client
from corpus.ingest.lifecycle import document_archive, document_delete
from corpus.models import Document, IngestJob
from corpus.sources.jobs import ingest_job_run
from tenants.rls import rls_transaction, tenant_context

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("uploads_in_tmp")]
URL = "/admin/answering/escalation/"
QUESTION = "Is there an official WooCommerce plugin for PayLane? I'm Ann Lee, ann.lee@example.com"
REPLY = ("Hi Ann, PayLane has no official WooCommerce plugin yet. Until it ships, use the PayLane REST API "
         "with the WooCommerce payment gateway hooks, as described in the integration guide.\n\n"
         "Best,\nMarek")


def _escalation(acme: Any, question: str = QUESTION, contact: str = "ann.lee@example.com") -> Escalation:
    escalation = escalation_make(acme.tenant, question)
    with tenant_context(acme.tenant.id):
        Escalation.objects.filter(pk=escalation.pk).update(contact_email=contact)
        return Escalation.objects.select_related("tenant").get(pk=escalation.pk)


def _row(escalation: Escalation) -> Escalation:
    with tenant_context(escalation.tenant_id):
        return Escalation.objects.select_related("tenant").get(pk=escalation.pk)


def _filed(job: IngestJob) -> dict[str, Any]:
    [entry] = json.loads(next(Path(settings.MEDIA_ROOT, job.upload_dir).rglob("*.json")).read_text())
    assert isinstance(entry, dict)
    return entry


@pytest.mark.parametrize("text, kept, gone", [
    ("Hi Ann, PayLane has no plugin yet.\n\nBest,\nMarek", "PayLane has no plugin yet.",
     ["Ann", "Hi", "Best", "Marek"]),
    ("Hello Ann!\nRefunds take 5 days.\nThanks, Marek", "Refunds take 5 days.", ["Ann", "Hello", "Thanks", "Marek"]),
    ("Dear Mr Smith,\n\nRefunds take 5 days, Mr Smith.\n\nKind regards\nSupport", "Refunds take 5 days.",
     ["Smith", "Dear", "regards"]),
    ("Dobrý den, paní Nováková,\nplatbu vrátíme do 5 dnů.\n\nS pozdravem\nMarek", "Platbu vrátíme do 5 dnů.",
     ["Nováková", "Dobrý den", "pozdravem", "Marek"]),
    ("Ahoj Jano,\nfaktura je v příloze, Jano.\nDíky, Petr", "Faktura je v příloze.",
     ["Jan", "Ahoj", "Díky", "Petr"]),
    ("Hello there, the API is at /v1.\nThanks for your patience.", "The API is at /v1.\nThanks for your patience.",
     ["Hello", "there"]),
])
def test_the_draft_loses_the_greeting_the_sign_off_and_the_name(text: str, kept: str, gone: list[str]) -> None:
    cleaned = articles.article_text_clean(text=text)
    assert cleaned == kept
    for word in gone:
        assert word not in cleaned, word


def test_a_kb_article_never_contains_the_replys_greeting_or_the_askers_name(acme: Any) -> None:
    """The issue's case, end to end in the console: the reply reaches the asker as written; the
    article the owner publishes from the prefilled draft greets and names nobody."""
    escalation = _escalation(acme)
    owner = staff_client(acme.owner)
    response = owner.post(f"{URL}{escalation.pk}/reply/", {"body": REPLY, "resolve": "on", "to_document": "on"})
    assert response.status_code == 302 and response["Location"] == f"{URL}{escalation.pk}/article/"
    assert not IngestJob.objects.filter(tenant=acme.tenant).exists()  # a draft, nothing published yet

    # The personal reply goes to the asker only, word for word.
    follow_up = Client().get(f"/t/acme/f/{escalation.public_id}/").content.decode()
    assert "Hi Ann, PayLane has no official WooCommerce plugin yet." in follow_up

    page = owner.get(f"{URL}{escalation.pk}/article/")
    assert page.status_code == 200
    form = page.context["form"]
    draft = {"question": form.initial["question"], "answer": form.initial["answer"],
             "audience": form.initial["audience"]}
    assert draft["audience"] == "internal"  # internal until someone widens it
    assert draft["answer"].startswith("PayLane has no official WooCommerce plugin yet.")
    assert draft["question"].startswith("Is there an official WooCommerce plugin for PayLane?")
    for personal in ("Ann", "Lee", "ann.lee@example.com", "Hi ", "Best", "Marek"):
        assert personal not in draft["answer"] and personal not in draft["question"], personal

    # Putting the greeting back is refused, with the reason on the page.
    greeted = owner.post(f"{URL}{escalation.pk}/article/", {**draft, "answer": "Hi Ann, " + draft["answer"],
                                                            "audience": "public", "action": "publish"})
    assert greeted.status_code == 200 and "greeting" in greeted.content.decode()
    assert not IngestJob.objects.filter(tenant=acme.tenant).exists()

    published = owner.post(f"{URL}{escalation.pk}/article/", {**draft, "audience": "public", "action": "publish"})
    assert published.status_code == 302
    job = IngestJob.objects.get(tenant=acme.tenant)
    entry = _filed(job)
    filed = json.dumps(entry, ensure_ascii=False)
    for personal in ("Ann", "Lee", "ann.lee", "Hi ", "Best", "Marek"):
        assert personal not in filed, personal
    assert (job.audience, job.source_type, job.origin) == ("public", "ticket", "escalation")
    assert ingest_job_run(job_id=job.pk, tenant_id=job.tenant_id)["added"] == 1
    again = answer(tenant=acme.tenant, audiences=["public"], question=QUESTION.split("?")[0] + "?",
                   use_default_chain=False)
    assert "Ann" not in again.text and "Hi " not in again.text


def test_the_draft_is_internal_and_unpublished_until_a_member_holding_it_publishes(acme: Any) -> None:
    escalation = _escalation(acme)
    # The agent holds public and customer: the internal draft waits for a member holding internal.
    response = staff_client(acme.agent).post(f"{URL}{escalation.pk}/reply/", {"body": REPLY, "resolve": "on",
                                                                             "to_document": "on"}, follow=True)
    assert response.redirect_chain[-1][0] == f"{URL}{escalation.pk}/change/"
    assert "a member holding it edits and publishes it" in response.content.decode()
    drafted = _row(escalation)
    assert (drafted.status, drafted.article_audience, drafted.knowledge_job_id) == ("resolved", "internal", None)
    assert not IngestJob.objects.filter(tenant=acme.tenant).exists()
    listing = staff_client(acme.owner).get(URL).content.decode()
    assert "draft article (internal), not published" in listing


def test_a_narrower_agent_cannot_read_or_publish_the_draft(acme: Any) -> None:
    escalation = _escalation(acme)
    resolved = escalations.escalation_reply(escalation=escalation, user=acme.owner, body=REPLY, resolve=True)
    draft = articles.article_draft_start(escalation=resolved, user=acme.owner)
    agent = staff_client(acme.agent)
    assert agent.get(f"{URL}{escalation.pk}/article/").status_code == 403
    body = {"question": draft.article_question, "answer": draft.article_answer}
    for audience in ("internal", "public"):  # neither the draft's audience nor a narrower one the agent picks
        response = agent.post(f"{URL}{escalation.pk}/article/", {**body, "audience": audience, "action": "publish"})
        assert response.status_code == 403, audience
    assert not IngestJob.objects.filter(tenant=acme.tenant).exists()
    with pytest.raises(articles.ArticleRefused):
        articles.article_publish(escalation=draft, user=acme.agent, question="q?", answer="a.", audience="public")
    # the agent sees the draft exists, and that someone else publishes it
    page = agent.get(f"{URL}{escalation.pk}/change/").content.decode()
    assert "A member holding internal edits and publishes it." in page


def test_another_tenants_article_is_a_404(acme: Any, globex: Any) -> None:
    theirs = escalation_make(globex.tenant, "Does globex ship hazardous reagents overnight?")
    resolved = escalations.escalation_reply(escalation=theirs, user=globex.owner, body="Hi Bob, no.", resolve=True)
    articles.article_draft_start(escalation=resolved, user=globex.owner)
    owner = staff_client(acme.owner)
    assert owner.get(f"{URL}{theirs.pk}/article/").status_code == 404
    response = owner.post(f"{URL}{theirs.pk}/article/", {"question": "q?", "answer": "a.", "audience": "public",
                                                         "action": "publish"})
    assert response.status_code == 404
    assert not IngestJob.objects.filter(tenant=globex.tenant).exists()


def test_a_published_article_is_a_document_listed_archived_and_deleted(acme: Any) -> None:
    escalation = _escalation(acme, contact="")
    resolved = escalations.escalation_reply(escalation=escalation, user=acme.owner, body=REPLY, resolve=True)
    draft = articles.article_draft_start(escalation=resolved, user=acme.owner)
    job = articles.article_publish(escalation=draft, user=acme.owner, question=draft.article_question,
                                   answer=draft.article_answer, audience="customer")
    ingest_job_run(job_id=job.pk, tenant_id=job.tenant_id)
    with rls_transaction(tenant_id=acme.tenant.id, all_audiences=True):
        document = Document.objects.get(tenant=acme.tenant, source_type="ticket")
    assert document.slug == f"ESC-{escalation.pk}" and document.title.startswith("Is there an official")
    owner = staff_client(acme.owner)
    assert f"ESC-{escalation.pk}" in owner.get("/admin/corpus/document/").content.decode()
    assert _row(escalation).knowledge_job_id == job.pk
    assert document_archive(tenant=acme.tenant, document_ids=[document.pk], audience_ids=None).changed == [document.pk]
    assert document_delete(tenant=acme.tenant, document_ids=[document.pk], audience_ids=None).changed == [document.pk]


def test_the_article_page_without_a_draft_sends_back_to_the_escalation(acme: Any) -> None:
    escalation = _escalation(acme)
    owner = staff_client(acme.owner)
    assert owner.get(f"{URL}{escalation.pk}/article/")["Location"] == f"{URL}{escalation.pk}/change/"  # open
    escalations.escalation_resolve(escalation=escalation, user=acme.owner, note="Hi Ann, done.")
    assert owner.get(f"{URL}{escalation.pk}/article/")["Location"] == f"{URL}{escalation.pk}/change/"  # no draft
    started = owner.post(f"{URL}{escalation.pk}/article/", {"action": "start"})
    assert started.status_code == 200 and started.context["form"].initial["answer"] == "Done."
