"""The console in Czech (issue 48 item 6, second half; docs/decisions/0108): a staff member whose
browser asks for Czech reads the console's own pages in Czech, an English browser (and one that
names no language) reads them in English, and the catalogue holds a Czech text for every string
the console marks.

Forced fails seen red: one console msgstr emptied in django.po (the catalogue test names it, and
the page test finds the English original), and django.mo left from before a changed msgstr.
"""

from __future__ import annotations

import ast
import gettext
import re
from pathlib import Path
from typing import Any

import pytest

from answering.console import articles, escalations
from answering.tests.console_data import escalation_make, staff_client, trace_make

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = ROOT / "locale" / "cs" / "LC_MESSAGES"
# Where the console's own strings are marked: its templates and the Python that labels its pages.
CONSOLE_TEMPLATES = ROOT / "templates" / "admin"
CONSOLE_PYTHON = [*sorted((ROOT / "answering" / "console").glob("*.py")), ROOT / "corpus" / "admin.py",
                  ROOT / "tenants" / "admin.py", ROOT / "tenants" / "loginlimits.py", ROOT / "answering" / "apps.py",
                  ROOT / "corpus" / "apps.py", ROOT / "tenants" / "apps.py", ROOT / "answering" / "handoff" / "config.py",
                  ROOT / "config" / "urls.py"]
OWNER_PERMISSIONS = ("view_escalation", "change_escalation", "view_trace", "view_document", "view_ingestjob",
                     "add_ingestjob")
ESCALATIONS = "/admin/answering/escalation/"

# Per page: Czech that must be there, and the English originals of the same strings that must not.
PAGES: dict[str, tuple[list[str], list[str]]] = {
    "index": (["Provozní konzole", "Konzole Answerdesk", "Provoz podpory", "Přehled odpovědí", "Otevřené eskalace", "Odpovídání", "Znalostní báze"],
              ["Operations console", "Answerdesk console", "Support operations", "Open escalations",
               "Voted-down answers"]),
    "escalations": (["Převzít vybrané eskalace", "Vyřešit vybrané eskalace (bez poznámky)", "Tazatel čeká",
                     "Po termínu"],
                    ["Claim selected escalations", "Asker waiting", "Resolve selected escalations"]),
    "escalation": (["Práce na eskalaci", "Odpověď tazateli", "Odeslat odpověď", "Poznámka k vyřešení",
                    "Proč došlo k eskalaci", "Co našlo vyhledávání", "Zatím žádné zprávy.", "vektorová podobnost",
                    "Převzít</button>"],
                   ["Work this escalation", "Reply to the asker", "Send reply", "Resolution note</label>",
                    "Why it escalated", "What retrieval found", "No messages yet.", "vector similarity",
                    "Claim</button>"]),
    "article": (["Osobní odpověď dostal jen tazatel.", "Publikovat</button>", "Uložit koncept",
                 "Článek znalostní báze z eskalace", "<strong>Koncept</strong>, nepublikováno.",
                 "Bez pozdravu, bez podpisu, bez jména"],
                ["The personal reply went to the asker only.", "Save draft", "Knowledge-base article from",
                 "not published.", "No greeting, no sign-off"]),
    "dashboard": (["Přehled odpovědí", "podíl eskalací", "Třídění zpětné vazby", "Po dnech", "Podíl eskalací",
                   "Zastaralá data", "Dny jsou v UTC."],
                  ["Feedback triage", "Per day", "escalation rate", "Escalation rate", "Stale data",
                   "Days are UTC."]),
    "documents": (["Nahrát dokumenty", "Dle: publikum"], ["Upload documents", "By audience"]),
    "answer_mode": (["Režim odpovídání", "Jak připojit model", "extraktivní (offline, bez modelu)",
                     "řetězec poskytovatelů (v pořadí)", "Provozovatel serveru nastaví"],
                    ["How to connect a model", "extractive (offline, no model)", "provider chain (in order)",
                     "The server operator sets", "ANSWER_PROVIDERS is empty"]),
    "traces": (["Odpovědi, eskalace a mezipaměť", "třídění zpětné vazby", "Přehled odpovědí: podíly"],
               ["Answers, escalations and the cache", "feedback triage", "Answer dashboard: rates"]),
}


@pytest.fixture
def console_pages(acme: Any) -> dict[str, str]:
    """One URL per console page, on acme's rows: an open escalation, a resolved one with a draft."""
    trace_make(acme.tenant, feedback=-1)
    open_one = escalation_make(acme.tenant, "Where is my parcel?")
    resolved = escalations.escalation_resolve(escalation=escalation_make(acme.tenant, "Can I pay on delivery?"),
                                              user=acme.owner, note="Yes, cash on delivery costs 2 EUR.")
    articles.article_draft_start(escalation=resolved, user=acme.owner)
    return {"index": "/admin/", "escalations": ESCALATIONS, "escalation": f"{ESCALATIONS}{open_one.pk}/change/",
            "article": f"{ESCALATIONS}{resolved.pk}/article/", "dashboard": "/admin/answering/trace/dashboard/",
            "documents": "/admin/corpus/document/", "answer_mode": "/admin/answering/trace/answer-mode/",
            "traces": "/admin/answering/trace/"}


def _get(client: Any, url: str, accept: str) -> str:
    response = client.get(url, HTTP_ACCEPT_LANGUAGE=accept)
    assert response.status_code == 200, (url, response.status_code)
    return str(response.content.decode())


