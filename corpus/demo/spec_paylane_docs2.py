"""PayLane documentation pages, part two: money movement, billing, security, accounts, internal."""

from __future__ import annotations

from corpus.demo.spec import DocSpec, F, Section

DOCS_MONEY: tuple[DocSpec, ...] = (
    DocSpec("guides/payouts", "Payouts", "payouts to your bank account", sections=(
        Section("Payout schedule", "reference", facts=(
            F("Standard payouts follow a [[T+2]] schedule, so funds captured on a Monday land on Wednesday.",
              "How quickly is money from a sale paid out to me?"),
        )),
        Section("Minimum balance", "reference", facts=(
            F("A payout is only created once your available balance reaches [[$25]].",
              "Is there a minimum balance before a payout is sent?"),
        )),
        Section("Instant payouts", "notes", facts=(
            F("Instant payouts reach eligible debit cards within minutes for a fee of [[1.5%]] of the amount.",
              "How much do instant payouts cost?"),
        )),
        Section("Failed payouts", "troubleshooting", facts=(
            F("A bank rejection is reported with error [[PL-6021]]; once you correct the account details, the "
              "payout is attempted again automatically.", "My payout failed. What should I do?"),
        )),
    )),
    DocSpec("guides/3d-secure", "3D Secure and strong customer authentication", "3D Secure authentication", sections=(
        Section("How authentication fits into checkout", "overview", notes=(
            "The issuer decides whether to challenge the cardholder; PayLane passes along the signals it has.",
            "Frictionless approvals look exactly like ordinary payments to your customer.",
        )),
        Section("Choosing a mode", "reference", facts=(
            F("Set `[[three_ds_mode]]` on the payment intent to always, adaptive or never.",
              "How do I force 3D Secure on every payment?"),
            F("Out of the box the mode is [[adaptive]], which requests a challenge only for risky payments.",
              "What does PayLane do about 3DS if I configure nothing?"),
        )),
        Section("Exemptions", "notes", facts=(
            F("Payments under [[€30]] can be sent under the low-value exemption, although the issuer may still "
              "insist on a challenge.", "Are small payments exempt from strong customer authentication?"),
        )),
    )),
    DocSpec("guides/saved-cards", "Saving cards for later", "saved payment methods", sections=(
        Section("Creating a card token", "steps", facts=(
            F("Saved cards are represented by ids starting with `[[card_tok_]]`, which you can charge again without "
              "asking the customer to type their details.", "What does the id of a saved card look like?"),
        )),
        Section("Keeping cards up to date", "notes", facts=(
            F("The account updater refreshes expired or reissued cards [[once a month]].",
              "What happens to a stored card when it expires?"),
        )),
        Section("Removing saved cards", "notes", facts=(
            F("A detached card is erased from the vault after [[14 days]].",
              "If I delete a customer's saved card, when is it really gone?"),
        )),
    )),
    DocSpec("guides/currencies", "Currencies and conversion", "multi-currency payments", sections=(
        Section("Supported currencies", "reference", facts=(
            F("You can present prices and charge cards in [[135 currencies]].",
              "How many currencies can I accept payments in?"),
        )),
        Section("Conversion fees", "reference", facts=(
            F("When the charge currency differs from your settlement currency, a [[1.2%]] conversion fee applies.",
              "Is there a fee for currency conversion?"),
        )),
        Section("Settlement currencies", "notes", facts=(
            F("Payouts can settle in USD, EUR, GBP, CAD or AUD, chosen with the `[[settlement_currency]]` account "
              "setting.", "Can I be paid out in euros?"),
        )),
    )),
    DocSpec("billing/pricing-2024", "Pricing (2024)", "plan prices and card fees", version="v2024.1",
            effective_date="2024-01-01", sections=(
        Section("Plans and monthly fees", "reference", facts=(
            F("The Growth plan costs [[$29/month]] and includes the dashboard, API access and email support.",
              "How much does the Growth plan cost?"),
        ), notes=("The Starter plan has no monthly fee and suits businesses that are just getting started.",)),
        Section("Card processing fees", "reference", facts=(
            F("Domestic card payments cost [[2.9% + $0.30]] per successful charge.",
              "What does PayLane charge per card payment?"),
        )),
        Section("What every plan includes", "notes", notes=(
            "Every plan includes fraud screening, the hosted checkout page and access to the sandbox.",
            "Volume discounts are negotiated individually with the sales team.",
        )),
    )),
    DocSpec("billing/pricing", "Pricing", "plan prices and card fees", version="v2025.1", effective_date="2025-01-01",
            supersedes="billing/pricing-2024", sections=(
        Section("Plans and monthly fees", "reference", facts=(
            F("Since January 2025 the Growth plan costs [[$35/month]], with the dashboard, API access and email "
              "support included.", "What is the monthly price of the Growth plan now?"),
            F("The Scale plan costs [[$249/month]] and adds higher rate limits and a named account manager.",
              "How much is the Scale plan?"),
        ), notes=("The Starter plan still has no monthly fee.",)),
        Section("Card processing fees", "reference", facts=(
            F("Domestic card payments cost [[2.7% + $0.30]] per successful charge on every plan.",
              "What is the fee per card transaction?"),
            F("Cards issued outside your country add a [[1% surcharge]].",
              "Is there an extra fee for foreign cards?"),
        )),
        Section("Changing plans", "notes", facts=(
            F("Downgrades take effect at the [[end of the current billing period]].",
              "If I downgrade my plan, when does the change apply?"),
        ), notes=("Upgrades apply immediately and are prorated, as described on the invoices page.",)),
    )),
    DocSpec("billing/invoices", "Invoices", "invoices and billing statements", sections=(
        Section("When invoices are issued", "reference", facts=(
            F("PayLane issues the subscription invoice on the [[first business day of each month]].",
              "When do I receive my monthly invoice?"),
        )),
        Section("Payment terms", "reference", facts=(
            F("Invoices settled by bank transfer are due [[Net 30]].",
              "How long do I have to pay an invoice by bank transfer?"),
        )),
        Section("Proration", "notes", facts=(
            F("Mid-cycle upgrades are prorated to the day, and the difference shows up as a [[proration line item]] "
              "on the next invoice.", "How am I billed if I upgrade in the middle of a month?"),
        )),
        Section("Downloading past invoices", "steps", steps=(
            "Open Settings, then Billing, then Invoice history.",
            "Pick the month you need and choose Download PDF.",
        ), facts=(
            F("Past invoices remain downloadable for [[seven years]].", "How far back can I download invoices?"),
        )),
    )),
    DocSpec("billing/plans-and-skus", "Add-ons and SKUs", "paid add-ons", sections=(
        Section("Available add-ons", "reference", facts=(
            F("[[SKU-77]] is Advanced Reporting, which adds scheduled exports and custom dashboards for $40/month.",
              "What is the SKU-77 line on my invoice?"),
            F("[[SKU-81]] is a dedicated IP address for outgoing webhook traffic, billed at $60/month.",
              "Can I get a fixed IP address for webhooks?"),
            F("[[SKU-90]] is Premium Support, with a guaranteed response time for urgent tickets.",
              "Which add-on gives me faster support?"),
        )),
        Section("Adding an add-on", "steps", steps=(
            "Go to Settings, then Billing, then Add-ons.",
            "Choose the add-on and confirm the price shown.",
            "The add-on is active as soon as the confirmation screen appears.",
        )),
        Section("Removing an add-on", "notes", facts=(
            F("A removed add-on stays active until the period ends, and there are [[no partial refunds]].",
              "Do I get money back if I cancel an add-on halfway through the month?"),
        )),
    )),
    DocSpec("billing/taxes", "Sales tax and VAT", "tax on PayLane fees", sections=(
        Section("Adding your tax ID", "steps", facts=(
            F("Enter your VAT number in the `[[tax_id]]` field under Settings, then Billing.",
              "Where do I enter my VAT number?"),
        )),
        Section("Reverse charge", "notes", facts=(
            F("EU businesses with a validated VAT number are invoiced under the [[reverse charge]] mechanism, so "
              "no VAT is added.", "Will you add VAT to my invoices if I am an EU company?"),
        )),
        Section("US sales tax", "notes", facts=(
            F("PayLane collects sales tax on its fees in [[22 US states]].", "Do you charge US sales tax?"),
        )),
    )),
    DocSpec("connect/onboarding", "Onboarding connected accounts", "connected account onboarding", sections=(
        Section("Creating connected accounts", "steps", facts=(
            F("Marketplaces should create sellers with the account type set to [[express]], which gives them a "
              "hosted onboarding flow.", "Which account type should my marketplace use for sellers?"),
        )),
        Section("Verification", "reference", facts=(
            F("Identity checks on a new seller usually finish within [[3 business days]].",
              "How long does seller verification take?"),
        )),
        Section("Required documents", "notes", facts=(
            F("Sellers processing more than [[$10,000]] in a rolling month must upload a government ID.",
              "When do my sellers have to upload an ID document?"),
        )),
    )),
    DocSpec("connect/platform-fees", "Platform fees", "platform application fees", sections=(
        Section("Taking a fee", "steps", facts=(
            F("Set `[[application_fee_percent]]` on the charge to keep a share of each sale.",
              "How do I take a cut of every marketplace sale?"),
        )),
        Section("Fee limits", "reference", facts=(
            F("The platform fee cannot exceed [[20% of the charge amount]].",
              "What is the maximum fee my platform can keep?"),
        )),
        Section("Refunding platform fees", "notes", facts=(
            F("When a charge is refunded, your fee is returned only if you pass `[[refund_application_fee=true]]`.",
              "Is my platform fee refunded when a seller refunds a buyer?"),
        )),
    )),
)

