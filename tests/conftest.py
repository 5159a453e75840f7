"""Fixtures shared by the test folders: the reference card art from shared/decks (never from
the repository; tests that need it skip when that folder is not there) and the shipped
pyramid finder; and, for every test, folders of its own for saved settings and games."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

# One BLAS thread for the tests, set before numpy loads: the deck enrolment's fits ran twice
# as long (11 s against 6 s for one six-card deck, here) when OpenBLAS threads fought the
# other test worker and jobs for a two-core machine's cores. A user's own setting stands.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


@pytest.fixture(autouse=True)
def own_config_and_data(tmp_path_factory: pytest.TempPathFactory,
                        monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the user's saved camera file, colour profile, decks or games:
    each gets empty folders of its own (a test may point them elsewhere)."""
    home = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))


@pytest.fixture(scope="session")
def shared() -> Path:
    from vision.synth.deck import shared_dir

    sd = shared_dir()
    if sd is None or not (sd / "decks" / "rws-tarot").is_dir():
        pytest.skip("shared/decks not found (set ARCANA_SHARED)")
    return sd


@pytest.fixture(scope="session")
def tarot(shared: Path) -> Any:
    from vision.synth.deck import load_deck

    return load_deck(shared / "decks" / "rws-tarot")


@pytest.fixture(scope="module")
def finder() -> Any:
    """The shipped pyramid finder, one per test module (it keeps the last camera's maps)."""
    from calibration.mat import DEFAULT_MAT
    from models import ModelError
    from vision.pyramids import PyramidFinder

    try:
        return PyramidFinder(DEFAULT_MAT)
    except ModelError as exc:
        pytest.skip(f"pyramid models not shipped: {exc}")


#: red's Wheel of Fortune build in :func:`wheel_build_start`: it lays 1,0 face down
_WHEEL_BUILD = "red: play major-10 by red1E@0,0: build 1,0 =?"


@pytest.fixture
def wheel_build_start() -> Any:
    """A two-player Looney game, red to move with the Wheel of Fortune (major-10) in hand and
    a piece at 0,0: red can lay a card face down at 1,0 (:data:`_WHEEL_BUILD`)."""
    from companion.games.zarcana.engine import position

    # (70 unknown cards in the deck: with the 75 cards not named here that is all of them.
    # The copies this replaces had 60, a position a game file's replay refuses to load)
    return position(["red", "blue"], edition="looney",
                    board={"0,0": "cups-03", "0,1": "swords-02"}, pieces={"0,0": "red1E"},
                    hands={"red": ["major-10", "?", "?"], "blue": ["?"] * 3}, deck=["?"] * 70)


@pytest.fixture
def face_down_named_game(tmp_path: Path, wheel_build_start: Any) -> Path:
    """A recorded game (its file): red's Wheel of Fortune build from :func:`wheel_build_start`,
    blue draws, and a correction names the face-down card at 1,0 cups-05."""
    from companion.games.zarcana.engine import dumps
    from companion.recording.store import GameRecorder

    start = wheel_build_start
    built = start.apply(_WHEEL_BUILD)
    drawn = built.apply("blue: draw 1")
    named = drawn.copy()
    named.board[(1, 0)] = (("cups-05", False),)
    path = tmp_path / "g.db"
    with GameRecorder.create(path, game="zarcana", edition="looney", players=["red", "blue"],
                             settings=start.settings.to_dict(),
                             initial_state=dumps(start)) as rec:
        rec.record("move", _WHEEL_BUILD, player="red", state=dumps(built))
        rec.record("move", "blue: draw 1", player="blue", state=dumps(drawn))
        rec.record("correction", None, state=dumps(named),
                   note="the face-down card at 1,0 is cups-05")
    return path


@pytest.fixture
def alchemist_covered_game(tmp_path: Path) -> Any:
    """A maker of recorded games (their files): red's Alchemist builds twice at 1,0 from a
    draw pile nobody sees, blue's attack destroys the top card (``alchemist_support``)
    and the camera sees the card uncovered, cups-04; then red draws. ``when``: the
    correction naming it is recorded before the attack ("before"), after it ("after": the
    attack was clicked first), or not at all (None: the card was never seen)."""
    from alchemist_support import ALCHEMIST_COVERING, ALCHEMIST_UNCOVERING, alchemist_start

    from companion.games.zarcana.engine import dumps
    from companion.recording.store import GameRecorder, covered_name_line

    def make(when: str | None) -> Path:
        start = alchemist_start()
        built = start.apply(ALCHEMIST_COVERING)
        named = built.copy()
        named.board[(1, 0)] = (("swords-05", True), ("cups-04", True), ("wands-07", True))
        path = tmp_path / f"alchemist-{when}.db"
        with GameRecorder.create(path, game="zarcana", edition="1996",
                                 players=["red", "blue"], settings=start.settings.to_dict(),
                                 initial_state=dumps(start)) as rec:
            rec.record("move", ALCHEMIST_COVERING, player="red", state=dumps(built))
            if when == "before":
                rec.record("correction", covered_name_line("before", "1,0", "cups-04"),
                           state=dumps(named), note="the card the Alchemist covered at 1,0 "
                           "is cups-04: seen on the table as the attack uncovered it")
                attacked = named.apply(ALCHEMIST_UNCOVERING)
                rec.record("move", ALCHEMIST_UNCOVERING, player="blue", state=dumps(attacked))
            else:
                attacked = built.apply(ALCHEMIST_UNCOVERING)
                rec.record("move", ALCHEMIST_UNCOVERING, player="blue", state=dumps(attacked))
            if when == "after":
                attacked = attacked.copy()
                attacked.board[(1, 0)] = (("swords-05", True), ("cups-04", True))
                rec.record("correction", covered_name_line("after", "1,0", "cups-04"),
                           state=dumps(attacked), note="the card the Alchemist covered at "
                           "1,0 is cups-04: seen on the table after the attack")
            rec.record("move", "red: draw 1", player="red",
                       state=dumps(attacked.apply("red: draw 1")))
        return path

    return make
