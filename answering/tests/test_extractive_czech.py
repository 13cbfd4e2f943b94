"""The extractive answerer on Czech text (issue 22): sentences split where Czech sentences end,
never at a Czech abbreviation, and Czech pointers and list openers are filler."""

from __future__ import annotations

import pytest

from answering.pipeline.extractive import is_filler, split_sentences

# Each sentence holds an abbreviation followed by a capital or a digit, where a naive splitter
# cuts it in two.
WHOLE = [
    "Platit můžete kartou, např. Visa nebo Mastercard, i převodem na účet.",
    "Zboží odešleme do druhého dne, tj. 24 hodin od zaplacení objednávky.",
    "Přijímáme granule, konzervy, pamlsky atd. Od všech výrobců, které vedeme.",
    "Vrátit lze hračky, obojky apod. Zboží musí být nepoužité a v obalu.",
    "Dopravu platí kupující, resp. Zásilkovna podle jejích podmínek.",
    "Reklamaci vyřizuje mj. Oddělení péče o zákazníky do třiceti dnů.",
    "Body získáte za tzv. Věrnostní program, který je zdarma pro všechny.",
    "Podrobnosti stanoví čl. 5 obchodních podmínek, které platí od ledna.",
    "Obchod provozuje Tlapka s. r. o. Praha, zapsaná v obchodním rejstříku.",
]


@pytest.mark.parametrize("sentence", WHOLE)
def test_a_czech_abbreviation_does_not_end_the_sentence(sentence: str) -> None:
    assert split_sentences(sentence) == [sentence]


def test_a_czech_sentence_starting_with_a_diacritic_capital_is_split() -> None:
    """The control: a real boundary before `Č` is one (the splitter knew only A-Z)."""
    text = "Objednávku odešleme do druhého dne. Čekáte-li déle, napište nám na podporu."
    assert split_sentences(text) == ["Objednávku odešleme do druhého dne.", "Čekáte-li déle, napište nám na podporu."]


@pytest.mark.parametrize("sentence", [
    "Více informací najdete v sekci Doprava a platba.",
    "Další informace naleznete v obchodních podmínkách.",
    "Viz obchodní podmínky, článek 5, odstavec 2.",
    "Podrobnosti najdete na stránce Reklamace.",
    "Jak je uvedeno výše, zboží lze vrátit.",
    "V této sekci popisujeme, jak nakupovat.",
    "Platit můžete následujícími způsoby:",
    "Mezi podporované dopravce patří například tyto:",
])
def test_czech_filler(sentence: str) -> None:
    assert is_filler(sentence)


@pytest.mark.parametrize("sentence", [
    "Dopravu zdarma nabízíme u objednávek nad 1 500 Kč.",
    "Následující pracovní den vám zboží doručíme.",
    "Zboží lze vrátit do 30 dnů bez udání důvodu.",
])
def test_czech_facts_are_not_filler(sentence: str) -> None:
    assert not is_filler(sentence)
