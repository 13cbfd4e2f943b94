"""Typed readers for environment settings.

Every setting the project reads from the environment goes through one of these, so a
malformed value fails loudly at start-up with the variable's name, instead of turning
into a surprising default three modules later.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
_T = TypeVar("_T")
_N = TypeVar("_N", int, float)


def env_str(name: str, default: str | None = None) -> str:
    value = os.environ.get(name)
    if value is None:
        if default is None:
            raise ImproperlyConfigured(f"Environment variable {name} is required and not set.")
        return default
    return value


def env_optional(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    lowered = raw.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"Environment variable {name}={raw!r} is not a boolean (use 1/0, true/false).")


def _env_parsed(name: str, default: _T, parse: Callable[[str], _T], kind: str) -> _T:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return parse(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"Environment variable {name}={raw!r} is not {kind}.") from exc


def _bounded(name: str, value: _N, minimum: _N | None, maximum: _N | None) -> _N:
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"Environment variable {name}={value!r} is below its minimum {minimum!r}.")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"Environment variable {name}={value!r} is above its maximum {maximum!r}.")
    return value


def env_int(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    return _bounded(name, _env_parsed(name, default, int, "an integer"), minimum, maximum)


def env_float(name: str, default: float, *, minimum: float | None = None, maximum: float | None = None) -> float:
    return _bounded(name, _env_parsed(name, default, float, "a number"), minimum, maximum)


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = env_str(name, default=default).strip().lower()
    if value not in choices:
        raise ImproperlyConfigured(f"Environment variable {name}={value!r} is not one of {', '.join(choices)}.")
    return value
