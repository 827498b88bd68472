"""A research paper's front matter and licence, read as a user asks about them: the people a label lists are its
authors whatever the NER calls them, and a name keeps its version ("Apache 2.0")."""

from __future__ import annotations

from tests.chat.reading import read_as_chat

PAPER = (
    "TideNet: Forecasting Coastal Surges with Graph Networks. Authors: Marit Solheim and Deniz Aydin, Bergen "
    "Institute of Marine Research. We present TideNet, a graph network that forecasts storm surges six hours ahead.",
    "Known issues: TideNet needs GPUs with at least 24 GB of memory, and its station graph must be rebuilt when a gauge "
    "moves. The code is published under the MIT 1.1 licence.",
)


def test_who_wrote_a_paper_is_answered_by_its_authors_line() -> None:
    read = read_as_chat("Who authored the TideNet paper?", *PAPER)
    assert read.answered and read.short == "Marit Solheim and Deniz Aydin", read.text
    wrote = read_as_chat("Who wrote the TideNet paper?", *PAPER)
    assert wrote.answered and wrote.short == "Marit Solheim and Deniz Aydin", wrote.text


def test_a_name_keeps_its_version_number() -> None:
    read = read_as_chat("Which licence covers the TideNet code?", *PAPER)
    assert read.answered and read.short == "MIT 1.1", read.text
