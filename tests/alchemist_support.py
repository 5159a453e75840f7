"""The Alchemist scene several test folders share (a module of its own name: every test
folder has a ``conftest``, so ``from conftest import`` could pick another folder's): a
two-player 1996 game, the Alchemist an optional trump, hands and draw pile nobody sees;
red's Alchemist builds twice at 1,0, the first card covered at once and left unnamed, and
blue's Swords attack then destroys the top card, bringing the covered one into view
(cups-04, in :func:`alchemist_pictures`)."""

from __future__ import annotations

from typing import Any

from table_records import make_record

from companion.games.zarcana.engine import ZarcanaState, position
from companion.games.zarcana.table import TableView

#: the settings that make major-09 the Alchemist
ALCHEMIST_SETTINGS: dict[str, Any] = {"optional_trumps": (("major-09", "alchemist"),)}
#: red's Alchemist: two builds at 1,0 from the draw pile nobody sees
ALCHEMIST_COVERING = ("red: play major-09 as alchemist by red1E@0,0: build 1,0 =?; "
                      "build 1,0 =wands-07")
#: blue's attack destroying the top card at 1,0
ALCHEMIST_UNCOVERING = "blue: play swords-03 by blue1N@1,1: attack @1,0"


def alchemist_start() -> ZarcanaState:
    """The position before red's Alchemist, as the camera knows it (hands and pile "?")."""
    return position(["red", "blue"], edition="1996",
                    board={"0,0": "cups-03", "1,0": "swords-05", "0,1": "swords-02",
                           "1,1": "cups-08"},
                    pieces={"0,0": "red1E", "1,1": "blue1N"},
                    hands={"red": ["?"] * 3, "blue": ["?"] * 3}, deck=["?"] * 68,
                    **ALCHEMIST_SETTINGS)


def alchemist_pictures() -> tuple[dict[str, Any], dict[str, Any]]:
    """What the camera sees (observation records, tests/table_records.py) after red's
    Alchemist, wands-07 on top at 1,0 and the Alchemist on the discard pile, and after
    blue's attack, the card it uncovers there in view: cups-04."""
    view = TableView.of(alchemist_start())
    covering = make_record({**view.cards, (1, 0): "wands-07"}, view.pyramids,
                           discard=["major-09"])
    uncovering = make_record({**view.cards, (1, 0): "cups-04"}, view.pyramids,
                             discard=["major-09", "wands-07", "swords-03"])
    return covering, uncovering