DOCS_ACCOUNT: tuple[DocSpec, ...] = (
    DocSpec("security/pci", "PCI compliance", "PCI compliance", sections=(
        Section("Our certification", "overview", facts=(
            F("PayLane is audited every year as a [[PCI DSS Level 1]] service provider.",
              "Is PayLane PCI compliant?"),
        )),
        Section("Your responsibilities", "notes", facts=(
            F("Merchants who collect cards with hosted fields qualify for the shortest questionnaire, [[SAQ A]].",
              "Which PCI self-assessment do I need to fill in?"),
        )),
        Section("Transport security", "reference", facts=(
            F("The API refuses connections that negotiate anything older than [[TLS 1.2]].",
              "What TLS version does my server need to call the API?"),
        )),
    )),
    DocSpec("security/data-retention", "Data retention", "data retention", sections=(
        Section("Transaction records", "reference", facts=(
            F("Charge, refund and payout records are kept for [[7 years]] to meet financial record-keeping rules.",
              "How long do you keep my transaction history?"),
        )),
        Section("API request logs", "reference", facts=(
            F("Request logs shown in the dashboard are kept for [[90 days]].",
              "How far back can I look at API request logs?"),
        )),
        Section("Deleting customer data", "steps", steps=(
            "Open the customer record and choose Erase personal data.",
            "Confirm the request; the customer object is replaced by an anonymous placeholder.",
        ), facts=(
            F("Erasure requests complete within [[30 calendar days]].",
              "How do I delete a customer's personal data under GDPR?"),
        )),
    )),
    DocSpec("account/enterprise-sla", "Enterprise service level agreement", "the enterprise SLA",
            audience="customer", effective_date="2025-01-01", sections=(
        Section("Uptime commitment", "reference", facts=(
            F("The payments API is covered by a [[99.95%]] monthly uptime commitment.",
              "What uptime does PayLane guarantee?"),
        ), notes=(
            "Scheduled maintenance announced in advance on the status page does not count as downtime.",
            "The dashboard is not part of the commitment; only API availability is measured.",
        )),
        Section("Service credits", "reference", facts=(
            F("If a month falls short of the commitment, you receive a credit of [[10% of the monthly fee]].",
              "What do I get if PayLane misses its uptime target?"),
        )),
        Section("Claiming a credit", "steps", facts=(
            F("Claims must reach us within [[30 days of the incident]], with the affected request ids attached.",
              "How long do I have to claim an SLA credit?"),
        )),
    )),
    DocSpec("account/dedicated-support", "Dedicated support for Scale customers", "dedicated support",
            audience="customer", sections=(
        Section("Response times", "reference", facts=(
            F("Severity 1 incidents receive a first response within [[30 minutes]], at any hour.",
              "How fast does support respond when payments are down?"),
        )),
        Section("Your account team", "overview", facts=(
            F("Every Scale account is assigned a named [[technical account manager]].",
              "Do I get a dedicated contact person?"),
        )),
        Section("Reaching us urgently", "steps", facts=(
            F("Urgent requests go to [[priority@paylane.example]], which pages the duty engineer.",
              "Which email address should I use for urgent support?"),
        )),
    )),
    DocSpec("internal/escalation-runbook", "Escalation runbook", "payment incident escalation",
            audience="internal", sections=(
        Section("When to escalate", "overview", facts=(
            F("Escalate when PL-5003 errors exceed [[2% of traffic for ten minutes]].",
              "When should an agent escalate a processor timeout incident?"),
        )),
        Section("Who to call", "steps", facts=(
            F("Call the payments on-call line at [[+1-415-555-0142]].", "What is the payments on-call phone number?"),
            F("Page the [[pl-payments-oncall]] rotation in the paging tool at the same time.",
              "Which pager rotation handles payment incidents?"),
        )),
        Section("Keeping customers informed", "notes", facts=(
            F("The status page must show a first update within [[a quarter of an hour]] of declaring an incident.",
              "How soon must the status page be updated during an incident?"),
        )),
    )),
    DocSpec("internal/discount-codes", "Partner discount codes", "partner discounts", audience="internal", sections=(
        Section("Active codes", "reference", facts=(
            F("Code [[PLN-PARTNER-20]] gives agency partners twenty percent off the Scale plan for a year.",
              "Is there a discount code for agency partners?"),
        )),
        Section("Approval rules", "steps", facts=(
            F("Any discount above [[25%]] needs written approval from the head of sales.",
              "Who has to approve a bigger discount?"),
        )),
        Section("Handling misuse", "troubleshooting", notes=(
            "Codes shared publicly are revoked, and existing subscriptions keep the discount until renewal.",
        )),
    )),
    DocSpec("internal/fraud-review", "Manual fraud review", "manual fraud review", audience="internal", sections=(
        Section("Review triggers", "reference", facts=(
            F("Any single charge above [[$5,000]] from an account younger than a month goes to manual review.",
              "Which payments get held for manual review?"),
        )),
        Section("Review deadline", "reference", facts=(
            F("Reviewers must approve or refuse a held charge within [[4 hours]].",
              "How long does a manual fraud review take?"),
        )),
        Section("Releasing held funds", "steps", steps=(
            "Open the review queue and check the buyer's history and device signals.",
            "Approve the charge, or refuse it and record the reason.",
            "Leave a note on the merchant account so the next reviewer has context.",
        )),
    )),
    DocSpec("troubleshooting/declined-payments", "Why payments are declined", "declined payments", sections=(
        Section("Reading the decline reason", "overview", facts=(
            F("The `[[decline_code]]` field on a failed charge carries the issuer's stated reason.",
              "Where can I see why a card was declined?"),
        )),
        Section("Common decline codes", "reference", facts=(
            F("`[[do_not_honor]]` is a generic refusal, and only the cardholder's bank can explain it.",
              "The decline says do not honor. What does that mean?"),
            F("`[[expired_card]]` means the expiry date has passed; ask the customer for a current card.",
              "What should I tell a customer whose card is out of date?"),
        )),
        Section("Reducing declines", "notes", notes=(
            "Collecting the full billing address and enabling the account updater both lower decline rates.",
            "Retrying a hard decline with the same card rarely succeeds and can annoy the issuer.",
        )),
    )),
)
