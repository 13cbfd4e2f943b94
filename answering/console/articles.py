"""Knowledge-base articles written from a resolved escalation, apart from the personal reply
(issue 48, item 1; docs/decisions/0104).

The reply goes to the asker only. Ticking "add to the knowledge base" on resolve starts a draft
article on the escalation: a question and an answer prefilled from the thread with the
salutation, the sign-off and the asker's name and address taken out, filed for the `internal`
audience until someone changes it. A member holding the draft's audience edits it and publishes
it; publishing files it through the upload path as a ticket document (listed, archived and
deleted like any other) and refuses text that still greets or names the asker.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from answering.console.escalations import AUDIENCE_ORDER, MAX_NOTE_CHARS, EscalationConflict, ticket_slug
from answering.models import Escalation, EscalationMessage
from corpus.models import IngestJob
from corpus.sources.jobs import ingest_job_create
from tenants.models import Audience
from tenants.rls import tenant_context
from tenants.staff import member_audience_slugs

# A draft is filed for the narrowest audience until a member widens it on purpose.
DRAFT_AUDIENCE = AUDIENCE_ORDER[-1]
MAX_QUESTION_CHARS = 2_000

_SALUTATION = re.compile(
    r"^\s*(?:hi|hello|hey|hiya|dear|good\s+(?:morning|afternoon|evening|day)|greetings|"
    r"dobr[ýy]\s+(?:den|ve[čc]er|r[áa]no)|ahoj|[čc]au|zdrav[íi]m|v[áa]žen[áaýy]|mil[áaýy]|"
    r"hallo|guten\s+tag)\b",
    re.IGNORECASE)
_TITLES = {"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "madam", "pan", "pane", "paní", "pani", "slečno",
           "ing", "mgr", "herr", "frau"}
# Words after a salutation that address nobody in particular: never taken for the asker's name.
_NOT_NAMES = {"there", "all", "everyone", "team", "again", "friend", "folks", "both", "you", "support", "vám",
              "vás", "všichni", "přátelé"}
_SIGN_OFF = re.compile(
    r"^\s*(?:best(?:\s+(?:regards|wishes))?|kind\s+regards|warm\s+regards|regards|many\s+thanks|thanks(?:\s+again)?|"
    r"thank\s+you|cheers|sincerely|yours(?:\s+sincerely|\s+truly)?|all\s+the\s+best|"
    r"s\s+pozdravem|se\s+srde[čc]n[ýy]m\s+pozdravem|s\s+p[řr][áa]n[íi]m\s+hezk[ée]ho\s+dne|"
    r"d[ěe]kuji|d[ěe]kujeme|"
    r"d[íi]ky|zdrav[íi]m|hezk[ýy]\s+den|mit\s+freundlichen\s+gr[üu][ßs]en|viele\s+gr[üu][ßs]e)"
    r"\s*(?:[,!.\-–—:]\s*.{0,60})?$", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# A sign-off ends a message: it is cut only among its last lines.
_SIGN_OFF_TAIL_LINES = 4


class ArticleRefused(PermissionError):
    """The member does not hold the article's audience: the view answers 403."""


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W\d_][^\W\d_'’.-]*", text)


def _greeting_names(line: str) -> tuple[list[str], int] | None:
    """The names a salutation at the start of `line` addresses, and where the salutation ends;
    None when the line does not open with one."""
    opened = _SALUTATION.match(line)
    if opened is None:
        return None
    rest_at = opened.end()
    names: list[str] = []
    # "Dobrý den, paní Nováková," — a comma may sit between the greeting and the name.
    tail = re.match(r"[ \t]*,?[ \t]*((?:[^\W\d_][\w'’.-]*[ \t]+){0,3}?[^\W\d_][\w'’-]*)[ \t]*([,!:.;]|$|\n)",
                    line[rest_at:])
    if tail is not None:
        words = tail.group(1).split()
        # A name is capitalised (a title may precede it); "Hello there," and "Dobrý den, děkujeme" name nobody.
        candidates = [w.rstrip(".") for w in words if w.rstrip(".").lower() not in _TITLES]
        if candidates and all(w.lower() in _NOT_NAMES for w in candidates) and tail.group(2).strip():
            rest_at += tail.end(1)  # "Hello there," / "Hi all!": nobody named, the words go with the greeting
        elif candidates and all(w[:1].isupper() and w.lower() not in _NOT_NAMES for w in candidates):
            names = candidates
            rest_at += tail.end(1)
    punct = re.match(r"[ \t]*[,!:.;]?[ \t]*\n?", line[rest_at:])
    return names, rest_at + (punct.end() if punct else 0)


def asker_names(*, escalation: Escalation, replies: Iterable[str] = ()) -> set[str]:
    """What names the asker: their address and its local part's words, and whoever the agents'
    replies greeted ("Hi Ann," → Ann)."""
    names: set[str] = set()
    if escalation.contact_email:
        names.add(escalation.contact_email)
        local = escalation.contact_email.split("@", 1)[0]
        names |= {part.capitalize() for part in re.split(r"[._+\-\d]+", local) if len(part) >= 3}
    for reply in replies:
        for line in reply.strip().splitlines()[:1]:
            found = _greeting_names(line)
            if found is not None:
                names |= {n for n in found[0] if len(n) >= 2}
    return names


def _name_pattern(name: str) -> str:
    """A name as it is written: capitalised (so "Will" never takes "will"), any case for an address."""
    if "@" in name:
        return "(?i:" + re.escape(name) + ")"
    # Czech and other inflecting languages change the ending (Jana, Jano, Janě; Nováková, Novákové).
    stem = name[:-1] if len(name) >= 4 else name
    return re.escape(stem[:1].upper()) + "(?i:" + re.escape(stem[1:]) + ")" + (r"[^\W\d_]{0,3}" if stem != name else "")


def _drop_names(text: str, names: Collection[str]) -> str:
    for name in sorted(names, key=len, reverse=True):
        pattern = _name_pattern(name)
        # With the comma or title that attaches it: "Thanks for waiting, Ann." → "Thanks for waiting."
        titles = "|".join(sorted(_TITLES))
        text = re.sub(rf"(?:[ \t]*,[ \t]*|[ \t]+)?(?:(?i:{titles})\.?[ \t]+)?(?<!\w){pattern}(?!\w)", "", text)
    return text


def _drop_sign_off(lines: list[str]) -> list[str]:
    filled = [i for i, line in enumerate(lines) if line.strip()]
    for i in filled[-_SIGN_OFF_TAIL_LINES:]:
        if _SIGN_OFF.match(lines[i]):
            return lines[:i]
    return lines


def article_text_clean(*, text: str, names: Collection[str] = ()) -> str:
    """The reusable part of a personal message: no salutation, no sign-off, no name or address."""
    text = (text or "").replace("\r\n", "\n").strip()
    found = _greeting_names(text)
    if found is not None:
        names = {*names, *found[0]}
        text = text[found[1]:].lstrip()
    lines = _drop_sign_off(text.splitlines())
    text = "\n".join(lines)
    text = _EMAIL.sub("", text)
    text = _drop_names(text, names)
    text = re.sub(r"[ \t]+([,.!?;:])", r"\1", text)
    text = re.sub(r"[ \t]{2,}", " ", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return text[:1].upper() + text[1:]


def personal_traces(*, text: str, names: Collection[str]) -> list[str]:
    """What in `text` still greets, signs off or names the asker (empty when none)."""
    found: list[str] = []
    first = (text or "").strip().splitlines()[:1]
    if first and _greeting_names(first[0]) is not None:
        found.append(f"a greeting ({first[0][:40]!r})")
    lines = (text or "").strip().splitlines()
    if _drop_sign_off(lines) != lines:
        found.append("a sign-off")
    if _EMAIL.search(text or ""):
        found.append("an email address")
    for name in sorted(names):
        if re.search(rf"(?<!\w){_name_pattern(name)}(?!\w)", text or ""):
            found.append(f"the asker's name or address ({name!r})")
    return found


def _held(user: Any, escalation: Escalation) -> list[str]:
    return member_audience_slugs(user=user, tenant_id=escalation.tenant_id)


def _draft_audience(escalation: Escalation) -> str:
    """`internal` when the tenant has it, else its narrowest audience."""
    slugs = set(Audience.objects.filter(tenant_id=escalation.tenant_id).values_list("slug", flat=True))
    for slug in reversed(AUDIENCE_ORDER):
        if slug in slugs:
            return slug
    return min(slugs) if slugs else DRAFT_AUDIENCE


def _agent_messages(escalation: Escalation) -> list[str]:
    with tenant_context(escalation.tenant_id):
        # Index: answering_escalation_message_thread_idx (tenant_id, escalation_id, created_at).
        return list(EscalationMessage.objects.filter(
            tenant_id=escalation.tenant_id, escalation_id=escalation.pk,
            author_kind=EscalationMessage.Kind.AGENT).order_by("created_at", "id").values_list("body", flat=True))


def _reload(escalation: Escalation) -> Escalation:
    with tenant_context(escalation.tenant_id):
        return Escalation.objects.select_related("tenant", "knowledge_job").get(
            tenant_id=escalation.tenant_id, pk=escalation.pk)


def article_draft_start(*, escalation: Escalation, user: Any) -> Escalation:
    """Start the article of a resolved escalation, prefilled from the question and the agents'
    replies (or the resolution note) with greetings, sign-offs and the asker's name taken out;
    internal until a member holding the audience changes it. An existing draft is kept."""
    if escalation.status != Escalation.Status.RESOLVED:
        raise EscalationConflict(f"escalation #{escalation.pk} must be resolved first")
    if escalation.article_audience:
        return escalation
    replies = _agent_messages(escalation)
    names = asker_names(escalation=escalation, replies=[*replies, escalation.resolution_note])
    # Each reply was a message of its own, with its own greeting and sign-off.
    answer = "\n\n".join(filter(None, (article_text_clean(text=part, names=names)
                                       for part in replies or [escalation.resolution_note])))
    question = article_text_clean(text=escalation.question, names=names)[:MAX_QUESTION_CHARS]
    with tenant_context(escalation.tenant_id):
        Escalation.objects.filter(pk=escalation.pk, tenant_id=escalation.tenant_id, article_audience="").update(
            article_question=question, article_answer=answer[:MAX_NOTE_CHARS],
            article_audience=_draft_audience(escalation))
    return _reload(escalation)


def article_may_edit(*, escalation: Escalation, user: Any) -> bool:
    """A draft is read and edited only by a member holding its audience (it may hold what only they read)."""
    return bool(escalation.article_audience) and escalation.article_audience in _held(user, escalation)


def _checked(escalation: Escalation, user: Any, question: str, answer: str, audience: str) -> tuple[str, str]:
    if not article_may_edit(escalation=escalation, user=user) or audience not in _held(user, escalation):
        raise ArticleRefused("only a member holding the article's audience may edit or publish it")
    question, answer = (question or "").strip(), (answer or "").strip()
    if not question or not answer:
        raise ValueError("an article needs a question and an answer")
    if len(question) > MAX_QUESTION_CHARS or len(answer) > MAX_NOTE_CHARS:
        raise ValueError(f"the question may be {MAX_QUESTION_CHARS} characters, the answer {MAX_NOTE_CHARS}")
    return question, answer


def article_draft_save(*, escalation: Escalation, user: Any, question: str, answer: str,
                       audience: str) -> Escalation:
    """Keep an edited draft unpublished (a member holding the new audience too)."""
    question, answer = _checked(escalation, user, question, answer, audience)
    with tenant_context(escalation.tenant_id):
        Escalation.objects.filter(pk=escalation.pk, tenant_id=escalation.tenant_id).update(
            article_question=question, article_answer=answer, article_audience=audience)
    return _reload(escalation)


def article_publish(*, escalation: Escalation, user: Any, question: str, answer: str, audience: str) -> IngestJob:
    """File the article as the escalation's ticket document through the upload path (the same
    ingest job an upload makes; republishing replaces it, its slug is the escalation's).
    Refused while it greets, signs off or names the asker: the next reader is someone else."""
    question, answer = _checked(escalation, user, question, answer, audience)
    if escalation.status != Escalation.Status.RESOLVED:
        raise EscalationConflict(f"escalation #{escalation.pk} must be resolved first")
    replies = _agent_messages(escalation)
    names = asker_names(escalation=escalation, replies=[*replies, escalation.resolution_note])
    left = personal_traces(text=answer, names=names) + personal_traces(text=question, names=names)
    if left:
        raise ValueError("the article still has " + "; ".join(left) + ": write it for any reader")
    entry = {"id": ticket_slug(escalation), "subject": question[:200], "question": question, "resolution": answer,
             "resolved_at": (escalation.resolved_at or timezone.now()).date().isoformat(), "audience": audience}
    payload = json.dumps([entry], ensure_ascii=False, indent=2).encode()
    upload = SimpleUploadedFile(f"ticket-{ticket_slug(escalation)}.json", payload, content_type="application/json")
    job = ingest_job_create(tenant=escalation.tenant, files=[upload], audience=audience, source_type="ticket",
                            created_by_id=user.pk, origin="escalation",
                            # The primary key, never public_id: that is the asker's way back in.
                            origin_ref=f"escalation #{escalation.pk}", writer_audiences=_held(user, escalation))
    with tenant_context(escalation.tenant_id):
        Escalation.objects.filter(pk=escalation.pk, tenant_id=escalation.tenant_id).update(
            knowledge_job=job, article_question=question, article_answer=answer, article_audience=audience)
    return job
