"""PayLane, a payments API company: changelog, resolved tickets, eval anchors, and the tenant."""

from __future__ import annotations

from corpus.demo.spec import (
    AbstainQuestion,
    ChangelogEntry,
    Conflict,
    DocRef,
    F,
    Section,
    StaleQuestion,
    TenantSpec,
    Ticket,
)
from corpus.demo.spec_paylane_docs import DOCS_API
from corpus.demo.spec_paylane_docs2 import DOCS_ACCOUNT, DOCS_MONEY

CHANGELOG: tuple[ChangelogEntry, ...] = (
    ChangelogEntry("CL-2024-11", "Dashboard exports and dark mode", "2024-11-12", "v2.1.0", "dashboard exports", (
        Section("Larger CSV exports", "notes", facts=(
            F("Exports from any list view now hold up to [[1,000,000 rows]] per file.",
              "Is there a row limit when I export payments to CSV?"),
        )),
        Section("Dark mode", "notes", notes=("The dashboard follows your operating system's colour scheme.",)),
    )),
    ChangelogEntry("CL-2025-01", "Idempotency on every write", "2025-01-20", "v2.2.0", "idempotent requests", (
        Section("Wider coverage", "notes", facts=(
            F("Idempotency keys are now honoured on [[every POST endpoint]], including refunds and payouts.",
              "Can I use idempotency keys when creating refunds?"),
        )),
    )),
    ChangelogEntry("CL-2025-02", "Instant payouts in Canada", "2025-02-18", "v2.2.3", "instant payouts", (
        Section("Canadian debit cards", "notes", facts=(
            F("Instant payouts now reach Canadian debit cards, with a [[C$0.50 minimum fee]] per payout.",
              "Are instant payouts available in Canada?"),
        )),
    )),
    ChangelogEntry("CL-2025-03", "Python SDK 4.2 and Node SDK 3.8", "2025-03-14", "v2.3.0", "the client libraries", (
        Section("New in the Python library", "notes", facts=(
            F("The Python library gains [[async support]] through a separate AsyncPayLane client.",
              "Does the Python SDK support asyncio?"),
        )),
        Section("Breaking changes", "notes", facts=(
            F("Support for [[Python 3.8]] has been dropped from the Python library.",
              "Why did the SDK stop installing on my older Python?"),
        )),
    )),
    ChangelogEntry("CL-2025-04", "API version 2025-04-15", "2025-04-15", "v2.3.1", "the new API version", (
        Section("Response changes", "notes", facts=(
            F("Charge objects now always include `[[amount_captured]]`, even when nothing has been captured yet.",
              "Why do charges suddenly have an amount_captured field?"),
        )),
        Section("Upgrading", "steps", notes=("Test the new version in the sandbox by sending the version header.",)),
    )),
    ChangelogEntry("CL-2025-05", "Dispute evidence through the API", "2025-05-06", "v2.3.4", "dispute evidence", (
        Section("New endpoint", "notes", facts=(
            F("Evidence can now be uploaded with `[[POST /v2/disputes/:id/evidence]]` instead of the dashboard only.",
              "Can I submit chargeback evidence programmatically?"),
        )),
    )),
    ChangelogEntry("CL-2025-06", "Webhook delivery improvements", "2025-06-10", "v2.4.0", "webhook deliveries", (
        Section("Longer retry schedule", "notes", facts=(
            F("Failed webhook deliveries now get up to [[8 retries]], spread over three days instead of one.",
              "Did the webhook retry schedule change?"),
        )),
        Section("Delivery attempts view", "notes", facts=(
            F("A new [[Delivery attempts]] tab lists each try with its response status and latency.",
              "Where can I see the individual webhook delivery attempts?"),
        )),
    )),
    ChangelogEntry("CL-2025-07", "Burst capacity for Scale accounts", "2025-07-08", "v2.4.2", "burst capacity", (
        Section("Short bursts", "notes", facts=(
            F("Scale accounts may now burst to [[750 requests per second]] for up to ten seconds.",
              "Can a Scale account briefly go over its rate limit?"),
        )),
    ), audience="customer"),
    ChangelogEntry("CL-2025-08", "Fraud rules engine, third generation", "2025-08-05", "v2.5.0", "fraud rules", (
        Section("Auto-approval", "notes", facts=(
            F("The review queue now auto-approves charges from merchants with [[no disputes in six months]].",
              "Which merchants skip manual fraud review now?"),
        )),
    ), audience="internal"),
)

