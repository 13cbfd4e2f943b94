"""Website sync against a real site on loopback (issue 19 item 3): what is ingested, what is
skipped and why, conditional requests on the second run, archiving of what disappeared."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connections

from conftest import Cast
from corpus.encoders.embedding import Encoder
from corpus.models import Document, WebPage, WebSource
from corpus.tests.helpers import documents
from corpus.tests.websync_site import Page, Site, html, serve
from corpus.sources.websync import crawl
from corpus.sources.websync.sources import websource_save
from corpus.sources.websync.sync import WEBSYNC_LOCK_NAMESPACE, websync_run
from tenants.models import Audience
from tenants.rls import tenant_context

pytestmark = pytest.mark.django_db


@pytest.fixture
def loopback(settings: Any) -> None:
    settings.WEBSYNC_ALLOW_PRIVATE_ADDRESSES = True
    settings.WEBSYNC_DELAY_SECONDS = 0.0


def sitemap(site: Site, paths: list[str]) -> Page:
    entries = "".join(f"<url><loc>{site.base}{p}</loc></url>" for p in paths)
    return Page(body=f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                     f"{entries}</urlset>", content_type="application/xml")


def make_source(cast: Cast, url: str, *, kind: str, **values: Any) -> WebSource:
    audience = Audience.objects.get(tenant=cast.tenant, slug="public")
    return websource_save(tenant=cast.tenant, audience=audience,
                          values={"start_url": url, "kind": kind, "page_limit": 50, "schedule": "manual", **values})


def pages(cast: Cast, source: WebSource) -> dict[str, WebPage]:
    with tenant_context(cast.tenant.id):
        return {p.url.split("/", 3)[3]: p for p in WebPage.objects.filter(tenant=cast.tenant, source=source)}


def web_docs(cast: Cast, site: Site) -> dict[str, Document]:
    prefix = crawl.slug_path(site.base + "/").rsplit("/", 1)[0] + "/"
    return {slug[len(prefix):]: d for (_, slug), d in documents(cast.tenant).items() if slug.startswith(prefix)}


def the_site() -> Site:
    site = Site()
    site.pages.update({
        "/robots.txt": Page(body="User-agent: *\nDisallow: /private/\n", content_type="text/plain"),
        "/": Page(body=html("Home", "Welcome to the Acme help centre for anvils and rockets.")),
        "/guide": Page(body=html("Guide", "Anvils are delivered in crates of twelve by freight."),
                       validator="last-modified"),
        "/dup": Page(body=html("Guide copy", "Anvils are delivered in crates of twelve by freight.",
                               canonical="/guide")),
        "/old": Page(status=301, location="/moved"),
        "/moved": Page(body=html("Moved", "Rocket skates were renamed to jet boots in 2024.")),
        "/private/secret": Page(body=html("Secret", "The anvil margin is forty percent.")),
        "/blog/post": Page(body=html("Blog", "A blog post the source excludes.")),
        "/changing": Page(body=html("Prices", "An anvil costs forty dollars.")),
        "/vanishing": Page(body=html("Coyote", "Coyote discounts apply on Tuesdays only.")),
        "/image.png": Page(body="PNG", content_type="image/png"),
    })
    return site


LISTED = ["/", "/guide", "/dup", "/old", "/private/secret", "/blog/post", "/missing", "/changing", "/vanishing",
          "/image.png"]


def test_a_sitemap_sync_ingests_skips_with_reasons_and_archives_on_the_second_run(
        acme: Cast, encoder: Encoder, loopback: None) -> None:
    with serve(the_site()) as site:
        site.pages["/sitemap.xml"] = sitemap(site, LISTED)
        source = make_source(acme, f"{site.base}/sitemap.xml", kind="sitemap", exclude_patterns="/blog/*")
        first = websync_run(tenant=acme.tenant, source_id=source.pk, encoder=encoder)

        assert sorted(web_docs(acme, site)) == ["changing", "guide", "index", "moved", "vanishing"]
        assert first.added == 5 and first.archived == 0 and first.errors == []
        assert {s["url"].split("/", 3)[3]: s["reason"] for s in first.skipped} == {
            "private/secret": "disallowed by robots.txt",
            "blog/post": "excluded by pattern /blog/*",
            "image.png": "not HTML (image/png)",
        }
        assert site.requests["/private/secret"] == 0 and site.requests["/blog/post"] == 0
        rows = pages(acme, source)
        assert rows["dup"].status == "duplicate" and rows["dup"].canonical_url == f"{site.base}/guide"
        assert rows["old"].canonical_url == f"{site.base}/moved" and "redirected" in rows["old"].last_error
        assert rows["missing"].status == "gone" and rows["missing"].http_status == 404
        moved = web_docs(acme, site)["moved"]
        assert (moved.origin, moved.origin_ref) == ("website", f"{site.base}/moved") and moved.fetched_at
        assert all(ua.startswith("Answerdesk-sync/1.0 (+") for ua in site.user_agents)

        # Between the runs: one page changes, one leaves the sitemap.
        site.pages["/changing"] = Page(body=html("Prices", "An anvil now costs fifty dollars."))
        site.pages["/sitemap.xml"] = sitemap(site, [p for p in LISTED if p != "/vanishing"])
        before = {slug: d.content_hash for slug, d in web_docs(acme, site).items()}
        second = websync_run(tenant=acme.tenant, source_id=source.pk, encoder=encoder)

        # Unchanged pages cost one request each, answered 304 (ETag, Last-Modified, after a redirect).
        assert dict(site.not_modified) == {"/": 1, "/guide": 1, "/dup": 1, "/moved": 1}
        assert second.not_modified == 4 and second.fetched == 1
        assert (second.added, second.changed, second.archived) == (0, 1, 1)
        assert second.gone == [f"{site.base}/missing", f"{site.base}/vanishing"]
        after = web_docs(acme, site)
        assert after["changing"].content_hash != before["changing"]
        assert after["vanishing"].status == "archived"
        assert {s: d.status for s, d in after.items() if s != "vanishing"} == dict.fromkeys(
            ["changing", "guide", "index", "moved"], "active")
        assert pages(acme, source)["vanishing"].last_error == "no longer in the sitemap"
        with tenant_context(acme.tenant.id):
            source.refresh_from_db()
        assert source.last_report is not None
        assert source.last_status == "succeeded" and source.last_report["changed"] == 1


def test_a_start_url_crawl_follows_links_on_its_host_and_archives_an_unlinked_page(
        acme: Cast, encoder: Encoder, loopback: None) -> None:
    site = Site()
    site.pages.update({
        "/robots.txt": Page(status=404),
        "/": Page(body=html("Home", "The help centre index.", links=("/a", "/b", "http://elsewhere.test/x"))),
        "/a": Page(body=html("Alpha", "Alpha explains anvil delivery.", links=("/",))),
        "/b": Page(body=html("Beta", "Beta explains rocket returns.")),
    })
    with serve(site):
        source = make_source(acme, f"{site.base}/", kind="start")
        first = websync_run(tenant=acme.tenant, source_id=source.pk, encoder=encoder)
        assert sorted(web_docs(acme, site)) == ["a", "b", "index"] and first.complete
        assert site.requests["/x"] == 0
        # The home page no longer links to /b; /a is unchanged and answers 304.
        site.pages["/"] = Page(body=html("Home", "The help centre index.", links=("/a",)))
        second = websync_run(tenant=acme.tenant, source_id=source.pk, encoder=encoder)
        assert second.not_modified == 1 and second.archived == 1
        assert web_docs(acme, site)["b"].status == "archived"
        assert pages(acme, source)["b"].last_error == "no longer in the crawl"
        # It comes back: the next sync fetches it in full and restores it.
        site.pages["/"] = Page(body=html("Home", "The help centre index.", links=("/a", "/b")))
        websync_run(tenant=acme.tenant, source_id=source.pk, encoder=encoder)
        assert web_docs(acme, site)["b"].status == "active"


def test_a_page_limit_stops_the_crawl_and_archives_nothing_for_being_unseen(
        acme: Cast, encoder: Encoder, loopback: None) -> None:
    site = Site()
    site.pages.update({
        "/": Page(body=html("Home", "Index of the help centre.", links=("/a", "/b"))),
        "/a": Page(body=html("Alpha", "Alpha explains anvil delivery.")),
        "/b": Page(body=html("Beta", "Beta explains rocket returns.")),
    })
    with serve(site):
        source = make_source(acme, f"{site.base}/", kind="start")
        websync_run(tenant=acme.tenant, source_id=source.pk, encoder=encoder)
        with tenant_context(acme.tenant.id):
            WebSource.objects.filter(pk=source.pk).update(page_limit=1)
        report = websync_run(tenant=acme.tenant, source_id=source.pk, encoder=encoder)
        assert not report.complete and report.stopped == "page limit 1 reached" and report.archived == 0
        assert {d.status for d in web_docs(acme, site).values()} == {"active"}


def test_an_oversized_page_is_cut_off_and_reported(acme: Cast, encoder: Encoder, loopback: None,
                                                   settings: Any) -> None:
    settings.WEBSYNC_MAX_PAGE_BYTES = 2048
    site = Site()
    site.pages["/"] = Page(body=html("Huge", "x " * 5000))
    with serve(site):
        source = make_source(acme, f"{site.base}/", kind="start")
        report = websync_run(tenant=acme.tenant, source_id=source.pk, encoder=encoder)
    [skipped] = report.skipped
    assert skipped["reason"].startswith(f"refused: {site.base}/ declares ") and "over the 2,048-byte limit" in \
        skipped["reason"]
    assert web_docs(acme, site) == {}


def test_slugs_urls_patterns_and_robots_readings() -> None:
    assert crawl.normalize("HTTPS://Help.Acme.test:443/a#top") == "https://help.acme.test/a"
    assert crawl.slug_path("https://help.acme.test/") == "web/help.acme.test/index"
    assert crawl.slug_path("https://help.acme.test/docs/setup.html") == "web/help.acme.test/docs/setup"
    assert crawl.slug_path("http://127.0.0.1:8000/a/../b") .startswith("web/127.0.0.1-8000/a/b-")
    assert crawl.slug_path("https://h.test/p?id=1") != crawl.slug_path("https://h.test/p?id=2")
    assert crawl.pattern_reason("https://h.test/blog/x", include=[], exclude=["/blog/*"]) == \
        "excluded by pattern /blog/*"
    assert crawl.pattern_reason("https://h.test/about", include=["/docs/*"], exclude=[]) == \
        "matches no include pattern"
    assert crawl.pattern_reason("https://h.test/docs/a", include=["/docs/*"], exclude=[]) is None
    page = "https://h.test/page"
    assert crawl.robots_allow(crawl.robots_from(404, b""), page)
    assert not crawl.robots_allow(crawl.robots_from(403, b""), page)
    assert not crawl.robots_allow(crawl.robots_from(503, b""), page)
    assert not crawl.robots_allow(crawl.robots_from(None, b""), page)
    assert not crawl.robots_allow(crawl.robots_from(200, b"User-agent: Answerdesk-sync\nDisallow: /\n"), page)
    assert crawl.robots_delay(crawl.robots_from(200, b"User-agent: *\nCrawl-delay: 3\n")) == 3.0


@pytest.mark.django_db(databases=["default", "owner"])
def test_one_run_per_source_at_a_time(acme: Cast, loopback: None) -> None:
    source = make_source(acme, "http://127.0.0.1:9/", kind="start")
    with connections["owner"].cursor() as other:  # another session, as another worker would hold it
        other.execute("SELECT pg_advisory_lock(%s, %s)", [WEBSYNC_LOCK_NAMESPACE, source.pk])
        try:
            with pytest.raises(RuntimeError, match=f"another sync of web source {source.pk} is running"):
                websync_run(tenant=acme.tenant, source_id=source.pk)
        finally:
            other.execute("SELECT pg_advisory_unlock(%s, %s)", [WEBSYNC_LOCK_NAMESPACE, source.pk])
