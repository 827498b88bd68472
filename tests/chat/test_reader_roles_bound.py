"""Who holds which role, read from how a sentence binds names to roles (found by the newcomer audit): "the
secretary is A and the treasurer is B", "a studio in Ludlow run by X", "made by the Nuremberg firm Y"."""

from __future__ import annotations

from tests.chat.reading import read_as_chat

SOCIETY = (
    "The Allendale Beekeepers meet in the village hall. The society's chair is Morag Tulloch and its treasurer is "
    "Femi Adebayo.",
    "Old quilts are cleaned by a studio in Ludlow run by Ifeoma Adeyemi.",
    "The society keeps a clockwork Zeppelin made by the Nuremberg firm Lehmann in 1912.",
)


def test_the_name_a_copula_binds_to_the_asked_role_answers_it() -> None:
    read = read_as_chat("Who is the society treasurer?", *SOCIETY)
    assert read.answered and read.short == "Femi Adebayo", read.text  # not the chair named first
    chair = read_as_chat("Who is the chair of the beekeepers?", *SOCIETY)
    assert chair.answered and chair.short == "Morag Tulloch", chair.text


def test_a_place_before_a_passive_is_not_its_doer() -> None:
    read = read_as_chat("Who runs the studio that cleans the quilts?", *SOCIETY)
    assert read.answered and read.short == "Ifeoma Adeyemi", read.text  # not Ludlow


def test_a_firm_is_a_company() -> None:
    read = read_as_chat("Which company made the airship toy?", *SOCIETY)
    assert read.answered and read.short == "Lehmann", read.text
