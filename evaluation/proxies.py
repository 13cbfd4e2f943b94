"""Automatic proxies for what a reader sees in an answer (issue 47 item 1).

Page recall and fact coverage never read the answer; these do, cheaply, on every case of every
report. None replaces the reader's verdict (docs/reader-rubric.md); each flags one failure a
reader named:

- answer precision: the share of the answer's sentences whose cited source is an expected page;
- turn contamination: a follow-up's answer repeating a sentence of the previous answer;
- noise: raw markup, a dangling announcement, doctest prompts run together, a sentence cut mid-way.

A "sentence" of an answer is what one citation marker closes: both answerers put "[n]" after
each quoted or written sentence (a quoted listing sits before its marker), so the marker, not a
full stop, says where a claim ends and which source it came from. Pure functions, no database.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

MARKER = re.compile(r"\[(\d+)\]")
# One claim: text up to and including the run of markers that closes it.
_CLAIM = re.compile(r"(?P<text>.*?)(?P<markers>(?:\s*\[\d+\])+)", re.S)
# A line that belongs to a listing: indented, an interpreter prompt, a bullet, a numbered item, a fence.
_LISTING_LINE = re.compile(r"^(?:[ \t]+\S|>>>|\.\.\.(?:\s|$)|[-*•]\s|\d+[.)]\s|```)")
_FENCE = re.compile(r"```")
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_REST_ROLE = re.compile(r":[a-z][a-z0-9_.+-]*(?::[a-z][a-z0-9_.+-]*)?:`")
# A sentence closed at its colon (its marker follows) with the next sentence on the same line.
_COLON_THEN_SENTENCE = re.compile(r":\s*(?:\[\d+\]\s*)+(?=\S)")
_PROMPT_INSIDE_LINE = re.compile(r"\S[ \t]*>>>")
_CONTINUATION_INSIDE_LINE = re.compile(r"\S[ \t]+\.\.\.[ \t]")
# What may close a finished sentence, once closing quotes and brackets are set aside.
_TERMINAL = ".!?…:;"
_CLOSERS = "\"'”’»)]*`"
# A repeated sentence shorter than this says too little to call the answer a repeat ("Yes.").
MIN_REPEAT_WORDS = 4


@dataclass(frozen=True)
class Claim:
    """One sentence of an answer and the source numbers its markers cite (none: uncited tail)."""

    text: str
    numbers: tuple[int, ...]


def answer_claims(text: str) -> list[Claim]:
    """The answer cut at its citation markers; trailing text without a marker is one uncited claim."""
    claims: list[Claim] = []
    end = 0
    for match in _CLAIM.finditer(text):
        end = match.end()
        body = match["text"].strip()
        if body:
            claims.append(Claim(body, tuple(int(n) for n in MARKER.findall(match["markers"]))))
    tail = text[end:].strip()
    if tail:
        claims.append(Claim(tail, ()))
    return claims


def answer_precision(text: str, sources: Sequence[dict[str, Any]],
                     expected_pages: Collection[tuple[str, str]]) -> float | None:
    """Share of the answer's claims citing an expected page ((source_type, slug) pairs); None
    for an answer with no claim. A claim citing several sources counts when any is expected:
    the reader is helped by the one that is; an uncited claim never counts."""
    page_of = {int(s["number"]): (str(s["source_type"]), str(s["slug"])) for s in sources if "number" in s}
    claims = answer_claims(text)
    if not claims:
        return None
    precise = sum(1 for c in claims if any(page_of.get(n) in expected_pages for n in c.numbers))
    return precise / len(claims)


def normalised(sentence: str) -> str:
    """A sentence as compared for repeats: markers dropped, whitespace collapsed, case folded."""
    return " ".join(MARKER.sub(" ", sentence).split()).casefold().rstrip(" .")


def _sentences(text: str) -> list[str]:
    # Markers close claims; a claim quoting several sentences is split at full stops as well,
    # so an answer repeating one of them is caught too.
    pieces = [p for c in answer_claims(text) for p in re.split(r"(?<=[.!?])\s+", c.text)]
    return [n for n in map(normalised, pieces) if len(n.split()) >= MIN_REPEAT_WORDS]


def repeated_sentences(answer: str, previous: Iterable[str]) -> list[str]:
    """Sentences of `answer` that a previous answer of the conversation already said (normalised)."""
    said = {s for text in previous for s in _sentences(text)}
    return [s for s in dict.fromkeys(_sentences(answer)) if s in said]


def raw_markup(text: str) -> int:
    """Markup a reader should never see: ``` fences, HTML tags outside a quoted listing's lines,
    reST roles (:func:`…`). Tags inside a listing are the listing's content (an HTML example)."""
    count = len(_FENCE.findall(text)) + len(_REST_ROLE.findall(text))
    prose = [line for line in text.split("\n") if not _LISTING_LINE.match(line)]
    return count + sum(len(_HTML_TAG.findall(MARKER.sub("", line))) for line in prose)


def dangling_announcements(text: str) -> int:
    """Sentences that announce something ("…the following options:") with nothing after them:
    closed at the colon by their marker with prose following on the line, or ending a line that
    no listing line follows."""
    count = len(_COLON_THEN_SENTENCE.findall(text))
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if not MARKER.sub("", line).rstrip().endswith(":"):
            continue
        following = next((rest for rest in lines[index + 1:] if rest.strip()), "")
        if not _LISTING_LINE.match(following):
            count += 1
    return count


def doctest_run_together(text: str) -> int:
    """Interpreter prompts that lost their line breaks: a '>>>' after other text on its line, or
    a '...' continuation prompt inside a line that holds a '>>>'."""
    count = 0
    for line in text.split("\n"):
        count += len(_PROMPT_INSIDE_LINE.findall(line))
        if ">>>" in line:
            count += len(_CONTINUATION_INSIDE_LINE.findall(line))
    return count


def cut_sentences(text: str) -> int:
    """Claims that end mid-way: the claim's last line is prose (not a listing line) and ends
    without terminal punctuation ("Tuples [2]")."""
    count = 0
    for claim in answer_claims(text):
        last = claim.text.split("\n")[-1]
        if "\n" in claim.text or _LISTING_LINE.match(last):
            continue  # a quoted listing (lines of its own) ends where its code ends
        if last.rstrip().rstrip(_CLOSERS)[-1:] not in _TERMINAL:
            count += 1
    return count


NOISE_DETECTORS = {"markup": raw_markup, "dangling": dangling_announcements, "doctest": doctest_run_together,
                   "cut": cut_sentences}


def noise(text: str) -> dict[str, int]:
    """Each noise detector's count for one answer."""
    return {name: detector(text) for name, detector in NOISE_DETECTORS.items()}


def case_proxies(*, answer: str, sources: Sequence[dict[str, Any]], answerable: bool,
                 expected_pages: Collection[tuple[str, str]], previous_answers: Sequence[str],
                 follow_up: bool) -> dict[str, Any]:
    """The proxies of one answered case, as its report row carries them."""
    repeated = repeated_sentences(answer, previous_answers) if follow_up else []
    return {
        "answer_precision": answer_precision(answer, sources, expected_pages) if answerable else None,
        "turn_contamination": bool(repeated) if follow_up else None,
        "repeated_sentences": repeated,
        "noise": noise(answer),
    }


def proxy_metrics(rows: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """Per arm: mean answer precision, the share of follow-ups contaminated, the share of answers
    with any noise and the mean count of each kind (rows without proxies are not answers)."""
    answered = [r for r in rows if r.get("noise") is not None]
    precision = [r["answer_precision"] for r in answered if r.get("answer_precision") is not None]
    follow_ups = [r["turn_contamination"] for r in answered if r.get("turn_contamination") is not None]
    metrics: dict[str, float | None] = {
        "answer_precision": round(sum(precision) / len(precision), 4) if precision else None,
        "turn_contamination": round(sum(follow_ups) / len(follow_ups), 4) if follow_ups else None,
        "noise_rate": (round(sum(1 for r in answered if any(r["noise"].values())) / len(answered), 4)
                       if answered else None),
    }
    for name in NOISE_DETECTORS:
        metrics[f"noise_{name}"] = (round(sum(r["noise"][name] for r in answered) / len(answered), 4)
                                    if answered else None)
    return metrics
