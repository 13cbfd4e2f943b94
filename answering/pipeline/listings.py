"""Code in a chunk's text: which of its lines are a listing's, the whole listing a line belongs to,
and the listing a sentence announces.

Documentation shows its examples as listings under the sentence that explains them ("…such as
“non-overlapping” on a range type. For example:" and the CREATE TABLE below it). A chunk keeps
them as plain lines, so the sentence splitter hands the answerer "CREATE TABLE room_reservation ("
as a sentence of its own; the encoder finds it close to a question about room bookings, and the
answer quotes half a statement (docs/decisions/0084). Here a listing's line is told from prose
by how it is written, not by where it came from: the HTML is gone by the time a chunk is read.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\S+")
_WRAPPING = "(\"'“‘„)”’.,;:!?"


def _is_prose_word(token: str) -> bool:
    """A word of prose, in any alphabet: lower case, letters and inner hyphens or apostrophes,
    wrapped in its punctuation and quotes ("stojí", "(default", "non-overlapping”). `work_mem`,
    `SELECT`, `x::int`, `'friend');` and `=` are not."""
    core = token.strip(_WRAPPING)
    return bool(core) and core[0].islower() and core.replace("-", "").replace("'", "").replace("’", "").isalpha()


# How a line of code, a prompt or a server's output opens: a shell or psql prompt, the
# interpreter's, a message level, a template tag, a decorator, a comment, an import, a
# definition, a Python statement that ends as one.
_OPENS = re.compile(
    r"^(?:\$\s|>>>\s?|\.\.\.\s|[\w-]*=[#>]\s?|(?:ERROR|DETAIL|HINT|NOTICE|WARNING|LOG|STATEMENT|CONTEXT|INFO):"
    r"|\{[%{#]|@\w|(?:#|--|//|/\*)\s|from\s+\.*[\w.]+\s+import\s|import\s+[\w.]+(?:,\s*[\w.]+)*$"
    r"|(?:async\s+)?(?:def|class)\s+\w+\s*[(:]"
    r"|(?:if|elif|else|for|while|with|try|except|finally|return|raise|yield|assert)\b.*[:)\]]$)"
)
_MARKUP = re.compile(r"^<[A-Za-z/!][^>]*>.*>$")  # a line of HTML, not a sentence that mentions a tag
# How a statement, an argument list or a signature line ends; prose does not end so.
_CODE_END = re.compile(r"(?:[({\[,;\\=]|\[source\])$")
_SENTENCE_END = re.compile(r"[.!?][)\"'”’]*$")
_COMMENT = re.compile(r"^(?:#|--|//|/\*)")
_PAIRS = {")": "(", "]": "[", "}": "{"}
_LITERAL = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")  # a bracket in a string ('[2010-01-01, 2010-01-02)') is data


def is_code(line: str) -> bool:
    """Whether a line (or a piece the sentence splitter cut) is a listing's, not a sentence.

    Erring towards prose: a sentence that ends as one and holds two words of prose stays a
    sentence however many identifiers it names ("Open Admin, then Billing, then Add-ons.")."""
    text = line.strip()
    if not text:
        return False
    if _OPENS.match(text) or _MARKUP.match(text):
        return True
    tokens = _TOKEN.findall(text)
    label = text.rstrip(":").split()
    if all(token.isalpha() and not (token.isupper() and len(token) > 1) for token in label):
        return False  # a label or a heading: "Note", "Common aggregate options", "High:"
    words = sum(1 for token in tokens if _is_prose_word(token))
    share = words / len(tokens)
    if _SENTENCE_END.search(text) and (words >= 2 or share >= 0.25):
        return False
    if _CODE_END.search(text) and share < 0.75:
        return True
    return share < 0.4


def _continues(line: str) -> bool:
    """Inside a listing, an indented line is the listing's, however prose-like its words
    ("    during tsrange,"); any other line only when it is code."""
    return bool(line.strip()) and (line[0] in " \t" or is_code(line))


def _goes_on(text: str) -> bool:
    """Whether a line of code ends where its statement goes on: "(", ",", "def items(self):"."""
    return text.endswith(":") or (bool(_CODE_END.search(text)) and not text.endswith(";"))


def is_fragment(line: str) -> bool:
    """A line of code that is not a statement of its own: its brackets do not close, it ends
    where a statement goes on ("CREATE TABLE room_reservation (", "    during tsrange,", "def
    items(self):"), or it is a comment, which says nothing without its code."""
    text = line.strip()
    if _COMMENT.match(text) or _goes_on(text):
        return True
    depth: list[str] = []
    for ch in _LITERAL.sub("", text):
        if ch in "([{":
            depth.append(ch)
        elif ch in _PAIRS:
            if not depth or depth.pop() != _PAIRS[ch]:
                return True
    return bool(depth)


def _balanced(text: str) -> bool:
    code = _LITERAL.sub("", text)
    return all(code.count(close) == code.count(open_) for close, open_ in _PAIRS.items())


def inside_listing(body: str, piece: str) -> bool:
    """Whether a piece whose words read as prose is a line of a listing all the same: indented,
    under a line of code or another indented line ("        _('%(value)s is not an even
    number'),", a string literal in a call). Read as the listing's, as `_continues` reads it
    when it builds one."""
    lines = body.split("\n")
    at = _line_of(lines, piece)
    # Line 0 has no line above it; None is a piece not found on one line.
    if not at:
        return False
    return lines[at][:1] in (" ", "\t") and _continues(lines[at - 1])


def enclosing_listing(body: str, piece: str, *, max_lines: int, max_chars: int) -> str:
    """The whole listing a line of code belongs to, verbatim from `body`: the run of code and
    indented lines around the piece's line. "" when it is longer than the limits, or when the
    chunk cut it: its brackets do not close, its first line is indented, or its last line ends
    where its statement goes on (the rest is in the neighbouring chunk)."""
    lines = body.split("\n")
    at = _line_of(lines, piece)
    return "" if at is None else _listing_at(lines, at, max_lines=max_lines, max_chars=max_chars)


def _line_of(lines: list[str], piece: str) -> int | None:
    return next((i for i, line in enumerate(lines) if piece in line), None)


def listing_after(body: str, sentence: str, *, max_lines: int, max_chars: int) -> str:
    """The listing a sentence announces, whole and verbatim: the one that starts on the line after
    the sentence's, when the sentence ("A minimal application looks something like this:") or a
    short opener after it on its line ("For example:") ends in a colon. The opener comes with it."""
    at = body.find(sentence)
    line_end = body.find("\n", at + len(sentence)) if at >= 0 else -1
    if line_end < 0:
        return ""
    opener = body[at + len(sentence):line_end].strip()
    if not (opener or sentence).endswith(":") or len(opener) > 60:
        return ""
    lines = body.split("\n")
    first = body.count("\n", 0, line_end) + 1
    if first >= len(lines) or not is_code(lines[first]):
        return ""
    listing = _listing_at(lines, first, max_lines=max_lines, max_chars=max_chars)
    if not listing.startswith(lines[first]):
        return ""  # the announced line is the middle of a listing that began above the sentence
    return f"{opener}\n{listing}" if opener and listing else listing


def _listing_at(lines: list[str], at: int, *, max_lines: int, max_chars: int) -> str:
    start = at
    while start > 0 and _continues(lines[start - 1]):
        start -= 1
    end = at + 1
    while end < len(lines) and _continues(lines[end]):
        end += 1
    listing = "\n".join(lines[start:end])
    cut = lines[start][:1] in (" ", "\t") or _goes_on(lines[end - 1].strip())  # begun or ended mid-statement
    if cut or end - start > max_lines or len(listing) > max_chars or not _balanced(listing):
        return ""
    return listing
