"""Contextual retrieval: one model call per document writes a short situating blurb per chunk.

Plugged into ingest by dotted path (settings.CORPUS_CONTEXTUALIZER =
"answering.pipeline.contextualize.contextualize"), because corpus never imports answering. The blurb is
embedded together with the chunk, while the stored text stays verbatim, so citations do not
change; blurbs are stored on the chunk for inspection. Off by default: it needs a provider.
The call is billed to the ingesting tenant as stage "contextualize", like every provider call.
"""

from __future__ import annotations

from typing import Any

from answering.pipeline.llm import escape_attribute, escape_text
from answering.providers import Message, reply_json
from answering.providers.chain import ProviderChain, SpendCapReached, UnmeteredCall
from answering.providers.spend import TenantMeter
from tenants.models import Tenant

PROMPT = """Here is a document titled "{title}":
<document>
{document}
</document>
For each numbered chunk below, write one short sentence that situates it within the whole
document, to improve search retrieval of the chunk. Reply with a JSON object
{{"blurbs": ["<sentence for chunk 1>", "<sentence for chunk 2>", ...]}} and nothing else.
{chunks}"""
_MAX_DOCUMENT_CHARS = 24_000


def contextualize(*, document: Any, chunks: list[str], tenant: Tenant | None = None,
                  chain: ProviderChain | None = None) -> list[str]:
    """Blurbs for one document's chunks, billed to `tenant` (the one whose ingest this is).

    Past the tenant's daily spend cap this raises SpendCapReached, which stops the ingest
    before anything is written: chunks stored without their blurbs would never be redone,
    because the index key already names this contextualizer."""
    chain = chain or ProviderChain.from_settings()
    if not chain:
        return ["" for _ in chunks]
    if chain.meter is None:
        if tenant is None:
            raise UnmeteredCall("contextualize() needs the tenant whose ingest pays for the blurbs")
        chain = chain.metered(TenantMeter(tenant=tenant))
    text = "\n\n".join(section.text for section in document.sections)[:_MAX_DOCUMENT_CHARS]
    # Escaped like the generator's context (answering.pipeline.llm): a chunk cannot close its element.
    numbered = "\n".join(f'<chunk number="{n}">{escape_text(c[:1500])}</chunk>' for n, c in enumerate(chunks, start=1))
    prompt = PROMPT.format(title=escape_attribute(document.title), document=escape_text(text), chunks=numbered)
    try:
        completion = chain.complete(
            [Message("user", prompt)],
            temperature=0.0, max_tokens=min(4000, 60 * len(chunks) + 100), json_output=True, stage="contextualize")
    except SpendCapReached as exc:
        raise SpendCapReached(f"contextual blurbs for {document.title!r} stopped: {exc}") from None
    try:
        blurbs = reply_json(completion.text).get("blurbs", [])
    except (ValueError, AttributeError):
        blurbs = []
    # A malformed reply costs the blurbs, never the ingest: chunks are embedded as they are.
    cleaned = [str(b).strip()[:300] if isinstance(b, str) else "" for b in blurbs][: len(chunks)]
    return cleaned + [""] * (len(chunks) - len(cleaned))
