"""`manage.py check_provider` against a real HTTP server on 127.0.0.1 speaking the OpenAI
chat-completions dialect (answering/tests/fake_provider.py): one request, metered to the
tenant, and what came back said in words; the failures name the problem without a traceback."""

from __future__ import annotations

import socket
from decimal import Decimal
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connections

from answering.management.commands.check_provider import Command
from answering.providers import spend
from answering.tests.fake_provider import fake_provider

pytestmark = pytest.mark.django_db
CALL_COST = Decimal("0.000036")  # the fake reports 120 + 30 tokens: (120 x 0.15 + 30 x 0.60) / 1e6 for gpt-4o-mini


def run(*args: str) -> str:
    out = StringIO()
    call_command("check_provider", *args, stdout=out)
    return out.getvalue()


def test_one_metered_request_and_what_came_back(acme: Any, settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_KEY", "none")
    with fake_provider() as (url, script):
        settings.ANSWER_PROVIDERS = f"openai|{url}/v1|LOCAL_KEY|gpt-4o-mini|5"
        script.openai.append(("ok", '{"answer": "ready"}'))
        output = run("--tenant", "acme")
    assert len(script.requests) == 1  # one request, the product's wire format
    sent = script.requests[0]
    assert sent["path"] == "/v1/chat/completions" and sent["headers"]["Authorization"] == "Bearer none"
    assert sent["body"]["model"] == "gpt-4o-mini" and sent["body"]["max_tokens"] == 32
    assert sent["body"]["response_format"] == {"type": "json_object"}  # as the generator asks
    assert f"replied: openai@{url}/v1, model gpt-4o-mini" in output
    assert "tokens: 120 in, 30 out" in output and "cost: 0.000036 USD" in output
    assert """reply: '{"answer": "ready"}'""" in output and "JSON output: ok" in output
    assert "latency: " in output and " ms" in output
    # Metered like every other call: the tenant's daily spend shows it, under its own stage.
    today = spend.usage_today(tenant=acme.tenant)
    assert (today.calls, today.cost_usd) == (1, CALL_COST)
    assert today.by_stage["check"]["calls"] == 1
    assert "billed to acme: today 1 provider call(s), 0.000036 USD" in output


def test_a_reply_that_is_not_json_is_a_failure_though_billed(acme: Any, settings: Any,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Answers ask for a JSON object; a model that answers in prose would fail every question."""
    monkeypatch.setenv("LOCAL_KEY", "none")
    out = StringIO()
    with fake_provider() as (url, script):
        settings.ANSWER_PROVIDERS = f"openai|{url}/v1|LOCAL_KEY|gpt-4o-mini|5"
        script.openai.append(("ok", "ready\nand a second line"))
        with pytest.raises(CommandError) as failed:
            call_command("check_provider", "--tenant", "acme", stdout=out)
    assert "not a JSON object" in str(failed.value)
    assert "reply: 'ready'" in out.getvalue() and "second line" not in out.getvalue()  # the first line only
    assert spend.usage_today(tenant=acme.tenant).calls == 1  # it was sent and billed all the same


def test_a_refused_key_is_named_with_no_traceback(acme: Any, settings: Any, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("LOCAL_KEY", "wrong")
    # run_from_argv closes every connection when it ends, the test's own transaction's included.
    monkeypatch.setattr(connections, "close_all", lambda: None)
    with fake_provider() as (url, script):
        settings.ANSWER_PROVIDERS = f"openai|{url}/v1|LOCAL_KEY|gpt-4o-mini|5"
        script.openai.append(("status", (401, None, '{"error": {"message": "Incorrect API key provided"}}')))
        with pytest.raises(SystemExit) as exited:  # as `manage.py check_provider` runs it
            Command().run_from_argv(["manage.py", "check_provider", "--tenant", "acme"])
    assert exited.value.code != 0
    err = capsys.readouterr().err
    assert "no provider replied" in err and "auth: HTTP 401" in err and "Incorrect API key" in err
    assert "missing or was refused: check the variable LOCAL_KEY" in err and "Traceback" not in err
    assert len(script.requests) == 1 and spend.usage_today(tenant=acme.tenant).calls == 0  # nothing billed


def test_nothing_listening_and_a_missing_key_variable_are_said_in_words(
        acme: Any, settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed once the block ends: nothing listens there
    monkeypatch.setenv("LOCAL_KEY", "none")
    settings.ANSWER_PROVIDERS = f"openai|http://127.0.0.1:{port}/v1|LOCAL_KEY|llama3.1:8b|2"
    with pytest.raises(CommandError) as failed:
        run("--tenant", "acme")
    assert "cannot connect" in str(failed.value) and "is it running at that address?" in str(failed.value)
    monkeypatch.delenv("LOCAL_KEY")
    with pytest.raises(CommandError) as failed:
        run("--tenant", "acme")
    assert "needs the environment variable LOCAL_KEY" in str(failed.value)


def test_no_provider_says_so_and_how_to_set_one(acme: Any, settings: Any) -> None:
    settings.ANSWER_PROVIDERS = ""
    with pytest.raises(CommandError) as failed:
        run("--tenant", "acme")
    assert failed.value.returncode != 0
    message = str(failed.value)
    assert "no model provider is configured" in message and "extractive" in message
    assert "ANSWER_PROVIDERS=" in message and "docs/models.md" in message
