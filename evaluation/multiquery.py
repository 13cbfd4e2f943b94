"""The multi-query arm: the model rephrases the question, each phrasing is searched, the
rankings are fused (retrieval.search.multi_query_search). Retrieval only: the live pipeline
has no multi-query path, so this arm reports retrieval metrics and skips answer metrics."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from answering.providers import Message, ProviderError, reply_json
from answering.providers.chain import AllProvidersFailed, ProviderChain
from answering.pipeline.config import Configuration, configuration
from answering.pipeline.limits import last_turns
from answering.pipeline.rewriting import rewrite_query
from answering.providers.spend import TenantMeter
from retrieval.search import multi_query_search
from tenants.models import Tenant
from tenants.readers import reader_scope

VARIANTS = 3
PROMPT = """Rewrite this customer question {n} different ways that a search engine over product
documentation would match: vary the wording, spell out abbreviations, use the documentation's
likely terms. Keep the meaning exactly. Reply with one JSON object and nothing else:
{{"queries": ["...", "..."]}}
Question: {question}"""


def llm_rephraser(chain: ProviderChain) -> Callable[[str], list[str]]:
    def rephrase(question: str) -> list[str]:
        try:
            completion = chain.complete([Message("user", PROMPT.format(n=VARIANTS, question=question))],
                                        temperature=0.0, max_tokens=300, json_output=True)
            data = reply_json(completion.text)
        except (AllProvidersFailed, ProviderError, ValueError):
            return []  # the original question is still searched: a failed rephrasing costs recall, not the case
        queries = data.get("queries") if isinstance(data, dict) else None
        return [str(q) for q in queries[:VARIANTS] if isinstance(q, str)] if isinstance(queries, list) else []

    return rephrase


def multi_query_retrieve(*, tenant: Tenant, audience: str, question: str, history: Sequence[dict[str, str]],
                         chain: ProviderChain, config: Configuration | None = None) -> list[dict[str, Any]]:
    config = config or configuration()
    chain = chain.metered(TenantMeter(tenant=tenant), stage="multi_query")  # the evaluated tenant pays (0037)
    rewrite = rewrite_query(question, last_turns(history, config.answer.history_turns), chain, language=tenant.language)
    result = multi_query_search(scope=reader_scope(tenant=tenant, audiences=[audience]), query=rewrite.query,
                                ts_config=tenant.text_search_config, rephrase=llm_rephraser(chain),
                                language=tenant.language, config=config.retrieval)
    return [c.as_trace() for c in result.candidates]
