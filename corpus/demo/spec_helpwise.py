"""Helpwise, a helpdesk SaaS: changelog, resolved tickets, eval anchors, and the tenant."""

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
from corpus.demo.spec_helpwise_docs import DOCS_PRODUCT
from corpus.demo.spec_helpwise_docs2 import DOCS_WORKSPACE

CHANGELOG: tuple[ChangelogEntry, ...] = (
    ChangelogEntry("CL-2024-10", "Side conversations", "2024-10-08", "v4.8.0", "side conversations", (
        Section("Talking to other teams", "notes", facts=(
            F("Agents can open up to [[ten side conversations]] per ticket, by email or with another team.",
              "Can I ask another department about a ticket without the customer seeing it?"),
        )),
    )),
    ChangelogEntry("CL-2024-12", "Desktop app 5.0", "2024-12-03", "v5.0.0", "the desktop app", (
        Section("New system requirements", "notes", facts=(
            F("The desktop app now needs [[macOS 13]] or Windows 11.",
              "Why won't the desktop app install on my older Mac?"),
        )),
        Section("Offline drafts", "notes", notes=("Replies typed while offline are kept and sent on reconnect.",)),
    )),
    ChangelogEntry("CL-2025-02", "Bulk editing", "2025-02-11", "v5.1.1", "bulk editing", (
        Section("Larger bulk actions", "notes", facts=(
            F("Bulk edits now apply to up to [[1,000 tickets]] in one action.",
              "How many tickets can I update at once?"),
        )),
    )),
    ChangelogEntry("CL-2025-03", "AI Reply Assist", "2025-03-18", "v5.1.2", "AI-drafted replies", (
        Section("Drafting replies", "notes", facts=(
            F("AI Reply Assist drafts answers in [[eight languages]] from your knowledge base articles.",
              "Which languages does AI Reply Assist write in?"),
        )),
        Section("Availability", "notes", notes=("The feature is sold as an add-on, listed on the add-ons page.",)),
    )),
    ChangelogEntry("CL-2025-05", "File sharing in live chat", "2025-05-13", "v5.2.0", "file sharing in chat", (
        Section("Sharing files", "notes", facts=(
            F("Visitors and agents can now share files of up to [[10 MB]] inside a chat.",
              "Can customers send us files through the chat widget?"),
        )),
    )),
    ChangelogEntry("CL-2025-07", "Larger email attachments", "2025-07-02", "v5.2.3", "email attachments", (
        Section("New attachment size", "notes", facts=(
            F("Inbound emails now accept attachments of up to [[40 MB]] in total.",
              "Did the email attachment limit go up?"),
        )),
    )),
    ChangelogEntry("CL-2025-08", "Survey response webhooks", "2025-08-19", "v5.3.0", "survey webhooks", (
        Section("New event", "notes", facts=(
            F("The new `[[survey.responded]]` event fires as soon as a customer rates a ticket.",
              "Is there a webhook for new satisfaction ratings?"),
        )),
    )),
    ChangelogEntry("CL-2025-09", "Light agent pricing", "2025-09-09", "v5.3.2", "light agent pricing", (
        Section("Beyond the free allowance", "notes", facts=(
            F("Light agents beyond the free allowance now cost [[$5 per month]] each.",
              "What do extra light agents cost?"),
        )),
    ), audience="customer"),
    ChangelogEntry("CL-2025-10", "Abuse auto-block tuning", "2025-10-06", "v5.4.0", "automatic abuse blocking", (
        Section("New trigger", "notes", facts=(
            F("Auto-block now also triggers on [[20 identical messages]] from one sender within a day.",
              "Does auto-block catch senders who repeat the same message?"),
        )),
    ), audience="internal"),
)

