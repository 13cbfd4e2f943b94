"""The offline answerer: quote the best-supported sentences of the retrieved chunks, cited.

It needs no model provider, so it is what `make run` and the test suite use out of the box.
It never paraphrases, so it cannot invent a fact; it declines when no sentence is similar
enough to the question. Retrieved text is data: a sentence that addresses the assistant
("ignore previous instructions…") is never quoted.

An answer is at most three sentences of one chunk (where two contested documents disagree, the
best sentence of each), each verbatim, without filler
("See Section 20.4.", "The following options are available:") or a sentence said twice. When
the best sentence belongs to a named entity (a parameter, function or setting: the last part
of its chunk's heading path, docs/decisions/0041), the answer opens with that name, its kind
and its default as the chunk states them: "`work_mem` (integer, default 4MB): Sets the base…"
(answering/pipeline/entities.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from answering.pipeline.amounts import asks_one_amount, figure_or_default, leans_to_figures, states_figure
from answering.pipeline.drafts import Draft
from answering.pipeline.entities import TERM, chunk_body, entity_lead, entity_name
from answering.pipeline.listings import enclosing_listing, inside_listing, is_code, is_fragment, listing_after
from corpus.encoders.embedding import get_encoder
from corpus.language.terms import exact_terms
from retrieval.config import RetrievalConfig
from retrieval.rerankers.late_interaction import MAXSIM_CENTER, maxsim
from retrieval.search import Candidate

# A sentence ends before a capital (Czech ones too: "Čekáte-li…"), a digit or a quote.
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(`ÁČĎÉĚÍŇÓŘŠŤÚŮÝŽ])|\n+")
# Abbreviations a capital or a figure often follows ("např. Visa", "čl. 5", "Tlapka s. r. o.
# Praha", "its own IP address (e.g. 192.168.0.1"), and the manual's "(see CREATE TABLE...
# CONSTRAINT... EXCLUDE)": no sentence ends at them. A sentence that does end in "atd." is joined
# to the next, a longer quote rather than a fragment.
_ABBREVIATION = re.compile(r"(?<!\w)(?:např|tj|atd|apod|resp|mj|tzv|č|čl|s\.\s?r\.\s?o|e\.g|i\.e|cf|vs|approx)\.$",
                           re.IGNORECASE)
_INSTRUCTION = re.compile(
    r"\b(ignore|disregard|forget)\b.{0,40}\b(instructions?|rules|prompt|above)\b|\byou are now\b|\bsystem prompt\b"
    r"|\b(assistant|chatbot|ai|bot)\b.{0,30}\b(must|should|will)\b.{0,20}\b(say|reply|respond|answer)\b",
    re.IGNORECASE,
)
_MIN_CHARS = 25
_CITATION = re.compile(r"\s*\[\d+\]")  # an earlier answer's markers, left out when its sentences are compared
_ENTITY_LEAD = re.compile(r"^`[^`]+`(?: \([^()]*\))?: ")  # entity_lead's "`work_mem` (integer): "
MAX_SENTENCES = 3  # a quote, not a page
# A sentence must be this similar to the question to be quoted (0.45 until docs/decisions/0053:
# the gate, not this floor, is what stops must-abstain questions).
MIN_SIMILARITY = 0.40
# A sentence's rank score loses this much per place its chunk stands below the first (0061).
RANK_PENALTY = 0.10
# The passage's other sentences may sit this far below the floor: the page's next sentence
# often finishes what the best one began (docs/decisions/0101).
PASSAGE_SLACK = 0.10
# A listing longer than this many lines or characters is not quoted at all (docs/decisions/0084).
LISTING_LINES = 8
LISTING_CHARS = 400
# Pointers and list openers carry no fact of their own.
_FILLER = re.compile(
    r"^(?:see\b|refer to\b|for (?:more|further) (?:information|details)\b|more information\b"
    r"|(?:this|the following|the next) (?:section|chapter|page|table|example)s? (?:describes?|explains?|shows?|lists?)\b"
    r"|the following\b|as (?:mentioned|described|noted|shown|explained) (?:above|below|earlier|later)\b"
    # Czech: "Viz …", "Více informací najdete …", "Podrobnosti najdete …", "V této sekci …",
    # "Jak je uvedeno výše …".
    r"|viz\b|(?:více|další|bližší|podrobnější) informac\w*|podrobnosti (?:najdete|naleznete|viz)\b"
    r"|(?:v |na )?(?:této|tato|tento|tomto|následující\w*) (?:sekc|kapitol|stránk|tabulk|část|článk)\w*"
    r"|jak (?:je|bylo) (?:uvedeno|popsáno|zmíněno|vysvětleno) (?:výše|níže|dříve)\b)",
    re.IGNORECASE,
)
_ANNOUNCES = re.compile(r"\b(?:following|as follows|for (?:example|instance)|examples?|these|below|include)\b"
                        r"|\b(?:následující\w*|následovně|například|tyto|těmito|níže|patří)\b", re.IGNORECASE)
# Two sentences sharing this share of their words say the same thing once too often.
_SAME_WORDS = 0.8


@dataclass(frozen=True)
class _Sentence:
    text: str
    candidate: Candidate
    entity: str = ""  # the lowered name of the entity its chunk belongs to, if any
    place: int = 0  # its chunk's place in the retrieved order


def split_sentences(text: str) -> list[str]:
    pieces, start = [], 0
    for boundary in _SENTENCE.finditer(text):
        if "\n" not in boundary.group() and (_ABBREVIATION.search(text, start, boundary.start())
                                             or text.endswith("...", start, boundary.start())):
            continue  # a line break always ends the piece (a list item); an abbreviation never does
        pieces.append(text[start:boundary.start()])
        start = boundary.end()
    pieces.append(text[start:])
    return [s.strip(" -•\t") for s in pieces if len(s.strip()) >= _MIN_CHARS]


_WORD = re.compile(r"[a-z0-9]{4,}")
_STOP = {"what", "which", "when", "where", "does", "with", "that", "this", "have", "from", "your", "about", "there",
         "many", "much", "long", "should", "would", "could"}


def names(identifier: str, lowered: str) -> bool:
    """Whether lowered text holds the identifier as a whole token: "maintenance_work_mem" does
    not name work_mem; "the value of work_mem." does."""
    start = lowered.find(identifier)
    while start >= 0:
        end = start + len(identifier)
        before = lowered[start - 1] if start else " "
        after = lowered[end] if end < len(lowered) else " "
        if not (before.isalnum() or before in "_.-") and not (after.isalnum() or after in "_-"):
            return True
        start = lowered.find(identifier, start + 1)
    return False


def question_words(question: str) -> set[str]:
    return {w[:5] for w in _WORD.findall(question.lower()) if w not in _STOP}


# Letters joined by hyphens ("built-in", "read-only", "many-to-many") are words of the
# sentence, not names the answer must repeat: an exact term for search, never an identifier
# here. A name keeps a digit, an underscore or a dot (E1043, work_mem, os.path.join)
# (docs/decisions/0133).
_HYPHENATED_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)+")


def question_identifiers(question: str) -> list[str]:
    """The names a question holds, lower-cased: what a sentence that answers it repeats."""
    return [term[1:] for term in exact_terms(question) if not _HYPHENATED_WORD.fullmatch(term[1:])]


def lexical_bonus(question: str, sentence: str, *, entity: str = "") -> float:
    """Cosine alone prefers fluent paraphrase; the sentence that holds the exact identifier or
    the question's own words is usually the answer. Identifiers weigh most; a sentence of the
    entity the question names holds it even when it says "this value" instead."""
    lowered = sentence.lower()
    identifiers = question_identifiers(question)
    if any(names(identifier, lowered) or identifier == entity for identifier in identifiers):
        return 0.3
    words = question_words(question)
    if not words:
        return 0.0
    present = sum(1 for w in words if w in lowered)
    return 0.1 * present / len(words)


def looks_like_instruction(sentence: str) -> bool:
    return bool(_INSTRUCTION.search(sentence))


def is_filler(sentence: str) -> bool:
    """A pointer elsewhere or the opener of a list: true of the sentence, not of its topic.

    A sentence ending in a colon can still be the answer ("Send the key in the header as
    `Authorization: Bearer` followed by the key:"); only one that announces a list is dropped."""
    if sentence.rstrip().endswith(":") and _ANNOUNCES.search(sentence):
        return True
    term = TERM.fullmatch(sentence.strip())
    if term is not None and (term["kind"] or term["signature"]):
        return True  # a definition list's term read as a line: "work_mem ( integer)" states nothing
    return bool(_FILLER.match(sentence.lstrip("-•* ")))


_TOKEN = re.compile(r"\w+")


def _tokens(text: str) -> frozenset[str]:
    return frozenset(_TOKEN.findall(text.lower()))


def is_repeat(sentence: str, picked: list[str]) -> bool:
    """Said already: the same words, near enough, and the same figures (five days and seven
    days are two facts however alike the sentences read)."""
    words = _tokens(sentence)
    figures = {w for w in words if any(ch.isdigit() for ch in w)}
    for other in picked:
        theirs = _tokens(other)
        if figures != {w for w in theirs if any(ch.isdigit() for ch in w)}:
            continue
        union = words | theirs
        if sentence == other or (union and len(words & theirs) / len(union) >= _SAME_WORDS):
            return True
    return False


@dataclass(frozen=True)
class _Scores:
    """Per sentence: rank (the order), quotable (against the floor) and its token states from
    the same encoder pass (None where the runtime gives none), which the token match reads."""

    rank: np.ndarray
    quotable: np.ndarray
    states: list[np.ndarray | None]

    def __add__(self, other: _Scores) -> _Scores:
        return _Scores(np.concatenate([self.rank, other.rank]), np.concatenate([self.quotable, other.quotable]),
                       self.states + other.states)


_NO_SCORES = _Scores(np.zeros(0), np.zeros(0), [])


def _score(question: str, sentences: list[_Sentence], *, headed: bool,
           emphasis: str | None = None) -> _Scores:
    """Cosine to the question (one encoder call) plus the lexical bonus, a question asking for
    an amount or a default leaning to the sentences that state a figure. `headed`: quotable
    reads the sentence also under its heading path and takes the better reading, while rank
    reads the sentence alone (docs/decisions/0057)."""
    texts = [s.text for s in sentences]
    if headed:
        # A sentence's subject is often only in its heading ("Limits per plan" > "Business
        # workspaces get 1,200"); in the same encoder call, so the question is embedded once.
        texts += [f"{s.candidate.heading_path}: {s.text}" for s in sentences]
    lead = [question, emphasis] if emphasis is not None else [question]
    encoder = get_encoder()
    # One text a batch: the int8 encoder quantises a batch's activations by the whole batch's
    # range, so a sentence batched with others moved its cosine by up to 0.02 and which chunks
    # were read together decided answers near the floor. Alone, a sentence scores the same
    # whatever else is read, and no slower for a chunk's dozen sentences (0127).
    if encoder.has_token_states:
        vectors, all_states = encoder.encode_with_states([*lead, *texts], batch_size=1)
        states: list[np.ndarray | None] = list(all_states[len(lead): len(lead) + len(sentences)])
    else:
        vectors, states = encoder.encode([*lead, *texts], batch_size=1), [None] * len(sentences)
    cosine = vectors[len(lead):] @ vectors[0]
    if emphasis is not None:
        # What the rescuing word adds to each sentence's cosine: the question is answerable
        # because of that word, so the sentences it draws closer answer it (docs/decisions/0067).
        cosine = 2 * cosine - vectors[len(lead):] @ vectors[1]
    plain, under_heading = cosine[: len(sentences)], cosine[len(sentences):] if headed else cosine
    bonus = [lexical_bonus(question, s.text, entity=s.entity) for s in sentences]
    if leans_to_figures(question):
        bonus = [b + (0.05 if figure_or_default(s.text) else 0.0) for b, s in zip(bonus, sentences)]
    return _Scores(plain + np.array(bonus), np.maximum(plain, under_heading) + np.array(bonus), states)


def _score_in_order(question: str, sentences: list[_Sentence], *, emphasis: str | None,
                    minimum: float) -> tuple[list[_Sentence], _Scores]:
    """The sentences scored chunk by chunk in the retrieved order until one has a quotable
    sentence, and their scores: the passage is the first such chunk's (_pick), so no later
    chunk's sentence can change the answer, and encoding them all was most of an answer's time
    on a manual (docs/decisions/0127). Contested chunks' sentences go in the first call,
    wherever they stand: two sources that disagree are answered side by side. With no quotable
    sentence anywhere, every sentence has been scored."""
    scored: list[_Sentence] = []
    scores = _NO_SCORES
    waiting = [s for s in sentences if s.candidate.contested]
    for place in sorted({s.place for s in sentences}):
        batch = waiting + [s for s in sentences if s.place == place and not s.candidate.contested]
        waiting = []
        if batch:
            scored += batch
            scores += _score(question, batch, headed=False, emphasis=emphasis)
        if any(q >= minimum and s.place <= place for s, q in zip(scored, scores.quotable)):
            break
    return scored, scores


def _token_match(question: str, sentences: list[_Sentence], states: list[np.ndarray | None]) -> np.ndarray:
    """How well each sentence's tokens match the question's, centred at zero: the late-interaction
    reranker's MaxSim (retrieval/rerankers/late_interaction.py) read per sentence. A pooled cosine
    blurs the sentence that names what the question asks into its neighbours; the token match
    finds it (docs/decisions/0111). It orders the passage's sentences; it never makes one
    quotable. It reads the states of the pass that scored the sentences, so only the question
    is encoded again (0127)."""
    return maxsim(question, [s.text for s in sentences], token_states=states) - MAXSIM_CENTER


def _retrieval_prior(sentences: list[_Sentence], context: list[Candidate]) -> np.ndarray:
    """What each sentence loses for its chunk's place in the retrieved order.

    One sentence's pooled cosine is a weak judge next to the retrieval that ranked whole chunks
    (both legs, the reranker): a tenant's name in the question ("What uptime does PayLane
    guarantee?") pulls every sentence that repeats the name above the top chunk's "99.95%
    monthly uptime commitment" (docs/decisions/0061). The order ranks; it never makes a
    sentence quotable."""
    position = {c.chunk_id: i for i, c in enumerate(context)}
    return np.array([RANK_PENALTY * position[s.candidate.chunk_id] for s in sentences])


def _pick(ranked: list[tuple[_Sentence, float]], minimum: float, *, one_amount: bool = False) -> list[_Sentence]:
    """Passage first (docs/decisions/0101, 0107): the best-ranked chunk with a quotable sentence
    (`ranked` best first, each with its quotable score) is the answer, its best sentence and its
    other quotable ones in the order the page says them. No other chunk's sentence joins: one
    that shared a word with the question was more often another page's fact than the missing
    part of the answer (0107). None is said twice. `one_amount`: the question asks for one
    amount and nothing else, and the passage's best sentence that states a figure is the whole
    answer (0139)."""
    # The passage is the best-ranked chunk that has a sentence above the floor (retrieval ranked
    # whole chunks with both legs and the reranker), quoted from its best sentence.
    eligible = [sentence for sentence, quotable in ranked if quotable >= minimum]
    top = min(sentence.place for sentence in eligible)
    anchor = next(sentence for sentence in eligible if sentence.place == top)
    if one_amount:
        stating = next((sentence for sentence, quotable in ranked if sentence.place == top
                        and quotable >= minimum - PASSAGE_SLACK and states_figure(sentence.text)), None)
        if stating is not None:
            return [stating]
    passage = [anchor]
    for sentence, quotable in ranked:
        if len(passage) >= MAX_SENTENCES:
            break
        if (sentence is not anchor and sentence.candidate.chunk_id == anchor.candidate.chunk_id
                and quotable >= minimum - PASSAGE_SLACK
                and not is_repeat(sentence.text, [p.text for p in passage])):
            passage.append(sentence)
    return _reading_order(anchor, passage)


def extract_answer(question: str, candidates: list[Candidate], *, emphasis: str | None = None,
                   context_chunks: int | None = None, focus: str | None = None,
                   said: Sequence[str] = ()) -> Draft:
    """`emphasis`: the question without the missing word whose pull let it past the gate
    (retrieval.pull); sentences are then scored by what that word adds. `context_chunks`: the
    flow's (RetrievalConfig.context_chunks); a direct caller that passes none gets settings'.

    A follow-up (docs/decisions/0100): `question` is what was searched (the follow-up joined to
    the turn before), `focus` the follow-up as asked, which the sentences are scored against
    first, so the answer addresses the last question; `said` holds the conversation's earlier
    answers, none of whose sentences is quoted again."""
    if context_chunks is None:
        context_chunks = RetrievalConfig.from_settings().context_chunks
    context = candidates[:context_chunks]
    # Each cited piece of an earlier answer, and each sentence in it: a quoted line of code is a
    # piece of its own, with no full stop to split at.
    pieces = [_ENTITY_LEAD.sub("", piece.strip()) for text in said for piece in _CITATION.split(text)]
    given = [s for piece in pieces if piece for s in dict.fromkeys([piece, *split_sentences(piece)])]
    sentences = [_Sentence(s, c, entity_name(c.heading_path).lower(), place) for place, c in enumerate(context)
                 for s in _quotable(chunk_body(c))
                 if not looks_like_instruction(s) and not is_filler(s) and not is_repeat(s, given)]
    if focus is not None and focus != question:
        draft = _extract(focus, sentences, context, emphasis=None)
        if not draft.declined:
            return draft
    return _extract(question, sentences, context, emphasis=emphasis)


def _extract(question: str, sentences: list[_Sentence], context: list[Candidate], *,
             emphasis: str | None) -> Draft:
    identifiers = question_identifiers(question)
    naming = [s for s in sentences if any(names(i, s.text.lower()) or i == s.entity for i in identifiers)]
    if naming:
        # A question about E1043 is answered by sentences that name E1043, not by E1042's.
        sentences = naming
    if not sentences:
        return Draft.declined_by("extractive", "no quotable sentence in the retrieved chunks")
    minimum = MIN_SIMILARITY
    sentences, scores = _score_in_order(question, sentences, emphasis=emphasis, minimum=minimum)
    if float(scores.quotable.max()) < minimum:
        # Only a question about to be declined pays for the second reading (docs/decisions/0057).
        scores = _score(question, sentences, headed=True, emphasis=emphasis)
    quotable = scores.quotable
    if float(quotable.max()) < minimum:
        return Draft.declined_by("extractive", f"best sentence similarity {float(quotable.max()):.2f} < {minimum}")
    rank = scores.rank - _retrieval_prior(sentences, context)
    # The passage is the first-ranked context chunk with a quotable sentence (_pick); its
    # sentences, and only theirs, are ordered by how their tokens match the question too.
    top = min(s.place for s, q in zip(sentences, quotable) if q >= minimum)
    passage = [i for i, s in enumerate(sentences) if s.place == top]
    rank[passage] += _token_match(question, [sentences[i] for i in passage], [scores.states[i] for i in passage])
    order = np.argsort(-rank, kind="stable")
    scored = [(sentences[i], float(quotable[i])) for i in order]
    contested_docs = {s.candidate.document_id for s, score in scored if s.candidate.contested and score >= minimum}
    if contested_docs and len({s.candidate.document_id for s, _ in scored if s.candidate.contested}) >= 2:
        # Sources disagree: the best sentence of each contested document, newest first.
        best: dict[int, _Sentence] = {}
        for sentence, _ in scored:
            if sentence.candidate.contested and sentence.candidate.document_id not in best:
                best[sentence.candidate.document_id] = sentence
        return _conflict_answer(list(best.values())[:3])
    picked = _pick(scored, minimum, one_amount=asks_one_amount(question))
    cited = list(dict.fromkeys(p.candidate.chunk_id for p in picked))
    text = _quote(picked)
    lead = entity_lead(picked[0].candidate, [p.candidate for p in picked], picked[0].text)
    return Draft(text=lead + text, cited_chunk_ids=cited, generator="extractive")


def _quotable(body: str) -> list[str]:
    """The chunk's sentences as the answer may quote them. A line of code is read as the whole
    listing it belongs to, once; a listing of one line is quoted when it is a statement of its
    own, never when it is a fragment cut from one (docs/decisions/0084)."""
    quotable: list[str] = []
    for piece in split_sentences(body):
        if is_code(piece) or inside_listing(body, piece):
            listing = enclosing_listing(body, piece, max_lines=LISTING_LINES, max_chars=LISTING_CHARS)
            if "\n" in listing:
                piece = listing
            elif is_fragment(piece):
                piece = ""
        if piece and piece not in quotable:
            quotable.append(piece)
    return quotable


def _reading_order(anchor: _Sentence, passage: list[_Sentence]) -> list[_Sentence]:
    """The best sentence first (with the sentence that announces it, when it is a listing), then
    the passage's other sentences in the page's order: a reader wants the answer first, and the
    rest as the page tells it (0101)."""
    body = chunk_body(anchor.candidate)
    announcer = [p for p in passage if p.text.rstrip().endswith(":") and _just_above(body, p.text, anchor.text)]
    rest = sorted((p for p in passage if p is not anchor and p not in announcer), key=lambda p: body.find(p.text))
    return announcer[:1] + [anchor] + rest


def _just_above(body: str, first: str, second: str) -> bool:
    """Whether `second` follows `first` in `body` with nothing but whitespace between them."""
    start = body.find(first)
    return start >= 0 and body[start + len(first):].lstrip().startswith(second)


def _quote(picked: list[_Sentence]) -> str:
    """The picked sentences, each cited; a listing stands on lines of its own. The first
    sentence that announces a listing ("…looks something like this:") is followed by it, unless
    the answer quotes that listing already: one shown listing an answer (docs/decisions/0085)."""
    text, after_listing, shown = "", False, any("\n" in p.text for p in picked)
    picked = _announcers_joined(picked)
    for p in picked:
        listing = "" if shown else listing_after(chunk_body(p.candidate), p.text, max_lines=LISTING_LINES,
                                                 max_chars=LISTING_CHARS)
        shown = shown or bool(listing)
        if text:
            text += "\n" if after_listing or "\n" in p.text else " "
        quoted = f"{p.text}\n{listing}" if listing else p.text
        text += f"{quoted} [{p.candidate.chunk_id}]"
        after_listing = "\n" in quoted
    return text


def _announcers_joined(picked: list[_Sentence]) -> list[_Sentence]:
    """A sentence announcing the listing quoted right after it, and that listing, as one piece
    under one citation: "…looks something like this:" never stands apart from its listing."""
    joined: list[_Sentence] = []
    for p in picked:
        last = joined[-1] if joined else None
        if (last is not None and "\n" in p.text and last.candidate.chunk_id == p.candidate.chunk_id
                and last.text.rstrip().endswith(":") and _just_above(chunk_body(p.candidate), last.text, p.text)):
            joined[-1] = replace(last, text=f"{last.text}\n{p.text}")
        else:
            joined.append(p)
    return joined


def _conflict_answer(picked: list[_Sentence]) -> Draft:
    """Sources disagree: prefer the newest effective date, and say so."""

    def when(s: _Sentence) -> str:
        return s.candidate.effective_date.isoformat() if s.candidate.effective_date else "0000-00-00"

    ordered = sorted(picked, key=lambda s: (when(s), s.candidate.document_id), reverse=True)
    newest = ordered[0]
    date = newest.candidate.effective_date.isoformat() if newest.candidate.effective_date else "the newest source"
    lines = [f"Our sources disagree on this. The most recent one ({newest.candidate.title}, {date}) says: "
             f"{newest.text} [{newest.candidate.chunk_id}]"]
    for other in ordered[1:]:
        lines.append(f"Another source says: {other.text} [{other.candidate.chunk_id}]")
    cited = list(dict.fromkeys(s.candidate.chunk_id for s in ordered))
    return Draft(text=" ".join(lines), cited_chunk_ids=cited, generator="extractive", conflict=True)