@pytest.mark.django_db
def test_a_czech_browser_reads_the_console_in_czech(acme: Any, console_pages: dict[str, str]) -> None:
    owner = staff_client(acme.owner, *OWNER_PERMISSIONS)
    for page, url in console_pages.items():
        html = _get(owner, url, "cs-CZ,cs;q=0.9,en;q=0.8")
        czech, english = PAGES[page]
        assert '<html lang="cs"' in html, page
        assert [s for s in czech if s not in html] == [], page
        assert [s for s in english if s in html] == [], page


@pytest.mark.django_db
@pytest.mark.parametrize("accept", ["en-US,en;q=0.9", ""])
def test_an_english_browser_reads_the_console_in_english(acme: Any, console_pages: dict[str, str],
                                                         accept: str) -> None:
    """English stays the default: an English browser, and one that names no language."""
    owner = staff_client(acme.owner, *OWNER_PERMISSIONS)
    for page, url in console_pages.items():
        html = _get(owner, url, accept)
        czech, english = PAGES[page]
        assert [s for s in english if s not in html] == [], page
        assert [s for s in czech if s in html] == [], page  # no Czech at all


@pytest.mark.django_db
def test_messages_after_an_action_are_czech(acme: Any) -> None:
    escalation = escalation_make(acme.tenant, "Where is my parcel?")
    owner = staff_client(acme.owner, *OWNER_PERMISSIONS)
    page = owner.post(f"{ESCALATIONS}{escalation.pk}/claim/", follow=True, HTTP_ACCEPT_LANGUAGE="cs").content.decode()
    assert f"Převzali jste eskalaci #{escalation.pk}." in page and "You claimed" not in page


# -- the catalogue ---------------------------------------------------------------------------

_STRING = r'"((?:[^"\\]|\\.)*)"'


def _po_entries(text: str) -> list[dict[str, Any]]:
    """The entries of a .po file: msgid, msgid_plural and msgstr/msgstr[n], continuation lines joined."""
    entries: list[dict[str, Any]] = []
    for block in re.split(r"\n\s*\n", text):
        entry: dict[str, Any] = {}
        key = ""
        for line in block.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            start = re.match(r"^(msgid|msgid_plural|msgstr(?:\[\d+\])?) " + _STRING + "$", line)
            if start:
                key = start.group(1)
                entry[key] = start.group(2)
            else:
                more = re.match("^" + _STRING + "$", line)
                assert more and key, f"a line the test cannot read: {line!r}"
                entry[key] += more.group(1)
        if "msgid" in entry:
            entries.append({k: v.encode().decode("unicode_escape").encode("latin-1").decode() for k, v in entry.items()})
    return entries


def _marked_in_templates() -> set[str]:
    found: set[str] = set()
    for template in CONSOLE_TEMPLATES.rglob("*.html"):
        text = template.read_text(encoding="utf-8")
        found |= set(re.findall(r'{% translate "([^"]+)"', text))
        for options, body in re.findall(r"{% blocktranslate([^%]*)%}(.*?){% endblocktranslate %}", text, re.DOTALL):
            for part in body.split("{% plural %}"):
                if "trimmed" in options:
                    part = " ".join(line.strip() for line in part.strip().splitlines())
                found.add(re.sub(r"{{ (\w+) }}", r"%(\1)s", part))
    return found


def _marked_in_python() -> set[str]:
    found: set[str] = set()
    for path in CONSOLE_PYTHON:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in {"_", "gettext", "gettext_lazy"} and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                found.add(node.args[0].value)
    return found


def test_every_entry_is_translated_and_the_committed_mo_says_what_the_po_says() -> None:
    """django.mo is committed and compiled by msgfmt (docs/decisions/0050): an entry without a
    Czech text, or a .mo not rebuilt after the .po changed, fails here."""
    entries = _po_entries((CATALOGUE / "django.po").read_text(encoding="utf-8"))
    header = [e for e in entries if e["msgid"] == ""]
    entries = [e for e in entries if e["msgid"] != ""]
    assert len(header) == 1 and len(entries) > 300
    untranslated = [e["msgid"] for e in entries if not all(v for k, v in e.items() if k.startswith("msgstr"))]
    assert untranslated == []
    with (CATALOGUE / "django.mo").open("rb") as handle:
        compiled = gettext.GNUTranslations(handle)
    stale = []
    for e in entries:
        if "msgid_plural" in e:
            said = [compiled.ngettext(e["msgid"], e["msgid_plural"], n) for n in (1, 2, 5)]
            if said != [e["msgstr[0]"], e["msgstr[1]"], e["msgstr[2]"]]:
                stale.append(e["msgid"])
        elif compiled.gettext(e["msgid"]) != e["msgstr"]:
            stale.append(e["msgid"])
    assert stale == [], "django.mo is older than django.po: run msgfmt -o django.mo django.po"


def test_every_console_string_marked_for_translation_has_a_czech_entry() -> None:
    entries = _po_entries((CATALOGUE / "django.po").read_text(encoding="utf-8"))
    ids = {e["msgid"] for e in entries} | {e["msgid_plural"] for e in entries if "msgid_plural" in e}
    templates, python = _marked_in_templates(), _marked_in_python()
    assert len(templates) > 150 and len(python) > 150  # the readers still find the marks
    assert sorted(templates - ids) == []
    assert sorted(python - ids) == []
