"""Typed settings readers fail loudly, naming the variable and what is wrong with it."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import env_float, env_int


def test_a_value_inside_its_bounds_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANSWERDESK_TEST_INT", "7")
    monkeypatch.setenv("ANSWERDESK_TEST_FLOAT", "0.5")
    assert env_int("ANSWERDESK_TEST_INT", default=1, minimum=1, maximum=10) == 7
    assert env_float("ANSWERDESK_TEST_FLOAT", default=0.1, minimum=0.0, maximum=1.0) == 0.5
    assert env_int("ANSWERDESK_TEST_UNSET", default=3, minimum=1) == 3


@pytest.mark.parametrize(("raw", "message"), [
    ("-1", r"ANSWERDESK_TEST_INT=-1 is below its minimum 0"),
    ("1001", r"ANSWERDESK_TEST_INT=1001 is above its maximum 1000"),
    ("ten", r"ANSWERDESK_TEST_INT='ten' is not an integer"),
])
def test_an_int_out_of_bounds_or_malformed_names_the_variable(monkeypatch: pytest.MonkeyPatch, raw: str,
                                                               message: str) -> None:
    monkeypatch.setenv("ANSWERDESK_TEST_INT", raw)
    with pytest.raises(ImproperlyConfigured, match=message):
        env_int("ANSWERDESK_TEST_INT", default=5, minimum=0, maximum=1000)


def test_a_share_above_one_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANSWERDESK_TEST_FLOAT", "1.5")
    with pytest.raises(ImproperlyConfigured, match=r"ANSWERDESK_TEST_FLOAT=1.5 is above its maximum 1.0"):
        env_float("ANSWERDESK_TEST_FLOAT", default=0.3, minimum=0.0, maximum=1.0)


def test_the_project_refuses_to_start_with_a_negative_rate_limit() -> None:
    """The bounds are on the real settings, not only on the helper: a fresh process with a
    nonsense value stops at start-up with the variable's name."""
    run = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env={"DJANGO_SETTINGS_MODULE": "config.settings", "API_RATE_LIMIT_PER_KEY": "-5",
             "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert run.returncode != 0 and "API_RATE_LIMIT_PER_KEY=-5 is below its minimum 0" in run.stderr
