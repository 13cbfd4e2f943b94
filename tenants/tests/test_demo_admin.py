"""The demo superuser of `make run` (tenants/demoadmin.py): only in development mode, with a
password generated per install and printed once; with DEBUG off nobody is created."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import identify_hasher
from django.core.management import call_command

from tenants.demoadmin import DEMO_ADMIN_USERNAME

FIXED = "answerdesk-demo"  # the password every install used to share


def _run() -> str:
    out = io.StringIO()
    call_command("ensure_demo_admin", stdout=out)
    return out.getvalue()


@pytest.fixture
def no_superuser(db: Any) -> None:
    """Committed rows of other tests (the live server's) may hold one; this test's transaction drops them."""
    get_user_model().objects.filter(is_superuser=True).delete()


def test_with_debug_off_no_superuser_is_made_and_the_command_says_so(no_superuser: None, settings: Any) -> None:
    settings.DEBUG = False
    output = _run()
    assert not get_user_model().objects.filter(is_superuser=True).exists()
    assert "DEBUG is off" in output and "createsuperuser" in output
    assert FIXED not in output


def test_in_development_the_password_is_generated_printed_once_and_stored_hashed(no_superuser: None,
                                                                                 settings: Any) -> None:
    settings.DEBUG = True
    output = _run()
    printed = re.search(r"password: (\S+)", output)
    assert printed, output
    password = printed.group(1)
    admin = get_user_model().objects.get(is_superuser=True)
    assert admin.get_username() == DEMO_ADMIN_USERNAME
    assert password != FIXED and len(password) >= 20 and admin.check_password(password)
    assert password not in admin.password and identify_hasher(admin.password)  # only the hash is kept
    assert output.count(password) == 1
    again = _run()  # the next `make run`
    assert password not in again and "password" not in again.lower().replace("changepassword", "")
    assert get_user_model().objects.filter(is_superuser=True).count() == 1


def test_every_install_gets_its_own_password(no_superuser: None, settings: Any) -> None:
    settings.DEBUG = True
    first = re.search(r"password: (\S+)", _run())
    get_user_model().objects.filter(is_superuser=True).delete()  # a second fresh install
    second = re.search(r"password: (\S+)", _run())
    assert first and second and first.group(1) != second.group(1)


def test_no_setting_holds_a_demo_password(settings: Any) -> None:
    assert not hasattr(settings, "DEMO_ADMIN_PASSWORD")
