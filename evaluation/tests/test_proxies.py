"""The reader proxies (evaluation/proxies.py): each detector on what it must flag and on what it
must leave alone, and their aggregation per arm."""

from __future__ import annotations

from evaluation.proxies import (
    answer_claims,
    answer_precision,
    case_proxies,
    cut_sentences,
    dangling_announcements,
    doctest_run_together,
    noise,
    proxy_metrics,
    raw_markup,
    repeated_sentences,
)

SOURCES = [{"number": 1, "source_type": "doc", "slug": "api/errors"},
           {"number": 2, "source_type": "doc", "slug": "billing/fees"}]
EXPECTED = {("doc", "api/errors")}


def test_claims_are_cut_at_their_markers() -> None:
    claims = answer_claims("PL-4031 means insufficient funds. Retry later [1] Fees are 1% [2] [1] Tail")
    assert [(c.text, c.numbers) for c in claims] == [
        ("PL-4031 means insufficient funds. Retry later", (1,)), ("Fees are 1%", (2, 1)), ("Tail", ())]


def test_precision_counts_claims_citing_an_expected_page() -> None:
    assert answer_precision("It means insufficient funds. [1]", SOURCES, EXPECTED) == 1.0
    assert answer_precision("It means insufficient funds. [1] A payout fee is 1%. [2]", SOURCES, EXPECTED) == 0.5
    assert answer_precision("A payout fee is 1%. [2]", SOURCES, EXPECTED) == 0.0


def test_precision_never_credits_an_uncited_claim_and_has_no_value_without_claims() -> None:
    assert answer_precision("It means insufficient funds. [1] Unsourced guess.", SOURCES, EXPECTED) == 0.5
    assert answer_precision("It means insufficient funds. [7]", SOURCES, EXPECTED) == 0.0  # no such source
    assert answer_precision("   ", SOURCES, EXPECTED) is None


def test_a_follow_up_repeating_the_previous_answer_is_caught_however_spaced() -> None:
    previous = "The Growth plan costs 49 EUR a month. [1] Cards from the EEA cost 1.4%. [2]"
    answer = "the growth plan  costs 49 EUR\na month [1] Cards from abroad cost 1% more. [2]"
    assert repeated_sentences(answer, [previous]) == ["the growth plan costs 49 eur a month"]


def test_a_follow_up_answering_the_follow_up_is_clean() -> None:
    previous = "The Growth plan costs 49 EUR a month. [1]"
    assert repeated_sentences("Cards issued outside the EEA cost 1% more. [1]", [previous]) == []
    assert repeated_sentences("Yes. [1]", ["Yes. [1]"]) == []  # too short to call a repeat


def test_raw_markup_flags_fences_tags_and_roles() -> None:
    assert raw_markup("Run it:\n```\nmake run\n``` [1]") == 2
    assert raw_markup("Use <code>time.sleep()</code> to pause. [1]") == 2
    assert raw_markup("See :func:`time.sleep` for details. [1]") == 1


def test_raw_markup_leaves_prose_and_quoted_listings_alone() -> None:
    assert raw_markup("Use time.sleep(2) when 1 < 2 and 3 > 2. [1]") == 0
    assert raw_markup("A template looks like this:\n    <div>{{ name }}</div> [1]") == 0
    assert raw_markup("Note: the default is 4MB. [1]") == 0


def test_dangling_announcement_flags_a_colon_with_nothing_after_it() -> None:
    assert dangling_announcements("The following options are available: [1]") == 1
    assert dangling_announcements("The following options are available: [1] Fees are 1%. [2]") == 1
    assert dangling_announcements("Set these options:\nFees are 1%. [2]") == 1


def test_dangling_announcement_leaves_an_announced_listing_and_inline_colons_alone() -> None:
    assert dangling_announcements("It looks like this:\n    SELECT 1; [1]") == 0
    assert dangling_announcements("Pass these:\n- key\n- secret [1]") == 0
    assert dangling_announcements("Send it in the header: Authorization: Bearer sk_live. [1]") == 0


def test_doctest_prompts_run_together_are_flagged() -> None:
    assert doctest_run_together("For example >>> import time >>> time.sleep(2) [1]") == 2
    assert doctest_run_together(">>> for x in y: ...     print(x) [1]") == 1


def test_doctest_on_lines_of_their_own_and_prose_ellipses_are_clean() -> None:
    assert doctest_run_together(">>> import time\n>>> time.sleep(2)\n... more [1]") == 0
    assert doctest_run_together("Wait a moment ... then retry. [1]") == 0


def test_a_sentence_cut_mid_way_is_flagged() -> None:
    assert cut_sentences("Tuples [2]") == 1
    assert cut_sentences("A list is mutable. [1] Tuples [2]") == 1
    assert cut_sentences("Refunds take 5 to 10 business days, depending on") == 1


def test_finished_sentences_and_listings_are_not_cut() -> None:
    assert cut_sentences("Refunds take 5 days. [1] Really? [2] (See the fees page.) [3]") == 0
    assert cut_sentences("Run this:\n    make run [1]") == 0
    assert cut_sentences("- a bullet item [1]") == 0
    assert cut_sentences("`work_mem` (integer, default 4MB): Sets the memory. [1]") == 0


def test_noise_reports_every_detector() -> None:
    assert noise("Tuples [1]") == {"markup": 0, "dangling": 0, "doctest": 0, "cut": 1}
    assert noise("Clean sentence. [1]") == {"markup": 0, "dangling": 0, "doctest": 0, "cut": 0}


def test_proxies_of_a_case_and_of_an_arm() -> None:
    first = case_proxies(answer="It means insufficient funds. [1] Tuples [2]", sources=SOURCES, answerable=True,
                         expected_pages=EXPECTED, previous_answers=(), follow_up=False)
    assert first["answer_precision"] == 0.5 and first["turn_contamination"] is None and first["noise"]["cut"] == 1
    second = case_proxies(answer="It means insufficient funds today. [1]", sources=SOURCES, answerable=False,
                          expected_pages=(), previous_answers=["It means insufficient funds today. [3]"],
                          follow_up=True)
    assert second["answer_precision"] is None and second["turn_contamination"] is True
    metrics = proxy_metrics([{"id": "a", **first}, {"id": "b", **second}, {"id": "escalated", "action": "escalated"}])
    assert metrics["answer_precision"] == 0.5 and metrics["turn_contamination"] == 1.0
    assert metrics["noise_rate"] == 0.5 and metrics["noise_cut"] == 0.5 and metrics["noise_markup"] == 0.0
    assert proxy_metrics([])["answer_precision"] is None
