"""python manage.py check_provider --tenant SLUG

Sends one small request through the configured provider chain, the way the answer path sends
its own (ProviderChain.complete with JSON output, billed to the tenant's daily counter under
the stage `check`, so the spend record shows it), and says what came back: which provider and
model replied, the latency, the tokens and cost, the reply's first line and whether it was the
JSON object answers need; or, when nothing did, each attempt's error in words with what to
look at. Exit code 0 only when a provider replied with JSON.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError, CommandParser

from answering.providers import ErrorKind, Message, reply_json
from answering.providers import spend
from answering.providers.base import HttpProvider
from answering.providers.chain import AllProvidersFailed, ProviderChain, SpendCapReached
from tenants.models import Tenant

STAGE = "check"
HOW_TO = ("set ANSWER_PROVIDERS to dialect|base_url|API_KEY_ENV|model[|timeout], e.g. "
          "ANSWER_PROVIDERS=\"openai|http://127.0.0.1:11434/v1|LOCAL_KEY|llama3.1:8b\" with LOCAL_KEY=none "
          "for a local Ollama, in the environment of the server and the worker (docs/models.md)")
# What to look at for each kind of failure, in the operator's words.
HINTS = {
    ErrorKind.AUTH.value: ("the key is missing or was refused: check the variable {key_env} (a local server "
                           "that needs no key takes any value, e.g. none)"),
    ErrorKind.RATE_LIMITED.value: "the endpoint is rate limiting: try again later",
    ErrorKind.QUOTA_EXHAUSTED.value: "the account's quota or credit is used up",
    ErrorKind.OVERLOADED.value: "nothing answered, or the server is failing: is it running at that address?",
    ErrorKind.TIMEOUT.value: "no complete reply within the entry's timeout: a slow local model may need a "
                             "larger fifth field (seconds)",
    ErrorKind.BAD_RESPONSE.value: "an unexpected reply: check that base_url ends in /v1 (openai dialect) and the "
                                  "model name exists on that server",
}
# Asked as the generator asks (JSON output, temperature 0): a server or model without JSON mode
# fails here, not on the first customer's question.
PROMPT = [Message("system", "You are a connectivity check. Reply with a JSON object only."),
          Message("user", 'Reply with exactly this JSON object: {"answer": "ready"}')]


class Command(BaseCommand):
    help = ("Send one small, metered request through ANSWER_PROVIDERS and say what came back "
            "(billed to the tenant's daily spend under the stage 'check').")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, help="the tenant the request is billed to")
        parser.add_argument("--max-tokens", type=int, default=32, help="the reply's token limit (default 32)")

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = Tenant.objects.filter(slug=options["tenant"]).first()
        if tenant is None:
            raise CommandError(f"tenant {options['tenant']!r} does not exist")
        try:
            chain = ProviderChain.configured()
        except ImproperlyConfigured as exc:
            raise CommandError(f"ANSWER_PROVIDERS cannot be read: {exc}") from None
        if not chain:
            raise CommandError(f"no model provider is configured: answers are extractive (offline, no model). "
                               f"To connect one, {HOW_TO}.")
        for number, provider in enumerate(chain.providers, 1):
            self.stdout.write(f"provider {number}: {provider.name}, model {provider.model}")
        meter = spend.TenantMeter(tenant=tenant)
        try:
            completion = chain.metered(meter, stage=STAGE).complete(PROMPT, max_tokens=options["max_tokens"],
                                                                    json_output=True)
        except SpendCapReached as exc:
            raise CommandError(f"not sent: {exc}") from None
        except AllProvidersFailed as exc:
            raise CommandError("no provider replied:\n" + "\n".join(
                f"  {line}" for line in _attempt_lines(exc.attempts, chain=chain))) from None
        for line in _attempt_lines(completion.attempts, chain=chain):
            self.stdout.write(f"failed over: {line}")
        first_line = (completion.text.strip().splitlines() or [""])[0]
        cost = f"{completion.cost_usd:.6f} USD" if completion.priced else "unpriced (add the model to ANSWER_PRICES)"
        self.stdout.write(f"replied: {completion.provider}, model {completion.model}")
        self.stdout.write(f"latency: {completion.latency_ms:.0f} ms")
        self.stdout.write(f"tokens: {completion.input_tokens} in, {completion.output_tokens} out"
                          + ("" if completion.input_tokens or completion.output_tokens
                             else " (the endpoint reported no usage)"))
        self.stdout.write(f"cost: {cost}")
        self.stdout.write(f"reply: {first_line[:200]!r}" if first_line else "reply: (empty)")
        today = spend.usage_today(tenant=tenant)
        self.stdout.write(f"billed to {tenant.slug}: today {today.calls} provider call(s), "
                          f"{today.cost_usd:.6f} USD (stage {STAGE!r} in its daily spend)")
        try:
            is_object = isinstance(reply_json(completion.text), dict)
        except ValueError:
            is_object = False
        if not is_object:
            raise CommandError("the reply is not a JSON object: answers ask for JSON output "
                               "(response_format json_object) and would fail over this model; use a model and "
                               "server with JSON mode, or a larger --max-tokens if the reply was cut off")
        self.stdout.write("JSON output: ok (the format answers use)")


def _attempt_lines(attempts: list[dict[str, object]], *, chain: ProviderChain) -> list[str]:
    """Each failed attempt, its error and what to look at; the key's variable named where the key was refused."""
    key_envs = {(p.name, p.model): p.config.api_key_env for p in chain.providers if isinstance(p, HttpProvider)}
    lines = []
    for a in attempts:
        key_env = key_envs.get((str(a["provider"]), str(a["model"])), "it names")
        hint = HINTS.get(str(a["kind"]), "").format(key_env=key_env)
        lines.append(f"{a['provider']} ({a['model']}): {a['error']}. {hint}".rstrip())
    return lines
