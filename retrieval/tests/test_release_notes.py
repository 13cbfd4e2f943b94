"""Release notes stand back for questions that do not ask about releases (docs/decisions/0086)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import _make_cast
from corpus.ingest.flow import ingest_paths

from retrieval.releases import asks_about_releases, is_release_notes, release_notes_not_first
from retrieval.search import search
from tenants.scope import TenantScope


@dataclass
class Page:
    name: str
    title: str


NOTES = ("E.4. Release 15.15", "Django 3.2 release notes — Django 3.2.25 documentation",
         "What’s New In Python 3.11", "What's new in 2.0", "Changelog", "Changes in version 4.1")
OTHER = ("27.4. Hot Standby", "Database transactions | Django documentation",
         "os.path — Common pathname manipulations", "CREATE TABLE", "Releasing a lock", "Pre-release checklist", "News")


@pytest.mark.parametrize("title", NOTES)
def test_release_notes_are_known_by_their_title(title: str) -> None:
    assert is_release_notes(title)


@pytest.mark.parametrize("title", OTHER)
def test_other_pages_are_not_release_notes(title: str) -> None:
    assert not is_release_notes(title)


@pytest.mark.parametrize("question", [
    "Since which version can I write int | None in type hints?",
    "Which release added the @admin.display decorator?",
    "When did the ORM gain support for window functions?",
    "We upgraded from 13 to 15 and now get permission denied. What changed?",
    "Is there a shorter alias for datetime.timezone.utc in Python 3.11?",
    "What's new in the admin?",
    "Is the length argument deprecated?",
])
def test_a_question_about_releases_is_recognised(question: str) -> None:
    assert asks_about_releases(question)


@pytest.mark.parametrize("question", [
    "Long reports on our read replica keep getting killed. How can I stop that?",
    "How do I release a savepoint?",  # the verb, not the noun: no "releases", no number
    "How do I total the revenue per calendar month?",
])
def test_a_how_to_question_is_not_about_releases(question: str) -> None:
    assert not asks_about_releases(question)


def ranked() -> list[Page]:
    return [Page("notes-a", "E.4. Release 15.15"), Page("notes-b", "E.5. Release 15.14"),
            Page("guide", "27.4. Hot Standby"), Page("notes-c", "E.17. Release 15.2"), Page("ref", "20.6. Replication")]


def names(pages: list[Page]) -> list[str]:
    return [p.name for p in pages]


HELP_CENTRE = {
    "standby.md": "# Hot Standby\n\n## Handling query conflicts\n\nSet max_standby_streaming_delay so that long "
                  "queries on a standby finish before WAL replay cancels them.\n",
    "release-15-14.md": "# Release 15.14\n\n## Changes\n\nFix standby queries being cancelled by recovery conflicts "
                        "too early. Stop standby queries from being cancelled by recovery conflicts on idle sessions.\n",
    "release-15-2.md": "# Release 15.2\n\n## Changes\n\nStandby queries cancelled by recovery conflicts are now "
                       "reported with the conflicting relation.\n",
}
QUESTION = "How do I stop standby queries being cancelled by recovery conflicts?"


@pytest.fixture
def standby_scope(db: None, tmp_path: Path) -> TenantScope:
    cast = _make_cast("rel-notes")
    for name, text in HELP_CENTRE.items():
        (tmp_path / name).write_text(text)
    ingest_paths(tenant=cast.tenant, paths=[tmp_path])
    return TenantScope(tenant_id=cast.tenant.id, audience_ids=(cast.public_id,))


def searched(scope: TenantScope, question: str) -> list[str]:
    return [c.slug for c in search(scope=scope, query=question, ts_config="english").candidates]


def test_search_puts_the_guide_first_only_when_the_question_is_not_about_releases(
        standby_scope: TenantScope, monkeypatch: pytest.MonkeyPatch) -> None:
    about_a_release = "What changed about standby queries and recovery conflicts in 15.14?"
    promoted, release_asked = searched(standby_scope, QUESTION), searched(standby_scope, about_a_release)
    monkeypatch.setattr("retrieval.search.release_notes_not_first", lambda candidates, question: candidates)
    scored = searched(standby_scope, QUESTION)
    assert scored[0] != "standby"  # the premise: the scorer puts a release note first
    assert promoted == ["standby", *(slug for slug in scored if slug != "standby")]
    assert release_asked == searched(standby_scope, about_a_release)


def test_not_first_brings_the_best_other_candidate_to_the_top_and_keeps_the_rest_in_order() -> None:
    question = "How can I stop queries being cancelled on a standby?"
    promoted = release_notes_not_first(ranked(), question=question)
    assert names(promoted) == ["guide", "notes-a", "notes-b", "notes-c", "ref"]
    assert names(release_notes_not_first(ranked(), question="What changed in 15.14?")) == names(ranked())
    guide_first = [ranked()[2], *ranked()[:2], *ranked()[3:]]
    assert names(release_notes_not_first(guide_first, question=question)) == names(guide_first)
