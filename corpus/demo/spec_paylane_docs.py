"""PayLane documentation pages, part one: getting started, the API, and integration guides."""

from __future__ import annotations

from corpus.demo.spec import DocSpec, F, Section

DOCS_API: tuple[DocSpec, ...] = (
    DocSpec("getting-started/quickstart", "Quickstart: your first payment", "a first test payment", sections=(
        Section("Create a sandbox account", "steps", steps=(
            "Sign up in the PayLane dashboard and confirm your email address.",
            "Open Developers, then API keys, and reveal the secret test key.",
            "Store the key in an environment variable rather than in source code.",
        ), facts=(
            F("Test-mode secret keys always begin with `[[pl_test_]]`, which makes them easy to tell apart from live "
              "credentials in logs and configuration files.", "How can I tell if an API key is for testing?"),
        )),
        Section("Send a test charge", "steps", facts=(
            F("While you build, point your HTTP client at [[https://sandbox.paylane.example/v2]]; nothing sent there "
              "moves real money.", "What base URL should I use while developing?"),
            F("The smallest amount PayLane will charge is [[$0.50]], or the equivalent in the presentment currency.",
              "Is there a minimum amount for a single charge?"),
        ), notes=("A successful call returns a charge object whose status reads succeeded.",)),
        Section("Going live", "notes", facts=(
            F("Live mode unlocks once your business profile passes review, which normally takes "
              "[[two business days]].", "How long after signing up can I accept real payments?"),
        )),
    )),
    DocSpec("getting-started/sdks", "Official SDKs", "the official client libraries", sections=(
        Section("Supported languages", "reference", facts=(
            F("The current Python library is [[paylane-python 4.2.0]], published on PyPI.",
              "What is the latest version of the Python SDK?"),
            F("JavaScript projects should install [[paylane-node 3.8.1]] from npm.",
              "Which version of the Node package should I use?"),
        ), notes=("Community libraries for other languages exist, but PayLane does not review or support them.",)),
        Section("Runtime requirements", "notes", facts=(
            F("The Python library needs [[Python 3.9]] or newer; older interpreters fail at import time.",
              "Will the Python SDK run on an old interpreter like 3.7?"),
        )),
        Section("Retrying network failures", "reference", facts=(
            F("Every SDK reads a `[[max_network_retries]]` option that controls how often a request is resent after "
              "a connection error; it defaults to two attempts.", "Can the client library automatically resend "
              "requests when my connection drops?"),
        )),
    )),
    DocSpec("getting-started/test-cards", "Test cards and sandbox data", "sandbox test cards", sections=(
        Section("Cards that succeed", "reference", facts=(
            F("Use [[4710 0000 0000 0011]] with any future expiry date and any three-digit CVC to simulate an "
              "approved payment.", "Which card number can I use to test a successful payment?"),
        )),
        Section("Cards that decline", "reference", facts=(
            F("Card [[4710 0000 0000 0029]] is always declined with an insufficient-funds reason.",
              "Is there a test card that simulates a declined payment?"),
            F("To exercise a 3D Secure challenge, use [[4710 0000 0000 3063]], which asks for authentication every "
              "time.", "How do I test the 3DS challenge screen in the sandbox?"),
        )),
        Section("Sandbox housekeeping", "notes", facts=(
            F("Sandbox accounts that stay unused for [[six months]] are reset, and their test data is removed.",
              "Will my sandbox test data ever be deleted?"),
        )),
    )),
    DocSpec("api/authentication", "Authenticating with API keys", "API keys", sections=(
        Section("Key types", "overview", facts=(
            F("Live secret keys start with `[[pl_live_]]` and must only ever be used from your own servers.",
              "What prefix do production secret keys have?"),
            F("Publishable keys start with `[[pk_live_]]` and are safe to embed in a browser or a mobile app.",
              "Which key is safe to put in my frontend code?"),
        )),
        Section("Rotating a key", "steps", steps=(
            "Open Developers, then API keys, and choose Roll key next to the secret key.",
            "Deploy the new key to every service that calls the API.",
            "Confirm in the request log that traffic now uses the new key.",
        ), facts=(
            F("After a roll, the previous secret keeps working for [[24 hours]] so that deployments can catch up.",
              "If I rotate my API key, does the old one stop working right away?"),
        )),
        Section("Key limits", "notes", facts=(
            F("An account can hold at most [[10 active secret keys]] at the same time.",
              "How many secret keys can I create?"),
        )),
        Section("Authentication errors", "troubleshooting", facts=(
            F("A missing, revoked or malformed key produces error [[PL-4010]] with HTTP status 401.",
              "What error do I get when my API key is wrong?"),
        )),
    )),
    DocSpec("api/rate-limits", "Rate limits", "request rate limits", sections=(
        Section("Default limits", "reference", facts=(
            F("Live mode allows [[100 requests per second]] per account, counted across all endpoints.",
              "How many API calls can I make per second in production?"),
            F("Test mode is capped lower, at [[25 requests per second]].", "Is the sandbox throttled differently?"),
        )),
        Section("Reading the headers", "reference", facts=(
            F("Every response carries `[[X-PayLane-RateLimit-Remaining]]`, the number of calls left in the current "
              "one-second window.", "How can I see how much of my request quota is left?"),
        )),
        Section("When you hit the limit", "troubleshooting", facts=(
            F("Calls over the limit fail with HTTP 429 and the error code [[PL-4290]].",
              "Which error code means PayLane is throttling me?"),
        ), notes=("Back off exponentially and add jitter so that parallel workers do not retry in lockstep.",)),
        Section("Raising your limit", "notes", facts=(
            F("Accounts on the Scale plan can ask their account manager for up to [[500 requests per second]].",
              "Can I get a higher rate limit?"),
        )),
    )),
    DocSpec("api/errors", "Error codes", "API error codes", version="v2.3.1", sections=(
        Section("How errors are shaped", "overview", facts=(
            F("Every error body includes a `[[request_id]]` field; quote it whenever you contact support.",
              "What should I send support when an API call fails?"),
        )),
        Section("Request errors", "reference", facts=(
            F("[[PL-4001]] means a required parameter is missing or has the wrong type, and the param field names "
              "the culprit.", "Which error do I get when I forget a required field?"),
            F("[[PL-4031]] is returned when the card issuer declines because of insufficient funds.",
              "What does error PL-4031 mean?"),
            F("[[PL-4090]] signals an idempotency conflict: the same key was reused with a different request body.",
              "Why am I getting an idempotency conflict error?"),
        )),
        Section("Server and upstream errors", "troubleshooting", facts=(
            F("[[PL-5003]] means the card network did not answer in time; it is safe to retry with the same "
              "idempotency key.", "A payment failed because the card network timed out. Can I try again?"),
        )),
    )),
    DocSpec("api/idempotency", "Idempotent requests", "idempotent requests", sections=(
        Section("Sending an idempotency key", "steps", facts=(
            F("Send the `[[Idempotency-Key]]` header with a unique value on every POST request.",
              "How do I make sure a payment is not created twice when my code retries?"),
            F("Keys may be up to [[255 characters]] long; a random UUID is a good choice.",
              "How long can an idempotency key be?"),
        )),
        Section("How long keys are remembered", "reference", facts=(
            F("PayLane stores each key together with the first response for [[48 hours]].",
              "For how long is an idempotency key valid?"),
        )),
        Section("Reusing a key by mistake", "troubleshooting", notes=(
            "Reusing a key with different parameters is rejected instead of silently returning the old result.",
            "Generate a fresh key for every logically new operation, and reuse it only when resending that operation.",
        )),
    )),
    DocSpec("api/pagination", "Paginating list endpoints", "paginated list results", sections=(
        Section("Cursor parameters", "reference", facts=(
            F("Pass the id of the last object you received as `[[starting_after]]` to fetch the following page.",
              "How do I get the next page of results?"),
        )),
        Section("Page size", "reference", facts=(
            F("The default page holds ten objects, and you can request at most `[[limit=100]]` in a single call.",
              "What is the largest number of objects a list call returns?"),
        )),
        Section("Auto-pagination in the SDKs", "notes", facts=(
            F("The SDKs offer an `[[auto_paging_iter()]]` helper that follows the cursors for you.",
              "Is there an easy way to loop over every page in Python?"),
        )),
    )),
    DocSpec("api/versioning", "API versioning", "API versions", sections=(
        Section("Pinning a version", "steps", facts=(
            F("Send the `[[PayLane-Version]]` header to pin the version used for a single request.",
              "How do I choose which API version a request uses?"),
        ), notes=("Without the header, the version pinned on your account in the dashboard applies.",)),
        Section("Current version", "reference", facts=(
            F("The newest dated API version is [[2025-04-15]].", "What is the latest API version?"),
        )),
        Section("Deprecation policy", "notes", facts=(
            F("An older version keeps working for at least [[18 months]] after a newer one ships.",
              "How long are old API versions supported?"),
        )),
    )),
    DocSpec("guides/webhooks", "Receiving webhooks", "webhook deliveries", version="v2.0.0",
            effective_date="2024-09-02", sections=(
        Section("Setting up an endpoint", "steps", steps=(
            "Expose an HTTPS route on your server that accepts POST requests with a JSON body.",
            "Add the route under Developers, then Webhooks, and pick the events you want.",
            "Copy the endpoint secret that PayLane shows once the endpoint is saved.",
        ), facts=(
            F("You can register up to [[16 webhook endpoints]] per account.", "How many webhook URLs can I add?"),
        )),
        Section("Delivery timeouts", "reference", facts=(
            F("Set `[[webhook_timeout_seconds]]` on an endpoint to control how long PayLane waits for your answer.",
              "Can I change how long PayLane waits for my webhook endpoint to respond?"),
            F("When that setting is left empty, PayLane waits [[10 seconds]] before counting the attempt as "
              "failed.", "What is the default webhook timeout?"),
        )),
        Section("Retries", "reference", facts=(
            F("A delivery that does not receive a 2xx status is resent with exponential backoff, up to "
              "[[5 retries]] spread over roughly a day.", "If my server is down, will PayLane resend the events?"),
        )),
        Section("Verifying signatures", "steps", facts=(
            F("Each delivery carries a `[[PayLane-Signature]]` header, an HMAC-SHA256 of the payload computed with "
              "your endpoint secret.", "How do I check that a webhook really came from PayLane?"),
        ), subsections=(
            Section("Timestamp tolerance", "notes", facts=(
                F("Reject any delivery whose signed timestamp is more than [[300 seconds]] old, to defeat replays.",
                  "How old can a webhook timestamp be before I should reject it?"),
            )),
        )),
    )),
    DocSpec("guides/webhook-events", "Webhook event types", "webhook event types", sections=(
        Section("Payment events", "reference", facts=(
            F("`[[charge.succeeded]]` fires once the funds of a charge have been captured.",
              "Which event tells me that a payment went through?"),
            F("`[[charge.refunded]]` is sent whenever a full or partial refund is created.",
              "Is there an event when I issue a refund?"),
        )),
        Section("Payout events", "reference", facts=(
            F("`[[payout.failed]]` arrives when the receiving bank rejects a payout.",
              "How do I get notified if a payout bounces?"),
        )),
        Section("Dispute events", "reference", facts=(
            F("`[[dispute.opened]]` is emitted as soon as the card network tells us about a chargeback.",
              "Which webhook tells me about a new chargeback?"),
        )),
        Section("Replaying events", "notes", facts=(
            F("Past events can be listed and re-sent from the dashboard for [[30 days]].",
              "Can I replay an old webhook event?"),
        )),
    )),
    DocSpec("guides/refunds", "Refunds", "refunds", sections=(
        Section("Issuing a refund", "steps", steps=(
            "Find the charge in the dashboard or fetch it by id through the API.",
            "Choose Refund and enter the amount, or leave it empty to refund everything.",
            "Add a reason so that your team and the customer can see why the money was returned.",
        ), facts=(
            F("A charge can be refunded for up to [[180 days]] after it was captured.",
              "Is there a deadline for refunding a payment?"),
        )),
        Section("Partial refunds", "notes", facts=(
            F("One charge accepts up to [[ten partial refunds]], as long as their total stays within the original "
              "amount.", "Can I refund an order in several parts?"),
        )),
        Section("When the money arrives", "reference", facts=(
            F("Cardholders usually see the money back within [[5 to 10 business days]], depending on their bank.",
              "How long until my customer gets their refund?"),
        )),
        Section("Fees on refunded charges", "notes", facts=(
            F("Refunding is free, but the processing fee of the original charge is [[not returned]].",
              "Do I get the transaction fee back when I refund someone?"),
        )),
    )),
    DocSpec("guides/disputes", "Handling disputes", "disputes and chargebacks", sections=(
        Section("What a dispute costs", "overview", facts=(
            F("Every dispute carries a [[$15.00]] fee, which is given back if the decision goes your way.",
              "How much does a chargeback cost me?"),
        )),
        Section("Submitting evidence", "steps", facts=(
            F("You have [[7 calendar days]] to submit evidence, from the dashboard or through the API.",
              "How long do I have to respond to a chargeback?"),
            F("Each evidence file may be up to [[5 MB]], in PDF, JPEG or PNG format.",
              "What is the size limit for dispute evidence files?"),
        )),
        Section("Outcomes", "notes", facts=(
            F("Card networks typically reach a decision within [[75 days]] of receiving your evidence.",
              "When will I find out whether I won a dispute?"),
        )),
    )),
)
