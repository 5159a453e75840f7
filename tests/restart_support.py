"""A pyramid destroyed and started again on its card, with two players, which several test
folders share (a module of its own name: every test folder has a ``conftest``, so ``from
conftest import`` could pick another folder's): blue's Queen of Swords territory at 2,2
attacks red's only pyramid at 2,1, and red starts again on that very card. The camera sees
the table before the attack again, as after a hand lifted off a pyramid it covered; blue is
to move either way, so no next move tells the two apart (the players' click does)."""

from __future__ import annotations

from typing import Any

from table_records import make_record

from companion.games.zarcana.engine import ZarcanaState, position
from companion.games.zarcana.moves import parse_move
from companion.games.zarcana.table import TableView

#: blue's territory attack on red's pyramid
TERRITORY_ATTACK = "blue: use swords-13 by blue2N@2,2: attack red1U@2,1"
#: the click that says red's pyramid was destroyed and red started again on its card
DESTROYED = "destroyed: red started again at 2,1"


def restart_start(red: str = "red1U") -> ZarcanaState:
    """Blue to move, blue2N on the Queen of Swords at 2,2 beside red1U at 2,1; ``red``
    other than "red1U" is a second pyramid of red's at 0,0 (red cannot then start again:
    a START is for a player with none on the board). Hands and draw pile nobody sees."""
    board = {"0,0": "swords-05", "0,1": "major-18", "0,2": "cups-09", "1,0": "swords-08",
             "1,1": "pentacles-04", "1,2": "cups-05", "2,0": "major-10", "2,1": "wands-07",
             "2,2": "swords-13"}
    pieces = {"2,2": "blue2N", "2,1": "red1U"}
    if red != "red1U":
        pieces["0,0"] = red
    return position(["red", "blue"], edition="looney", board=board, pieces=pieces,
                    hands={"red": ["?"] * 3, "blue": ["?"] * 3}, deck=["?"] * 63,
                    current="blue")


def restart_pictures(start: ZarcanaState) -> tuple[dict[str, Any], dict[str, Any],
                                                   dict[str, Any]]:
    """What the camera sees (observation records, tests/table_records.py): the table at
    ``start``, after blue's attack (red's pyramid gone), and red's pyramid back at 2,1 (put
    down anew: a little off where the old one stood)."""
    def record_of(st: ZarcanaState) -> dict[str, Any]:
        v = TableView.of(st)
        return make_record(v.cards, v.pyramids)

    again = record_of(start)
    again["pyramids"] = [dict(p, base_center_mm=[p["base_center_mm"][0] + 4.0,
                                                 p["base_center_mm"][1] - 3.0])
                         if p["color"] == "red" else p for p in again["pyramids"]]
    return (record_of(start), record_of(start.apply(parse_move(TERRITORY_ATTACK))), again)
