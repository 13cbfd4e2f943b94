"""Helpwise documentation pages, part two: self-service, plans, administration, accounts, internal."""

from __future__ import annotations

from corpus.demo.spec import DocSpec, F, Section

DOCS_WORKSPACE: tuple[DocSpec, ...] = (
    DocSpec("guides/knowledge-base", "Knowledge base", "the knowledge base", sections=(
        Section("Publishing articles", "steps", steps=(
            "Write the article in the editor and assign it to a category.",
            "Preview it as a signed-out visitor would see it.",
            "Publish, or schedule it for a later date.",
        ), facts=(
            F("Articles can be offered in [[12 languages]], each with its own URL.",
              "Can our help center have articles in several languages?"),
        )),
        Section("Article limits", "reference", facts=(
            F("The Team plan includes up to [[2,000 articles]]; Business has no cap.",
              "Is there a limit on the number of help center articles?"),
        )),
        Section("Using your own domain", "steps", facts=(
            F("Point a CNAME record for your help center host at [[kb.helpwise.example]].",
              "How do I put the help center on our own domain?"),
        )),
    )),
    DocSpec("guides/satisfaction-surveys", "Customer satisfaction surveys", "CSAT surveys", sections=(
        Section("When surveys are sent", "reference", facts=(
            F("The survey email goes out [[a day after a ticket is solved]], unless the customer replied again.",
              "When does the customer get the satisfaction survey?"),
        )),
        Section("Rating scale", "reference", facts=(
            F("Customers answer on a scale from [[1 to 5 stars]] and may add a comment.",
              "What rating scale do the surveys use?"),
        )),
        Section("Acting on feedback", "notes", notes=(
            "Low ratings can trigger an automation rule that assigns the ticket to a team lead.",
            "Comments are shown on the ticket so the agent can learn from them.",
        )),
    )),
    DocSpec("guides/reporting", "Reports and analytics", "reports and analytics", sections=(
        Section("Data freshness", "reference", facts=(
            F("Dashboards are recalculated [[every 10 minutes]].", "How up to date are the reports?"),
        )),
        Section("Exporting reports", "steps", facts=(
            F("An export can cover up to [[24 months]] of history.", "How far back can I export report data?"),
        )),
        Section("Custom reports", "notes", facts=(
            F("Building your own reports requires the [[Business plan]].",
              "Which plan do I need for custom reports?"),
        )),
    )),
    DocSpec("guides/tags-and-fields", "Tags and custom fields", "tags and custom fields", sections=(
        Section("Custom field types", "reference", facts=(
            F("Fields can be dropdowns, checkboxes, dates, numbers or [[regex-validated text]].",
              "Can a custom field check the format of what agents type?"),
        )),
        Section("Field limits", "reference", facts=(
            F("A workspace can define up to [[100 custom fields]].", "How many custom fields are allowed?"),
        )),
        Section("Tag rules", "notes", facts=(
            F("Tags are stored in lowercase and may be up to [[64 characters]] long.",
              "Is there a length limit for tags?"),
        )),
    )),
    DocSpec("plans/pricing", "Plans and pricing", "Helpwise plans", version="v5.1.0", effective_date="2025-02-01",
            sections=(
        Section("Plan prices", "reference", facts=(
            F("The Team plan costs [[$24 per agent per month]] when billed monthly.",
              "How much does the Team plan cost?"),
            F("The Business plan costs [[$49 per agent per month]].", "What is the price of Business?"),
            F("Starter stays free for up to [[3 agents]].", "Is there a free plan?"),
        )),
        Section("Annual billing", "notes", facts=(
            F("Paying yearly gets you [[two months free]] on any paid plan.",
              "Is there a discount for paying annually?"),
        )),
        Section("Changing plans", "notes", facts=(
            F("Upgrades apply immediately, while downgrades wait for the [[next renewal date]].",
              "When does a plan downgrade take effect?"),
        )),
    )),
    DocSpec("plans/add-ons", "Add-ons", "paid add-ons", sections=(
        Section("Available add-ons", "reference", facts=(
            F("[[SKU-12]] is AI Reply Assist, which drafts answers for agents to review.",
              "What is SKU-12 on my invoice?"),
            F("[[SKU-31]] adds a pack of ten extra light agents beyond the free allowance.",
              "How can I get more light agents?"),
            F("[[SKU-44]] is the HIPAA compliance add-on, with a signed business associate agreement.",
              "Do you offer HIPAA compliance?"),
        )),
        Section("Buying an add-on", "steps", steps=(
            "Open Admin, then Billing, then Add-ons.",
            "Select the add-on and confirm the price shown for your seat count.",
        )),
        Section("Trying add-ons", "notes", notes=(
            "Most add-ons can be tried for free during the workspace trial.",
            "Removing an add-on keeps its data for a while so you can change your mind.",
        )),
    )),
    DocSpec("plans/billing-faq", "Billing FAQ", "billing questions", sections=(
        Section("Payment methods", "reference", facts=(
            F("We accept major credit cards and [[SEPA Direct Debit]].", "Can I pay by direct debit?"),
        )),
        Section("Changing the seat count", "notes", facts=(
            F("Seats you remove are credited [[at the next renewal]] rather than refunded.",
              "Do I get money back when I remove agents?"),
        )),
        Section("Failed payments", "troubleshooting", facts=(
            F("After two weeks of failed payment attempts the workspace switches to [[read-only mode]].",
              "What happens if our card payment keeps failing?"),
        ), notes=("Updating the card under Admin, then Billing, restores full access within minutes.",)),
    )),
    DocSpec("admin/data-retention-2024", "Data retention (2024)", "ticket data retention", version="v4.6.0",
            effective_date="2024-02-01", sections=(
        Section("Closed tickets", "reference", facts=(
            F("Closed tickets are kept for [[365 days]] and then deleted permanently.",
              "How long does Helpwise keep closed tickets?"),
        )),
        Section("Attachments", "notes", notes=(
            "Attachments are deleted together with the ticket they belong to.",
            "Inline images in replies count as part of the ticket as well.",
        )),
        Section("Requesting an export", "steps", notes=(
            "Admins can request a full export from the Admin area before data is removed.",
        )),
    )),
    DocSpec("admin/data-retention", "Data retention", "ticket data retention", version="v5.1.0",
            effective_date="2025-02-01", supersedes="admin/data-retention-2024", sections=(
        Section("Closed tickets", "reference", facts=(
            F("From February 2025, closed tickets are kept for [[540 days]] before permanent deletion.",
              "How long are closed tickets stored before they are deleted?"),
        )),
        Section("Deleted tickets", "notes", facts=(
            F("Tickets deleted by an agent stay in the [[Trash view]] for two weeks and can be restored there.",
              "Can I get back a ticket I deleted by accident?"),
        )),
        Section("Custom retention", "notes", facts=(
            F("Business workspaces can shorten retention with the `[[ticket_retention_days]]` setting.",
              "Can we delete old tickets sooner than the default?"),
        )),
    )),
    DocSpec("admin/sso", "Single sign-on", "single sign-on", sections=(
        Section("Supported providers", "reference", facts=(
            F("SAML 2.0 works with Okta, Microsoft Entra ID and [[Google Workspace]].",
              "Can our agents log in with Google?"),
        )),
        Section("Session length", "reference", facts=(
            F("A single sign-on session lasts [[12 hours]], after which agents authenticate again.",
              "How often do agents have to log in again?"),
        ), notes=("Signing out of the identity provider does not end an open Helpwise session straight away.",)),
        Section("SCIM provisioning", "steps", facts=(
            F("Point your identity provider at the `[[/scim/v2]]` endpoint to create and remove agents "
              "automatically.", "Can accounts be created automatically from our identity provider?"),
        )),
    )),
    DocSpec("admin/roles-and-permissions", "Roles and permissions", "agent roles", sections=(
        Section("Built-in roles", "reference", facts=(
            F("Every workspace has Admin, Supervisor, Agent and [[Light Agent]] roles.",
              "What user roles are available?"),
        )),
        Section("Custom roles", "notes", facts=(
            F("Business workspaces can define up to [[20 custom roles]].", "Can I create my own roles?"),
        )),
        Section("The account owner", "notes", facts=(
            F("Only the [[account owner]] can delete the workspace or transfer ownership.",
              "Who is allowed to delete our workspace?"),
        ), notes=("Ownership can be handed to any admin, who then receives the billing emails as well.",)),
    )),
    DocSpec("admin/audit-log", "Audit log", "the audit log", sections=(
        Section("What is recorded", "reference", facts=(
            F("The log records sign-ins, role changes, exports and [[API key creation]].",
              "Does the audit log show who created an API key?"),
        )),
        Section("How long entries are kept", "reference", facts=(
            F("Audit entries are kept for [[two years]].", "How long is the audit log kept?"),
        )),
        Section("Exporting the log", "steps", facts=(
            F("Exports are delivered as [[JSON Lines]], one event per line.",
              "In which format can I export the audit log?"),
        )),
    )),
    DocSpec("account/priority-support", "Priority support", "priority support", audience="customer", sections=(
        Section("Response targets", "reference", facts=(
            F("Urgent tickets from Business customers get a first reply within [[1 hour]].",
              "How quickly does Helpwise answer urgent problems?"),
        )),
        Section("Phone support", "reference", facts=(
            F("Business customers can call [[+1-646-555-0110]] on weekdays, 8:00 to 20:00 Eastern time.",
              "Is there a phone number for priority support?"),
        )),
        Section("Onboarding sessions", "notes", facts=(
            F("New Business workspaces are offered [[two onboarding calls]] with a product specialist.",
              "Do we get help setting up Helpwise?"),
        )),
    )),
    DocSpec("account/business-sla", "Business plan SLA", "the Business plan SLA", audience="customer", sections=(
        Section("Uptime", "reference", facts=(
            F("Helpwise commits to [[99.9%]] monthly uptime for Business workspaces.",
              "What uptime does the Business plan guarantee?"),
        )),
        Section("Service credits", "reference", facts=(
            F("Each month below target earns [[a 5% service credit]] on the next invoice.",
              "What compensation do we get for an outage?"),
        )),
        Section("Maintenance windows", "notes", facts=(
            F("Planned maintenance happens on [[Sundays between 02:00 and 04:00 UTC]].",
              "When does planned maintenance happen?"),
        )),
    )),
    DocSpec("internal/escalation-runbook", "Support escalation runbook", "support escalations", audience="internal",
            sections=(
        Section("Severity levels", "reference", facts=(
            F("Any Sev1, meaning a whole workspace is unusable, is announced in the [[#hw-sev1]] channel.",
              "Where do we announce a Sev1?"),
        )),
        Section("Engineering contacts", "steps", facts=(
            F("Call the engineering on-call phone at [[+1-646-555-0199]] if nobody acknowledges the page.",
              "What is the engineering on-call number?"),
        )),
        Section("Handover", "notes", facts=(
            F("Every escalation ends with a handover written in the [[incident doc template]].",
              "How do we document an escalation handover?"),
        )),
    )),
    DocSpec("internal/retention-offers", "Retention offers", "retention offers for cancelling customers",
            audience="internal", sections=(
        Section("Current offers", "reference", facts=(
            F("Code [[HW-SAVE-30]] gives thirty percent off for three billing cycles.",
              "Is there a discount to keep a customer who wants to cancel?"),
        )),
        Section("Eligibility", "notes", facts=(
            F("Only customers with a tenure of at least [[nine months]] qualify.",
              "Which customers can get a retention offer?"),
        )),
        Section("Approval", "steps", facts=(
            F("Anything beyond the standard code needs approval from the [[Head of Support]].",
              "Who approves a bigger retention discount?"),
        )),
    )),
    DocSpec("internal/abuse-handling", "Handling abusive senders", "abusive senders", audience="internal",
            sections=(
        Section("Automatic blocking", "reference", facts=(
            F("A sender who opens more than [[50 tickets in an hour]] is blocked automatically.",
              "When is a spamming sender blocked automatically?"),
        )),
        Section("Blocking a sender by hand", "steps", facts=(
            F("Add the address or domain to the workspace [[blocklist]] under Admin, then Security.",
              "How do I block an abusive email address?"),
        )),
        Section("Legal requests", "notes", facts=(
            F("Law enforcement and legal requests are forwarded to [[legal@helpwise.example]].",
              "Where do legal requests go?"),
        )),
    )),
    DocSpec("troubleshooting/email-delivery", "Troubleshooting email delivery", "email delivery", sections=(
        Section("Replies not reaching customers", "troubleshooting", facts=(
            F("Make sure your SPF record contains `[[include:_spf.helpwise.example]]`.",
              "Our replies end up in customers' spam folders. What should we check?"),
        )),
        Section("Bounced messages", "troubleshooting", facts=(
            F("A hard bounce is shown on the ticket with error [[E4410]].",
              "How can I tell that a reply bounced?"),
        )),
        Section("Forwarding loops", "notes", notes=(
            "Never forward the Helpwise address back to your own support mailbox.",
            "A loop is stopped automatically, but the duplicate tickets it created must be merged by hand.",
        )),
    )),
)