TICKETS: tuple[Ticket, ...] = (
    Ticket("T-20417", "Our replies land in spam",
           "Customers keep telling us our replies from Helpwise end up in their junk folder, even for people who "
           "have written to us for years.",
           "Your domain had SPF and DKIM in place, but receiving servers had no policy telling them how to treat "
           "your messages.", "2025-03-11", (
               F("Publish a [[DMARC record]] for your sending domain; once it propagates, replies reach the inbox.",
                 "What else should we set up besides SPF and DKIM so emails are not marked as spam?"),
           )),
    Ticket("T-20433", "Chat widget missing in Safari",
           "The chat bubble shows in Chrome and Firefox but never in Safari on our marketing site.",
           "The site's content security policy blocked the widget script in Safari.", "2025-04-02", (
               F("Allow [[https://widget.helpwise.example]] in the script-src directive of the policy.",
                 "Why does the chat widget not appear on our site in Safari?"),
           )),
    Ticket("T-20451", "Ticket closed while we were waiting on a supplier",
           "A ticket closed itself while we were waiting for a supplier, and the customer thought we gave up.",
           "The ticket was in Pending, so the auto-close timer ran.", "2025-04-24", (
               F("Tag the ticket with `[[hold-autoclose]]` to pause the timer while you wait on a third party.",
                 "How do I stop a ticket from closing itself while we wait for someone else?"),
           )),
    Ticket("T-20468", "Deleted ticket needs to come back",
           "An agent deleted the wrong ticket this morning. Is it gone for good?",
           "Deleted tickets are not removed immediately.", "2025-05-06", (
               F("Restore it from [[Admin > Trash]], which lists recently deleted tickets.",
                 "Where do I find tickets that were deleted?"),
           )),
    Ticket("T-20472", "API updates fail with a lock error",
           "Our integration cannot update tickets during the day; it works fine at night.",
           "Agents were keeping ticket tabs open, and each open tab holds an edit lock.", "2025-05-27", (
               F("Locks are released after [[two minutes of inactivity]], so retry after a short pause.",
                 "How long does a ticket edit lock last?"),
           )),
    Ticket("T-20489", "Single sign-on login loop",
           "Since Monday our agents are sent back to the login page after signing in with our identity provider.",
           "The identity provider had rotated its signing certificate.", "2025-06-16", (
               F("Upload the new [[X.509 signing certificate]] under Admin, then Security, then SSO.",
                 "Our agents are stuck in an SSO login loop. What should we check?"),
           )),
    Ticket("T-20495", "Invoice shows more seats than agents",
           "We deactivated two agents last week, yet the invoice still shows their seats.",
           "Deactivation frees the seat for reuse but does not shorten the current billing cycle.", "2025-07-08", (
               F("A deactivated agent keeps their seat until [[the end of the billing cycle]].",
                 "Why am I still billed for agents I deactivated?"),
           )),
    Ticket("T-20502", "Webhook stopped firing",
           "Our webhook stopped delivering events two days ago and nothing shows up on our server.",
           "The endpoint had been switched off after repeated failures during your server migration.",
           "2025-08-04", (
               F("Turn it back on under [[Admin > Webhooks > Re-enable]] once the server answers again.",
                 "How do I turn a disabled webhook back on?"),
           )),
    Ticket("T-20510", "Full data export before cancellation",
           "A customer who is cancelling wants a complete export of their tickets before the workspace closes.",
           "Internal note: the self-service export leaves out side conversations.", "2025-09-01", (
               F("Run the [[full-export]] admin tool, which includes side conversations and attachments.",
                 "How do we give a cancelling customer a complete export?"),
           ), audience="internal"),
)

HELPWISE = TenantSpec(
    slug="helpwise",
    name="Helpwise",
    domain="a helpdesk SaaS",
    docs=DOCS_PRODUCT + DOCS_WORKSPACE,
    changelog=CHANGELOG,
    tickets=TICKETS,
    conflicts=(
        Conflict(
            id="email-attachment-size",
            note="channels/email says attachments up to 25 MB; changelog CL-2025-07 says 40 MB",
            match="attachment",
            documents=(DocRef("doc", "channels/email"), DocRef("changelog", "CL-2025-07")),
            literals=("25 MB", "40 MB"),
            question="How large can email attachments be when customers write to our Helpwise address?",
        ),
    ),
    stale=(
        StaleQuestion(
            question="For how long does Helpwise retain closed tickets?",
            current=DocRef("doc", "admin/data-retention"),
            heading="Closed tickets",
            current_literal="540 days",
            outdated_literal="365 days",
        ),
    ),
    abstain=(
        AbstainQuestion("Does Helpwise have a native integration with Salesforce?", ("salesforce",)),
        AbstainQuestion("Can we run Helpwise on our own servers on-premises?", ("on-prem", "self-host")),
        AbstainQuestion("Is there a discount for nonprofit organizations?", ("nonprofit", "non-profit", "charity")),
        AbstainQuestion("Can Helpwise automatically translate incoming tickets?", ("translat",)),
    ),
)
