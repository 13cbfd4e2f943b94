"""Rows the console tests read: traces and escalations written through answering.pipeline.records."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import Permission
from django.test import Client

from answering.pipeline import records
from answering.models import Escalation, Trace
from tenants.models import Tenant
from tenants.rls import tenant_context

CONSOLE_PERMISSIONS = ("view_escalation", "change_escalation", "view_trace", "view_document", "view_ingestjob",
                       "add_ingestjob", "view_cacheentry", "view_evalrun")


def staff_client(user: Any, *codenames: str) -> Client:
    user.is_staff = True
    user.save()
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames or CONSOLE_PERMISSIONS))
    client = Client()
    client.force_login(user)
    return client


def candidate(slug: str, *, rerank: float | None = 0.8, fused: float = 0.03) -> dict[str, Any]:
    return {"chunk_id": 1, "document_id": 1, "slug": slug, "source_type": "doc", "heading_path": f"{slug} › Intro",
            "ranks": {"vector": 1, "keyword": 2}, "fused_score": fused, "vector_similarity": 0.61,
            "keyword_coverage": 0.5, "evidence": "keyword+vector", "rerank_logit": 1.2,
            "rerank_probability": rerank, "score_kind": "rerank" if rerank is not None else "fusion"}


def escalation_make(tenant: Tenant, question: str, *, history: list[dict[str, str]] | None = None,
                    audiences: list[str] | None = None) -> Escalation:
    _, escalation = records.abstain(
        tenant=tenant, reason="weak_retrieval", detail="top rerank score 0.0100 < 0.05", question=question,
        history=history or [], candidates=[candidate("refunds", rerank=0.01)],
        trace_fields={"audiences": audiences or ["public"], "question": question,
                      "gate": {"passed": False, "score": 0.01, "score_kind": "rerank", "threshold": 0.05,
                               "reason": "top rerank score 0.0100 < 0.05"},
                      "retrieval": {"candidates": [candidate("refunds", rerank=0.01)], "dropped": []},
                      "stage_ms": {"rewrite": 0.1, "cache": 2.0, "retrieve": 40.0}},
    )
    return escalation


def trace_make(tenant: Tenant, *, action: str = "answered", at: dt.datetime | None = None, score: float | None = 0.8,
               score_kind: str = "rerank", passed: bool = True, cache_hit: bool = False, cost: str = "0",
               stage_ms: dict[str, float] | None = None, feedback: int | None = None,
               citations: list[dict[str, Any]] | None = None, weak_claims: list[str] | None = None,
               candidates: list[dict[str, Any]] | None = None, question: str = "How do refunds work?") -> Trace:
    gate = {} if cache_hit else {"passed": passed, "score": score, "score_kind": score_kind,
                                 "threshold": 0.05 if score_kind == "rerank" else 0.0,
                                 "reason": "confident enough" if passed else "weak"}
    fields: dict[str, Any] = {
        "action": action, "audiences": ["public"], "question": question, "cache_hit": cache_hit,
        "cost_usd": float(Decimal(cost)), "gate": gate,
        "retrieval": {} if cache_hit else {"candidates": candidates if candidates is not None else [candidate("a")],
                                           "dropped": []},
        "stage_ms": stage_ms or {}, "citations": citations or [],
        "details": {"weak_claims": weak_claims or []}, "feedback": feedback,
    }
    trace = records.trace_create(tenant=tenant, fields=fields)
    if at is not None:
        with tenant_context(tenant.id):
            Trace.objects.filter(pk=trace.pk).update(created_at=at)
        trace.created_at = at
    return trace