TICKETS: tuple[Ticket, ...] = (
    Ticket("T-10231", "Webhook signature check fails after our deploy",
           "Since yesterday's release every webhook we receive fails signature verification. The endpoint secret "
           "has not changed and we copied it again from the dashboard to be sure.",
           "Your new framework version parses the JSON body before your handler sees it, so the bytes being "
           "signed are no longer the bytes you verify.", "2025-03-03", (
               F("Always compute the signature over the [[raw request body]], before any JSON parsing.",
                 "Why does my webhook signature verification fail although the secret is correct?"),
           )),
    Ticket("T-10244", "Subscription renewals failing for insufficient funds",
           "A growing number of monthly renewals fail because the customer's card has no money on it at the "
           "time of billing. Most of them would pay a few days later.",
           "Insufficient-funds declines are often temporary, so a later attempt frequently succeeds.",
           "2025-03-19", (
               F("Turn on [[smart retries]] in the subscription settings to reattempt such charges over the "
                 "following week.", "Can PayLane try a failed subscription charge again later?"),
           )),
    Ticket("T-10257", "Payout did not arrive on a public holiday",
           "We expected our payout on Monday, but it only appeared on Tuesday. Nothing changed in our settings.",
           "Monday was a bank holiday in your settlement country.", "2025-04-22", (
               F("Payouts are not sent on [[bank holidays]]; they move to the next business day.",
                 "Why did my payout arrive a day late?"),
           )),
    Ticket("T-10262", "HTTP 429 during a load test",
           "We ran a load test before a big sale and most requests were rejected with status 429.",
           "Load tests belong in the sandbox, where the limits are lower by design.", "2025-05-07", (
               F("For planned peaks we can lift the limit temporarily once you submit the [[load test request form]].",
                 "How can I run a load test without being throttled?"),
           )),
    Ticket("T-10270", "Refund pending for two weeks",
           "A refund we issued has shown as pending for over two weeks and the customer is getting impatient.",
           "The customer's card had been closed by the issuer after the original purchase.", "2025-05-28", (
               F("Refunds to closed cards come back as a `[[refund.failed]]` event, and the money returns to your "
                 "balance so you can repay the customer another way.",
                 "What happens if I refund to a card that no longer exists?"),
           )),
    Ticket("T-10281", "Customers charged twice after a timeout",
           "Our checkout timed out while waiting for the API, our code sent the request again, and some customers "
           "were charged twice.", "The second request was sent without any deduplication key.", "2025-06-12", (
               F("Reuse the same [[idempotency key]] when resending a request, and PayLane returns the first result.",
                 "How do I stop double charges when my checkout resends a request?"),
           )),
    Ticket("T-10295", "Company address missing from invoices",
           "Our accounting team needs our registered company address on the monthly invoice.",
           "Invoice details are separate from the business profile used for verification.", "2025-07-01", (
               F("Add the address under [[Settings > Billing > Invoice details]]; it appears from the next invoice.",
                 "How do I get my company address printed on invoices?"),
           )),
    Ticket("T-10302", "Seller stuck in verification",
           "One of our marketplace sellers has been waiting for verification for more than a week.",
           "The proof of address the seller uploaded was too old to be accepted.", "2025-07-15", (
               F("Ask the seller to upload a [[bank statement issued within the last three months]].",
                 "What document helps a seller get through verification?"),
           )),
    Ticket("T-10318", "Agency asks for a partner discount",
           "An agency that manages stores for several merchants asked whether they can get a discount.",
           "Internal note: agencies below the partner tier do not qualify for the standard partner code.",
           "2025-08-11", (
               F("Offer the smaller code [[PLN-AGENCY-15]] and log the request for the partner team.",
                 "What discount can we give a small agency?"),
           ), audience="internal"),
)

PAYLANE = TenantSpec(
    slug="paylane",
    name="PayLane",
    domain="a payments API company",
    docs=DOCS_API + DOCS_MONEY + DOCS_ACCOUNT,
    changelog=CHANGELOG,
    tickets=TICKETS,
    conflicts=(
        Conflict(
            id="webhook-retries",
            note="guides/webhooks says 5 retries; changelog CL-2025-06 says 8 retries",
            match="retries",
            documents=(DocRef("doc", "guides/webhooks"), DocRef("changelog", "CL-2025-06")),
            literals=("5 retries", "8 retries"),
            question="How many times does PayLane retry a webhook delivery that failed?",
        ),
    ),
    stale=(
        StaleQuestion(
            question="How much does the Growth plan cost per month?",
            current=DocRef("doc", "billing/pricing"),
            heading="Plans and monthly fees",
            current_literal="$35/month",
            outdated_literal="$29/month",
        ),
    ),
    abstain=(
        AbstainQuestion("Can I receive my payouts in Bitcoin or another cryptocurrency?", ("bitcoin", "crypto")),
        AbstainQuestion("Does PayLane offer business loans or merchant cash advances?", ("loan", "cash advance")),
        AbstainQuestion("Do you sell card readers for taking payments in my shop?", ("card reader", "terminal")),
        AbstainQuestion("Is there a ready-made PayLane plugin for Shopify?", ("shopify", "plugin")),
    ),
)
