"""docs/settings.md is generated from config/settings.py and says what every variable is for."""

from __future__ import annotations

from pathlib import Path

from config.settings_doc import SETTINGS, entries, render

DOC = Path(SETTINGS).parent.parent / "docs" / "settings.md"


def test_the_settings_page_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == render(SETTINGS.read_text(encoding="utf-8")), (
        "docs/settings.md is stale: run `.venv/bin/python -m config.settings_doc > docs/settings.md`")


def test_every_variable_says_what_it_is_for() -> None:
    found = entries(SETTINGS.read_text(encoding="utf-8"))
    assert len(found) > 50 and {"ANSWER_PROVIDERS", "DATABASE_URL", "WEBSYNC_MAX_RUN_BYTES"} <= {e.variable for e in found}
    assert [e.variable for e in found if not e.about] == []


def test_forced_fail_a_new_variable_without_a_line_is_caught() -> None:
    source = SETTINGS.read_text(encoding="utf-8") + '\nPLANTED_KNOB = env_int("PLANTED_KNOB", default=3, minimum=1)\n'
    assert render(source) != DOC.read_text(encoding="utf-8")
    planted = [e for e in entries(source) if e.variable == "PLANTED_KNOB"]
    assert planted and planted[0].kind == "integer (≥ 1)" and planted[0].default == "`3`" and not planted[0].about
