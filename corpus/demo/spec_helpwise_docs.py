"""Helpwise documentation pages, part one: getting started, channels, automation, API, guides."""

from __future__ import annotations

from corpus.demo.spec import DocSpec, F, Section

DOCS_PRODUCT: tuple[DocSpec, ...] = (
    DocSpec("getting-started/create-workspace", "Creating your workspace", "setting up a new workspace", sections=(
        Section("Choosing a subdomain", "steps", steps=(
            "Sign up with your work email and pick a workspace name.",
            "Confirm the subdomain Helpwise proposes, or type your own.",
            "Invite at least one colleague so that tickets never sit unattended.",
        ), facts=(
            F("A team called Acme, for example, ends up at [[acme.helpwise.example]].",
              "What will the address of my helpdesk look like?"),
        )),
        Section("Free trial", "reference", facts=(
            F("Every new workspace starts with a [[14-day free trial]] of the Business plan, no card required.",
              "How long can I try Helpwise for free?"),
        )),
        Section("Data region", "notes", facts=(
            F("Choose the [[EU data region]] during sign-up if your tickets must stay in Europe; it cannot be "
              "changed afterwards.", "Can our ticket data be stored in Europe?"),
        )),
    )),
    DocSpec("getting-started/inviting-agents", "Inviting your team", "agent invitations", sections=(
        Section("Sending invitations", "steps", steps=(
            "Open Admin, then Team, and choose Invite agents.",
            "Enter one email address per line and pick a role for the group.",
            "Send the invitations; each person receives a personal sign-up link.",
        ), facts=(
            F("Invitation links stop working after [[72 hours]], and an admin can resend them at any time.",
              "My teammate's invite link no longer works. Why?"),
        )),
        Section("Paying for seats", "reference", facts=(
            F("A seat added in the middle of a billing cycle is [[prorated daily]].",
              "How am I charged when I add an agent mid-month?"),
        )),
        Section("Light agents", "notes", facts=(
            F("Light agents can read tickets and leave internal notes at no cost, up to [[25 light agents]] per "
              "workspace.", "Do I pay for colleagues who only add internal notes?"),
        )),
    )),
    DocSpec("getting-started/importing-tickets", "Importing tickets from another helpdesk", "ticket imports", sections=(
        Section("Supported sources", "reference", facts=(
            F("The importer reads CSV exports and connects directly to [[Zendesk and Freshdesk]].",
              "Can I move my old tickets over from Zendesk?"),
        )),
        Section("Import limits", "reference", facts=(
            F("A single import run can hold up to [[50,000 tickets]].",
              "Is there a maximum number of tickets per import?"),
            F("CSV files may be as large as [[100 MB]].", "How big can the CSV file for an import be?"),
        )),
        Section("Fixing failed rows", "troubleshooting", facts=(
            F("Rows that could not be imported are listed in an [[import_errors.csv]] report attached to the "
              "import.", "Some of my tickets did not import. How do I find out which ones?"),
        )),
    )),
    DocSpec("channels/email", "Email channel", "the email channel", version="v5.0.0", effective_date="2024-12-03",
            sections=(
        Section("Forwarding your support address", "steps", steps=(
            "In your mail provider, add a forwarding rule for your public support address.",
            "Send a test message and wait for it to appear as a new ticket.",
        ), facts=(
            F("Forward the mailbox to [[support@acme.helpwise.example]], replacing acme with your subdomain.",
              "Where should I forward our support emails?"),
        )),
        Section("Attachments", "reference", facts=(
            F("Incoming messages may carry attachments of up to [[25 MB]] in total.",
              "What is the largest attachment a customer can email us?"),
        ), notes=("Larger files are stripped, and the ticket shows a note listing what was removed.",)),
        Section("Sending from your own domain", "steps", facts=(
            F("Publish the `[[helpwise._domainkey]]` DKIM record so that replies are signed for your domain.",
              "Which DNS record lets Helpwise send emails as our domain?"),
        )),
    )),
    DocSpec("channels/live-chat", "Live chat widget", "the live chat widget", sections=(
        Section("Installing the widget", "steps", facts=(
            F("Paste the snippet just before the closing body tag; it loads "
              "[[widget.helpwise.example/loader.js]].", "Which script does the chat widget load?"),
        )),
        Section("Idle conversations", "reference", facts=(
            F("A conversation with no reply from the visitor is closed after [[20 minutes]] by default.",
              "When does an inactive chat get closed?"),
            F("Change that delay with the `[[chat_idle_timeout_minutes]]` setting.",
              "Can I keep idle chats open for longer?"),
        )),
        Section("Outside business hours", "notes", facts=(
            F("When nobody is online the widget turns into a [[contact form]] that creates an email ticket.",
              "What do website visitors see when no agent is available?"),
        )),
    )),
    DocSpec("channels/social", "Social messaging", "social messaging channels", sections=(
        Section("Connecting accounts", "steps", facts=(
            F("You can connect Facebook Pages, Instagram and [[WhatsApp Business]] accounts.",
              "Can Helpwise handle WhatsApp messages?"),
        )),
        Section("Reply windows", "notes", facts=(
            F("Meta only allows a reply inside the [[24-hour messaging window]] that opens with the customer's last "
              "message.", "Why can't I answer an old Instagram message?"),
        ), notes=(
            "Once the window has closed, the reply box is greyed out and the ticket shows why.",
            "Asking the customer to continue by email keeps the conversation going without breaking the rule.",
        )),
        Section("Account limits", "reference", facts=(
            F("A workspace can connect up to [[10 social accounts]].", "How many social profiles can we connect?"),
        )),
    )),
    DocSpec("channels/phone", "Phone and voicemail", "phone support", sections=(
        Section("Getting a number", "steps", facts=(
            F("Local numbers cost [[$4 per month]] each, and toll-free numbers are priced by country.",
              "How much does a phone number cost?"),
        )),
        Section("Call recordings", "reference", facts=(
            F("Recordings are kept for [[60 days]] and then deleted.", "How long are call recordings stored?"),
        )),
        Section("Voicemail", "notes", facts=(
            F("Voicemails up to [[three minutes]] long are transcribed and attached to a new ticket.",
              "Are voicemails turned into tickets?"),
        )),
    )),
    DocSpec("automation/rules", "Automation rules", "automation rules", sections=(
        Section("How rules run", "overview", facts=(
            F("Rules are evaluated from top to bottom, and each rule fires at most [[once per ticket update]].",
              "Can the same rule trigger several times on one change?"),
        )),
        Section("Rule limits", "reference", facts=(
            F("A workspace can keep [[200 active rules]]; disabled rules do not count.",
              "Is there a maximum number of automation rules?"),
        )),
        Section("Debugging a rule", "troubleshooting", facts=(
            F("The ticket's [[Rule activity]] tab shows which rules ran and which conditions failed.",
              "How can I tell why a rule did not run on a ticket?"),
        )),
    )),
    DocSpec("automation/sla-policies", "SLA policies", "SLA policies", sections=(
        Section("Defining targets", "steps", facts=(
            F("A policy defines first reply and resolution targets for up to [[four priority levels]].",
              "How many priority levels can an SLA policy have?"),
        )),
        Section("Business hours", "reference", facts=(
            F("SLA clocks pause outside the schedule set in `[[business_hours]]`.",
              "Do SLA timers keep running at night?"),
        )),
        Section("Breach warnings", "notes", facts=(
            F("Agents see a warning [[ten minutes before a breach]], and supervisors are notified when it happens.",
              "Will agents be warned before they miss an SLA?"),
        )),
    )),
    DocSpec("automation/macros", "Macros", "macros and canned replies", sections=(
        Section("Creating a macro", "steps", facts=(
            F("Placeholders such as `[[%requester.first_name%]]` are filled in when the macro is applied.",
              "How do I put the customer's name into a canned reply?"),
        )),
        Section("Macro limits", "reference", facts=(
            F("Each workspace can store up to [[500 macros]].", "How many macros can we create?"),
        )),
        Section("Sharing macros", "notes", facts=(
            F("Personal macros stay private until they are [[shared with a team]].",
              "Can other agents use the macros I made?"),
        )),
    )),
    DocSpec("automation/auto-close", "Auto-closing tickets", "automatic ticket closing", sections=(
        Section("Default behaviour", "reference", facts=(
            F("Tickets waiting in Pending are closed after [[96 hours]] without a customer reply.",
              "When do pending tickets close automatically?"),
        )),
        Section("Changing the delay", "steps", facts=(
            F("Adjust `[[auto_close_after_hours]]` under Admin, then Automation.",
              "Can I change how long Helpwise waits before closing a ticket?"),
        )),
        Section("Reopening closed tickets", "notes", facts=(
            F("A customer reply within [[four weeks]] reopens the closed ticket instead of creating a new one.",
              "What happens if a customer answers a closed ticket?"),
        )),
    )),
    DocSpec("api/authentication", "API authentication", "API keys", sections=(
        Section("Creating an API key", "steps", facts=(
            F("API keys begin with `[[hw_key_]]` and belong to the agent who created them.",
              "What do Helpwise API keys look like?"),
        )),
        Section("Sending the key", "reference", facts=(
            F("Send the key in the header as `[[Authorization: Bearer]]` followed by the key.",
              "How do I pass my key when calling the API?"),
        )),
        Section("Key expiry and scopes", "notes", facts=(
            F("Keys expire after [[one year]] unless an admin marks them as non-expiring.",
              "Do API keys ever expire?"),
            F("A key can be limited to [[read-only scope]] for reporting integrations.",
              "Can I make an API key that cannot change anything?"),
        )),
    )),
    DocSpec("api/rate-limits", "API rate limits", "API rate limits", sections=(
        Section("Limits per plan", "reference", facts=(
            F("Team workspaces may send [[600 requests per minute]] to the API.", "What is the API rate limit?"),
            F("Business workspaces get [[1,200 requests per minute]].", "Is the rate limit higher on Business?"),
        )),
        Section("Exceeding the limit", "troubleshooting", facts=(
            F("Requests above the limit fail with error [[E1042]].",
              "Which error does the API return when I send too many requests?"),
            F("The `[[Retry-After]]` header tells you how many seconds to wait before trying again.",
              "How long should my integration pause after being throttled?"),
        )),
        Section("Bulk endpoints", "notes", facts=(
            F("Each call to a bulk endpoint counts as [[ten requests]] against the limit.",
              "Do bulk API calls count differently toward the rate limit?"),
        ), notes=("Prefer bulk endpoints anyway: one bulk call is still cheaper than many single updates.",)),
    )),
    DocSpec("api/errors", "API error reference", "API error codes", sections=(
        Section("Authentication errors", "reference", facts=(
            F("[[E1001]] means the key is missing, expired or revoked.", "What does error E1001 mean?"),
        )),
        Section("Ticket errors", "reference", facts=(
            F("[[E2007]] is returned while another agent holds the edit lock on the ticket.",
              "Why does the API say the ticket is locked?"),
            F("[[E2015]] means the requester's email address is not valid.",
              "Which error do I get for a bad requester email?"),
        )),
        Section("Attachment errors", "reference", facts=(
            F("[[E3100]] is raised when an uploaded file is larger than your plan allows.",
              "What error means my uploaded file is too big?"),
        )),
    )),
    DocSpec("api/pagination", "Pagination", "paged API results", sections=(
        Section("Page parameters", "reference", facts=(
            F("List endpoints take a page number and a `[[per_page]]` parameter.",
              "How do I control how many results come back?"),
        )),
        Section("Page size limits", "reference", facts=(
            F("The largest page you can ask for is `[[per_page=50]]`.",
              "What is the maximum number of results per page?"),
        )),
        Section("Following pages", "notes", facts=(
            F("Each response carries a [[Link header]] with the URLs of the next and previous pages.",
              "How do I know whether there is another page?"),
        ), notes=(
            "When the header has no next link, you have reached the last page.",
            "Sort by creation time if you page through tickets while new ones keep arriving.",
        )),
    )),
    DocSpec("guides/webhooks", "Webhooks", "outgoing webhooks", sections=(
        Section("Creating a webhook", "steps", facts=(
            F("Subscribe to events such as `[[ticket.created]]` to be told about new conversations.",
              "Can I be notified when a new ticket arrives?"),
        )),
        Section("Timeouts and retries", "reference", facts=(
            F("Helpwise waits up to [[15 seconds]] for your endpoint to answer.",
              "How long does Helpwise wait for my webhook endpoint?"),
            F("The wait can be shortened per endpoint with the `[[delivery_timeout]]` field.",
              "Can I change the webhook timeout?"),
            F("A failed delivery is attempted again with exponential backoff, up to [[3 retries]] in total.",
              "Does Helpwise resend a webhook if my server was down?"),
        )),
        Section("Verifying requests", "notes", facts=(
            F("Every request is signed in the `[[X-Helpwise-Signature]]` header.",
              "How can I check that a webhook really came from Helpwise?"),
        )),
        Section("Disabled endpoints", "troubleshooting", facts=(
            F("An endpoint that keeps failing for [[three consecutive days]] is switched off automatically.",
              "Why was my webhook turned off?"),
        )),
    )),
)
