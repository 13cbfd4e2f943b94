from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from answering.pipeline.greetings import match_greeting

SHARED = Path(__file__).resolve().parents[3] / "shared" / "eval"
GOLDEN_FILES = sorted(SHARED.glob("*.yaml")) + sorted((Path(__file__).resolve().parents[2] / "evaluation" / "golden").glob("*.yaml"))


@pytest.mark.parametrize("text", ["hi", "Hello!", "hey there", "Good morning 👋", "thanks", "Thank you so much!",
                                  "ok, thanks", "bye", "Have a nice day", "who are you?", "What can you do"])
def test_small_talk_is_matched(text: str) -> None:
    assert match_greeting(text) is not None


@pytest.mark.parametrize("text", ["Dobrý den", "Děkuji moc!", "Na shledanou", "Kdo jste?",
                                  # Slovak (issue 49 item 5): "Dobrý deň" went to retrieval and escalated
                                  "Dobrý deň", "Ďakujem pekne!", "Ďakujem veľmi pekne", "Vďaka", "Dovidenia",
                                  "Pekný deň", "Kto ste?", "Si robot?"])
def test_czech_and_slovak_small_talk_is_matched(text: str) -> None:
    assert match_greeting(text) is not None


@pytest.mark.parametrize("text", ["Dobrý deň, kedy mi príde zásielka?", "Ďakujem, ale balík neprišiel",
                                  "Kto ste zásielku doručoval?"])
def test_slovak_questions_are_not_intercepted(text: str) -> None:
    assert match_greeting(text) is None


@pytest.mark.parametrize("text", ["hi, how do I rotate my API key?", "thanks, but the refund never arrived",
                                  "hello? my webhook is failing", "what are your prices", "bye bye button is broken",
                                  "", "hi" * 50])
def test_questions_are_not_intercepted(text: str) -> None:
    assert match_greeting(text) is None


def test_no_golden_question_or_history_turn_is_intercepted() -> None:
    assert GOLDEN_FILES, "no golden sets found"
    intercepted = []
    for path in GOLDEN_FILES:
        for case in yaml.safe_load(path.read_text())["cases"]:
            if case.get("type") == "greeting":
                continue
            texts = [case["question"], *[t["content"] for t in case.get("history") or [] if t["role"] == "user"]]
            intercepted += [f"{path.name}:{case['id']}: {t!r}" for t in texts if match_greeting(t)]
    assert intercepted == []
