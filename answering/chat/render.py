"""HTML for the chat's streamed fragments: sources, answer text with linked markers and code
blocks, the end of a turn."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from django.template.loader import render_to_string
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from answering.chat.tokens import feedback_ticket_issue
from answering.pipeline.citations import MARKER

PAGE = "chat/page.html"

# A Markdown fenced block: ``` or ~~~ at the start of a line, an optional language word, the
# body, the same fence closing it at the start of a line (or the end of the answer: a model cut
# off mid-listing still shows code, not a stray fence). Non-greedy: two blocks stay two. What
# follows the closing fence on its line stays prose: the offline answerer cites a quoted
# listing there ("``` [1]", docs/decisions/0084).
FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+#.-]*)[^\n]*\n(?P<body>.*?)"
                   r"(?:^[ \t]*(?P=fence)(?![`~])[ \t]*|\Z)", re.MULTILINE | re.DOTALL)
# Inline code, `like this`, within one line.
INLINE_CODE = re.compile(r"`([^`\n]+)`")


def source_dom_id(turn_id: str, number: int) -> str:
    return f"src-{turn_id}-{number}"


def answer_html(*, text: str, sources: Sequence[dict[str, Any]], turn_id: str) -> SafeString:
    """Escape the answer; a fenced code block becomes <pre><code> (its text escaped, its `[n]`
    left alone: in code they are indexes, not citations); in the prose between, each `[n]`
    that names a source becomes a link to it."""
    parts: list[str] = []
    last = 0
    for block in FENCE.finditer(text):
        prose = text[last:block.start()]
        # One line break before the block is the block's own: the <pre> starts a line anyway.
        parts.append(_prose_html(prose[:-1] if prose.endswith("\n") else prose, sources=sources, turn_id=turn_id))
        language = block.group("lang")
        parts.append(format_html('<pre class="code"><code{}>{}</code></pre>',
                                 format_html(' class="language-{}"', language) if language else "",
                                 block.group("body").rstrip("\n")))
        last = block.end()
        if text[last:last + 1] == "\n":
            last += 1  # the line break after the closing fence: the <pre> already ends the line
    parts.append(_prose_html(text[last:], sources=sources, turn_id=turn_id))
    return mark_safe("".join(parts))


def _prose_html(text: str, *, sources: Sequence[dict[str, Any]], turn_id: str) -> str:
    """Inline code spans as <code> (escaped, no links inside), markers linked between them."""
    parts: list[str] = []
    last = 0
    for span in INLINE_CODE.finditer(text):
        parts.append(_linked_html(text[last:span.start()], sources=sources, turn_id=turn_id))
        parts.append(format_html("<code>{}</code>", span.group(1)))
        last = span.end()
    parts.append(_linked_html(text[last:], sources=sources, turn_id=turn_id))
    return "".join(parts)


def _linked_html(text: str, *, sources: Sequence[dict[str, Any]], turn_id: str) -> str:
    by_number = {int(s["number"]): s for s in sources}
    parts: list[str] = []
    last = 0
    for match in MARKER.finditer(text):
        parts.append(escape(text[last:match.start()]))
        source = by_number.get(int(match.group(1)))
        if source is None:
            parts.append(escape(match.group(0)))
        else:
            dom_id = source_dom_id(turn_id, source["number"])
            parts.append(format_html(
                '<a class="marker" href="#{}" data-source="{}" aria-label="source {}: {}">[{}]</a>',
                dom_id, dom_id, source["number"], source["title"], source["number"]))
        last = match.end()
    parts.append(escape(text[last:]))
    return "".join(parts)


def sources_html(*, sources: Sequence[dict[str, Any]], turn_id: str, final: bool, action: str = "") -> str:
    items = [{**s, "dom_id": source_dom_id(turn_id, s["number"])} for s in sources]
    return render_to_string(f"{PAGE}#sources", {"sources": items, "final": final, "turn_id": turn_id,
                                                "action": action})


def done_html(*, tenant_slug: str, tenant_id: int, turn_id: str, result: Any, contact: str = "") -> str:
    """The end of a turn: the final answer with linked markers and the cited sources (both
    out-of-band, replacing the streamed text and the provisional sources), feedback, and on
    an abstention the follow-up link and, unless a member's email is already on it, the
    optional email field."""
    sources = list(result.sources)
    return render_to_string(f"{PAGE}#done", {
        "tenant_slug": tenant_slug, "turn_id": turn_id, "result": result, "contact": contact,
        "answer": answer_html(text=result.text, sources=sources, turn_id=turn_id),
        "sources_fragment": mark_safe(sources_html(sources=sources, turn_id=turn_id, final=True,
                                                       action=result.action)),
        "source_count": len(sources),
        "ticket": feedback_ticket_issue(tenant_id=tenant_id, trace_id=result.trace_id) if result.trace_id else "",
    })


def failed_html(*, message: str) -> str:
    return render_to_string(f"{PAGE}#failed", {"message": message})
