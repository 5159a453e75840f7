"""The live referee: settled table observations in, accepted moves and plain-words events out.

A :class:`LiveSession` follows one Zarcana game at a real table. A window (or the headless
demo) feeds it settled observations (:meth:`LiveSession.observe`) and the user's clicks
(:meth:`LiveSession.manual`, :meth:`LiveSession.override`, :meth:`LiveSession.correct`,
:meth:`LiveSession.step_back`, :meth:`LiveSession.end_game`); every call returns the
:class:`LiveEvent` list it produced, and the same events go to every subscribed listener
(:meth:`LiveSession.subscribe`), so a Qt controller can re-emit them as signals.

The session knows nothing of Qt or OpenCV and is thread-safe: calls are serialised by a lock,
so a capture worker may call ``observe`` while the window thread calls ``manual``.

Lifecycle (:class:`Status`):

* ``SETUP``: waiting for the dealt board; the first trusted observation with cards deals it
  (:func:`~companion.games.zarcana.table.game_from_table`), unless an initial state was given.
* ``PLAYING``: each settled observation is matched against the engine. A legal move that
  explains the change is accepted; a table equal to the state is ``unchanged``.
* ``WRONG_TABLE``: an illegal change was reported; the session waits until the table is put
  right (an observation matching the state, or a legal move from it) or :meth:`override`.
* ``QUESTION``: a change no move explains but one misread would; the user answers with
  :meth:`correct` (or puts the table right).
* ``OVER``: the game has ended.
"""

from __future__ import annotations

import enum
import logging
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Protocol, TypeVar

from companion.core.cards import BACK, CardInfo, card_info
from companion.core.errors import CompanionError, IllegalMoveError, NotationError
from companion.core.observation import Observation
from companion.core.pieces import (
    DIRECTIONS,
    Cell,
    Color,
    Minion,
    Pose,
    Pyramid,
    format_cell,
    neighbours,
    parse_cell,
    parse_pyramid,
)
from companion.core.verdict import Verdict
from companion.games.zarcana.engine import ZarcanaState, dumps
from companion.games.zarcana.moves import (
    UNKNOWN,
    Action,
    Bid,
    DeclareEnd,
    Draw,
    Move,
    Pass,
    Reorient,
    Reveal,
    Source,
    Start,
    Turn,
    parse_move,
)
from companion.games.zarcana.rules import Edition, Settings
from companion.games.zarcana.state import (
    FaceDownNames,
    FoolDraw,
    FoolPlay,
    PlagueCull,
    PlagueRaze,
    TaxDue,
    name_back,
    names_forgotten,
    names_given,
    with_names,
)
from companion.games.zarcana.table import (
    Explanation,
    MovesTried,
    PyramidsShort,
    TableView,
    ThreeMoves,
    TwoMoves,
    broken_short,
    candidate_moves,
    diff,
    explain,
    explain_three,
    explain_two,
    face_down_named,
    fill_builds,
    game_from_table,
    pyramids_short,
    unseen_uses,
)
from companion.live.tablestate import (
    DISCARD_ZONE,
    TAROT_CARD_MM,
    Lattice,
    TableReading,
    TableTracker,
    as_observation,
    stacks_of,
)
from companion.live.trials import Trials
from companion.recording.store import Backlog, covered_name_line, pile_name_line


def _table_mat(mat: Any) -> dict[str, Any] | None:
    """What the game file keeps of the mat: a printed one whole; a table without one as
    ``printed: false`` and the play area's size (a replay then draws no zones)."""
    if mat is None or not hasattr(mat, "width_mm"):
        return None
    if getattr(mat, "printed", True) and hasattr(mat, "to_dict"):
        out: dict[str, Any] = mat.to_dict()
        return out
    return {"printed": False, "width_mm": float(mat.width_mm),
            "height_mm": float(mat.height_mm)}


class EventKind(str, enum.Enum):
    """What an event reports; the values are the strings a window or log shows."""

    ACCEPTED = "accepted"        # a move was accepted (camera, click, override)
    ILLEGAL = "illegal"          # the table shows a change that breaks the rules
    QUESTION = "question"        # a change that one misread would explain: please check
    WAITING = "waiting"          # nothing to do until the table is dealt / put right
    UNCHANGED = "unchanged"      # a settled table equal to the game state
    CAMERA_LOST = "camera_lost"  # the frame source failed (reason in ``text``)
    CAMERA_BACK = "camera_back"  # the frame source delivers again
    FRAME_SKIPPED = "frame_skipped"  # one frame could not be read or observed (why in text)
    NOT_RECORDED = "not_recorded"    # the game file cannot be written now (why in text)
    RECORDED_AGAIN = "recorded_again"  # it can again: every event held back is in it
    GAME_OVER = "game_over"      # the game ended; ``text`` has the final scores
    INFO = "info"                # anything else worth a line in the log


@dataclass(frozen=True)
class CardCorrection:
    """"The card read as ``seen`` at ``where`` is really ``actual``."

    ``where`` is a lattice cell, or ``"discard"`` for the top of the discard pile.
    """

    where: Cell | str
    seen: str
    actual: str

    def describe(self) -> str:
        place = self.where if isinstance(self.where, str) else f"{self.where[0]},{self.where[1]}"
        return f"the card at {place} is {self.actual}, not {self.seen}"


@dataclass(frozen=True)
class PyramidCorrection:
    """"The pyramid read as ``seen`` at ``cell`` is really ``actual`` at ``actual_cell``."

    ``actual`` None: there is no such pyramid (a false sighting). ``actual_cell`` None: the
    pyramid stands where it was seen.
    """

    cell: Cell
    seen: Pyramid
    actual: Pyramid | None
    actual_cell: Cell | None = None

    def describe(self) -> str:
        where = f"{self.cell[0]},{self.cell[1]}"
        if self.actual is None:
            return f"there is no {self.seen.describe()} at {where}"
        dest = self.actual_cell if self.actual_cell is not None else self.cell
        return (f"the {self.seen.describe()} at {where} is a {self.actual.describe()} "
                f"at {dest[0]},{dest[1]}")


Correction = CardCorrection | PyramidCorrection


def correction_text(c: Correction) -> str:
    """A correction in a line the game file keeps (its event's ``move``) and
    :func:`parse_correction` reads back: ``card 1,2 cups-01=cups-07``, ``card discard
    swords-01=swords-11``, ``pyramid 1,2 green1S=green1U``, ``pyramid 2,1 blue2U=blue2U@2,2``,
    ``pyramid 3,1 green1U=none``."""
    if isinstance(c, CardCorrection):
        where = c.where if isinstance(c.where, str) else format_cell(c.where)
        return f"card {where} {c.seen}={c.actual}"
    actual = "none" if c.actual is None else str(c.actual)
    at = f"@{format_cell(c.actual_cell)}" if c.actual_cell is not None else ""
    return f"pyramid {format_cell(c.cell)} {c.seen}={actual}{at}"


#: How a few pyramids alike are counted in words.
NUMBER_WORDS = {2: "two", 3: "three", 4: "four"}


def pyramid_words(p: Pyramid, cell: Cell, cards: Mapping[Cell, str], n: int = 1) -> str:
    """A pyramid as the players see it, with the card it stands on (``cards``: the top card
    of each cell): ``the red small (upright) pyramid on the 9 of Cups at 0,2``; ``n`` of
    them alike there: ``the two red small (upright) pyramids on ...``."""
    card = cards.get(cell)
    if card is None:
        on = "in the wasteland"
    elif card == BACK:
        on = "on a face-down card"
    else:
        try:
            info = card_info(card)
        except NotationError:
            on = "on a card not yet named"
        else:
            name = info.name
            on = ("on the " + name[4:] if name.startswith("The ") else
                  "on the " + name if not info.is_major or " of " in name else "on " + name)
    what = (f"{p.describe()} pyramid" if n == 1 else
            f"{NUMBER_WORDS.get(n, str(n))} {p.describe()} pyramids")
    return f"the {what} {on} at {format_cell(cell)}"


def _pyramids_words(missing: Sequence[tuple[Pyramid, Cell]], cards: Mapping[Cell, str]) -> str:
    """Pyramids not seen, each as the players see it (two alike in one cell said once)."""
    alike = Counter(missing)
    return " and ".join(pyramid_words(p, cell, cards, n) for (p, cell), n in alike.items())


def _same_illegal(before: Explanation | None, now: Explanation) -> bool:
    """Whether two rulings find a rule-breaking move in common (one table seen twice, or
    seen with pyramids hidden, where several moves fit it: the one that took the pyramid
    hidden could have gone anywhere)."""
    return before is not None and bool({v.move for v in before.illegal}
                                       & {v.move for v in now.illegal})


def parse_correction(text: str) -> Correction:
    """The correction :func:`correction_text` wrote; NotationError for anything else."""
    parts = text.split()
    if len(parts) != 3 or parts[0] not in ("card", "pyramid") or parts[2].count("=") != 1:
        raise NotationError(f"bad correction {text!r}: expected 'card CELL SEEN=ACTUAL' or "
                            "'pyramid CELL SEEN=ACTUAL[@CELL]'", text)
    kind, where, change = parts
    seen, actual = change.split("=")
    if not seen or not actual or actual.startswith("@"):
        raise NotationError(f"bad correction {text!r}: what was seen and what it is must "
                            "both be named", text)
    if kind == "card":
        return CardCorrection(where if where == DISCARD_ZONE else parse_cell(where), seen, actual)
    actual, _, dest = actual.partition("@")
    return PyramidCorrection(parse_cell(where), parse_pyramid(seen),
                             None if actual == "none" else parse_pyramid(actual),
                             parse_cell(dest) if dest else None)


@dataclass(frozen=True)
class Suggestion:
    """One other reading that would make the table legal: what to ask the user."""

    correction: Correction
    move: str | None   # the legal move it would explain; None: the table would be unchanged
    text: str          # plain words, e.g. "is the card at 1,2 cups-07 (not cups-01)?"


@dataclass(frozen=True)
class LiveEvent:
    """One thing the session reports. Frozen; ``text`` is plain words for the log."""

    kind: EventKind
    text: str
    move: str | None = None                   # the move concerned, in engine notation
    player: str | None = None                 # whose move or turn it is about
    verdicts: tuple[str, ...] = ()            # broken rules in plain words (illegal)
    rules: tuple[str, ...] = ()               # their stable ids, e.g. "wands.upright"
    changes: tuple[str, ...] = ()             # what changed, e.g. "2,1: card X removed"
    suggestions: tuple[Suggestion, ...] = ()  # for a question: readings that would be legal
    frame: int | None = None                  # index of the frame that caused it
    source: str = "camera"                    # camera, click, override, correction, undo, system
    #: what the players should know beyond the line itself and act on (a move read again,
    #: one accepted from a picture taken before a click, a card named from the picture
    #: after a clicked move): the window keeps it on show
    notice: str | None = None


class Status(str, enum.Enum):
    SETUP = "setup"
    PLAYING = "playing"
    WRONG_TABLE = "wrong_table"
    QUESTION = "question"
    OVER = "over"


@dataclass(frozen=True)
class HistoryEntry:
    """One accepted move and the state after it."""

    kind: str                 # "move" (seen), "manual" (clicked), "override"
    move: str                 # as the engine recorded it
    player: str
    state: Any                # ZarcanaState after the move
    frame: int | None = None
    time_s: float | None = None
    #: the face-down cards this move destroyed whose names were read off the discard pile
    #: (:meth:`LiveSession._face_down_seen`): forgotten when the move is taken back
    named_from_pile: FaceDownNames = field(default_factory=dict, compare=False)

    @classmethod
    def recorded(cls, kind: str, move: str | None, player: str | None, note: str,
                 state: Any, named_from_pile: FaceDownNames | None = None) -> "HistoryEntry":
        """The entry of a move read back from a game file (kind "move" or "override", as
        the session records them; a click is a "move" with :data:`CLICKED_NOTE`).
        ``named_from_pile``: :func:`~companion.games.zarcana.state.names_read_off_the_pile`,
        where the correction recorded just before the move says so."""
        if kind != "override":
            kind = "manual" if note == CLICKED_NOTE else "move"
        return cls(kind, move or "", player or "", state, named_from_pile=named_from_pile or {})


#: how the correction recorded before a move that destroyed a face-down card says that the
#: card's name was read off the discard pile (:meth:`LiveSession._face_down_seen`), then
#: "as" the move destroyed it, or "under" a later move's card that covered it; or after
#: the move (:meth:`LiveSession._face_down_seen_later`). Words for the players: the game
#: file's reader goes by the correction's line (recording.store.pile_name_line)
PILE_NAME_NOTE = "seen on the discard pile"


#: how the correction that names a card the Alchemist covered at once says that the camera
#: saw it as a move took the card above it away (:meth:`LiveSession._uncovered_seen`,
#: :meth:`LiveSession._uncovered_seen_later`); the game file's reader goes by the line
#: (recording.store.covered_name_line)
COVERED_NAME_NOTE = "seen on the table"
#: how it says that the players named it where no picture could (:meth:`LiveSession.name_card`)
PLAYERS_NAME_NOTE = "named by the players"


#: the note a move clicked in the window is recorded with
CLICKED_NOTE = "clicked by a player"

#: how the click that says an attack taken back as only covered was made begins (its
#: pyramid's player started again on that card: :meth:`LiveSession.manual_options`)
DESTROYED_CLICK = "destroyed:"


class Recorder(Protocol):
    """What the session needs of a game recorder (companion.recording.store.GameRecorder)."""

    def record(self, kind: str, move: str | None, *, player: str | None = None,
               observation: Mapping[str, Any] | None = None,
               keyframe_jpeg: bytes | None = None, state: Any = None,
               note: str | None = None, at: datetime | None = None) -> Any: ...

    def finish(self, scores: Mapping[str, int], winners: Sequence[str], *,
               at: datetime | None = None) -> Any: ...

    def close(self) -> Any: ...


Listener = Callable[[LiveEvent], None]
T = TypeVar("T")


# ============================================================================ session ===

log = logging.getLogger(__name__)

#: How long (s) the misread search may take before it gives up asking. This budget,
#: TWO_MOVES_BUDGET_S and THREE_MOVES_BUDGET_S are of the searching thread's CPU time
#: (:func:`time.thread_time`), not the wall clock's: a machine busy with other work
#: reaches the same verdicts, later (a search cut short by the load once judged two moves
#: as one, so a replay differed).
MISREAD_BUDGET_S = 1.5
#: How long (s) the search for two moves seen at once (a picture missed between them) may
#: take; past it the table is judged as one move's.
TWO_MOVES_BUDGET_S = 1.0
#: A card under the discard pile's top names the face-down territory a move destroyed (its
#: card covered by a later move's before a picture showed it) only where the camera read it
#: with at least this confidence (the detector's score times the name's): the vision
#: pipeline keeps a card it is unsure of with its nearest id and a low confidence, and a
#: wrong name stands for good (the cards under the top are never compared again); the
#: players are told the card is not known instead, and name it with a click. Measured
#: (2026-12-02) with `python bench/pile_names.py --seed 587000 --count-per-group 1000` and
#: `--seed 588000` (6,000 dev renders, tarot; docs/vision-tuning.md, PILE_NAME_SURE): of
#: 1,762 reads of cards partly hidden by other cards, 88 wrong, a floor of 0.5 / 0.7 / 0.8
#: / 0.9 keeps 94 / 87 / 80 / 50 % of the right names and lets 24 / 14 / 11 / 4 wrong ones
#: through, 1.5 / 0.95 / 0.8 / 0.5 % of the names kept. 0.8 is the lowest floor clearly
#: under 1 % (0.7 would save a click on 7 % more cards for 3 more wrong names). Cards half
#: to 95 % uncovered alone would allow 0.5 (0.6 %), but a card under a pile's top mostly
#: shows less: of the reads of cards less than half uncovered, 45 of 97 are wrong and half
#: or more of those kept at any floor up to 0.85; the 6 reads of a card under a pile's top
#: were all wrong (two at 0.86 and 0.90).
PILE_NAME_SURE = 0.8
#: A note of an event the game file lacks is cut to this many characters where the run
#: says what is missing (a move's own text is always said whole).
UNWRITTEN_NOTE_CHARS = 80
#: The same for three moves seen at once (two pictures missed), searched only where no
#: single move and no two moves explain the table, and neither a broken rule nor a misread
#: does, or part of the table is covered or turned face down (a territory one of them
#: destroyed).
THREE_MOVES_BUDGET_S = 2.0
#: How many searches for moves seen at once are remembered (:meth:`LiveSession._moves_at_once`):
#: enough for every top card of a pile of three new cards in no known order, two moves and
#: three, and the table seen before (a camera going back and forth between two tables).
SEARCHES_KEPT = 8
#: How many of the last moves a table taken back by hand is compared against (each one is
#: one more position to compare, and only when no move explains the table).
TAKE_BACK_DEPTH = 4
#: At most this many pyramids of the game not seen on a picture are waited on once, as
#: hidden or missed by the camera (a hand or an arm over them), before the table is ruled on.
MISSED_PYRAMIDS = 2
#: The tables waited on for pyramids not seen since the last move, remembered to be ruled
#: on when seen again (the camera missing another pyramid on every other picture).
MISSED_WAITS_KEPT = 16
#: This many territories missing from one view means the table is covered, not a move: no
#: Zarcana move destroys more than two at once (a double attack).
OCCLUDED_CARDS = 3


class LiveError(CompanionError, ValueError):
    """A request the session cannot carry out now (the message says why)."""


@dataclass(frozen=True)
class _Pending:
    """The wrong table or the question the session is waiting on."""

    reading: TableReading
    record: Observation
    explanation: Explanation | None = None
    suggestions: tuple[Suggestion, ...] = ()
    frame: int | None = None


def _click_options(st: ZarcanaState, watch_discard: bool = True) -> list[str]:
    """The legal moves the camera cannot see, for the player to move in ``st``
    (``watch_discard`` off: the discard pile is not seen either)."""
    who = st.to_move
    if who is None or st.is_over:
        return []
    top = st.pending[-1] if st.pending else None
    if st.phase == "bid" or isinstance(top, (TaxDue, PlagueCull, PlagueRaze, FoolDraw)):
        return [str(m) for m in st.legal_moves() if not isinstance(m, Action)]
    if isinstance(top, FoolPlay):
        return []  # the drawn card is played on the table (or discarded by the engine)
    out: list[Move] = [Draw(who, n) for n in range(1, st.settings.draw_amount + 1)]
    out += [Pass(who), DeclareEnd(who)]
    return [str(m) for m in out if st.check(m).legal] + [
        str(m) for m in unseen_uses(st, with_discard=watch_discard)]


@dataclass(frozen=True)
class _HeldMoves:
    """Two or three moves seen on one picture (the pictures between them missed), held
    until the next picture or a click agrees."""

    moves: tuple[Move, ...]
    states: tuple[ZarcanaState, ...]    # the state after each
    reading: TableReading       # the picture that shows them
    record: Observation
    frame: int | None
    before: ZarcanaState        # the state they start from
    #: why the face-down card one of them destroyed is not named from the card seen under
    #: the pile's top (:meth:`LiveSession._pile_named`); None: no doubt
    unsure: str | None = None
    #: per move, the position it is made in with the cards the Alchemist covered that it
    #: uncovers named (:attr:`TwoMoves.named`), None where it uncovers none; empty: none
    named: tuple[ZarcanaState | None, ...] = ()
    #: the move, breaking a rule, that explains the same picture alone: the moves are
    #: asked about beside it (:meth:`LiveSession._ruling`), not held for a picture to agree
    beside: Verdict | None = None

    @classmethod
    def of(cls, run: TwoMoves | ThreeMoves, reading: TableReading, record: Observation,
           frame: int | None, before: ZarcanaState) -> _HeldMoves:
        moves: tuple[Move, ...]
        states: tuple[ZarcanaState, ...]
        if isinstance(run, TwoMoves):
            moves, states = (run.first, run.second), (run.middle, run.after)
        else:
            moves = run.moves
            states = (run.middle, run.rest.middle, run.rest.after)
        named = run.named if any(n is not None for n in run.named) else ()
        return cls(moves, states, reading, record, frame, before, named=named)

    @property
    def after(self) -> ZarcanaState:
        return self.states[-1]

    @property
    def count(self) -> str:
        """"two moves" or "three moves"."""
        return f"{'two' if len(self.moves) == 2 else 'three'} moves"

    @property
    def since(self) -> str:
        """"two moves since the last picture", with ", ending the game" where they do."""
        ending = ", ending the game" if self.after.is_over else ""
        return f"{self.count} since the last picture{ending}"

    @property
    def words(self) -> str:
        """The moves in the players' notation, in order: "A, then B(, then C)"."""
        return ", then ".join(str(m) for m in self.moves)

    @property
    def missed(self) -> str:
        """What the camera missed, in the game file's notes."""
        return ("the picture between them was missed" if len(self.moves) == 2 else
                "the two pictures between them were missed")

    @property
    def steps(self) -> list[tuple[Move, ZarcanaState, ZarcanaState | None]]:
        """Each move with the state after it, up to the one that ends the game, and the
        position it is made in with the cards it uncovers named (:attr:`named`; None:
        none)."""
        out: list[tuple[Move, ZarcanaState, ZarcanaState | None]] = []
        for k, (mv, after) in enumerate(zip(self.moves, self.states)):
            out.append((mv, after, self.named[k] if self.named else None))
            if after.is_over:
                break
        return out

    @property
    def ends_early(self) -> bool:
        """Whether a move before the last ends the game (the rest could not follow)."""
        return any(st.is_over for st in self.states[:-1])


@dataclass(frozen=True)
class _Restarted:
    """The other reading of an attack taken back as a hand over the pyramid it took off
    (:meth:`LiveSession._only_covered`): the attack was made, and the pyramid's player,
    left with none, started again on that very card (a START places a small upright
    pyramid, as the one destroyed may have been). The table is the same either way; the
    next move tells, as only one of the two positions lets it be made."""

    at: ZarcanaState            # the position the attack was taken back to
    attack: HistoryEntry        # the attack taken back
    start: Start                # the start that put the pyramid back
    after: ZarcanaState         # the game after the attack and the start
    record: Observation         # the picture that showed the pyramid back
    frame: int | None
    time_s: float | None
    words: str                  # the pyramid, in the players' words

    @property
    def click(self) -> str:
        """The click that says so (:meth:`LiveSession.manual_options`)."""
        return (f"{DESTROYED_CLICK} {self.start.player.value} started again at "
                f"{format_cell(self.start.cell)}")

    @property
    def turn_tells(self) -> bool:
        """Whether the turn tells the two readings apart (three players or more: after the
        start the player after the pyramid's is to move, before the attack the attacker;
        with two, the attacker either way)."""
        return self.after.to_move != self.at.to_move


def _asked(held: _HeldMoves) -> bool:
    """Whether moves seen at once are asked about rather than held for the next picture to
    agree (:meth:`LiveSession._ask_held`): three of them, or any that end the game (nothing
    follows them to agree)."""
    return (len(held.moves) == 3 or held.ends_early or held.after.is_over
            or held.beside is not None)


class LiveSession:
    """Follows one Zarcana game at a real table and referees it move by move.

    ``players``: colours in turn order. ``edition``: "1996" or "looney" (default Looney).
    ``settings``: a :class:`~companion.games.zarcana.rules.Settings` or a mapping of setting
    overrides (e.g. ``{"box_cards": 50}``). ``recorder``: anything with the ``record`` /
    ``finish`` / ``close`` shape of :class:`Recorder` (optional). ``mat``: the calibration mat
    (its ``discard`` and ``draw`` zones; without a discard zone the discard pile is ignored).
    ``initial_state``: start from a known position instead of dealing from the first settled
    table. ``lattice``: fix the lattice instead of learning it. ``history``: the moves already
    played from ``initial_state`` (a recorded game continued), so the log shows the whole game
    and a step back can take back a move of the earlier sitting.
    """

    def __init__(self, game: str = "zarcana", edition: Edition | str | None = None,
                 players: Sequence[Color | str] = ("red", "blue", "green"),
                 settings: Settings | Mapping[str, Any] | None = None, seed: int | None = None,
                 recorder: Recorder | None = None, mat: Any = None, *,
                 initial_state: ZarcanaState | None = None,
                 card_size_mm: tuple[float, float] = TAROT_CARD_MM, hand_size: int = 3,
                 lattice: Lattice | None = None,
                 history: Sequence[HistoryEntry] = ()) -> None:
        if game != "zarcana":
            raise LiveError(f"game {game!r} is not followed live yet: only 'zarcana' is")
        if not players:
            raise LiveError("a game needs at least one player")
        self.game = game
        self.players = tuple(p if isinstance(p, Color) else Color.parse(p) for p in players)
        self.edition = edition
        self._settings_obj = settings if isinstance(settings, Settings) else None
        self._overrides: dict[str, Any] = dict(settings) if isinstance(settings, Mapping) else {}
        self.seed = seed
        # (a hand size among the settings is the one dealt)
        self.hand_size = int(self._overrides.pop("hand_size", hand_size))
        self.recorder = recorder
        #: what the recorder could not write yet (a full disk, a lock), tried again at every
        #: new event and at close()
        self._backlog = Backlog()
        self._record_news: list[LiveEvent] = []
        self._recorder_closed = False
        self.tracker = TableTracker(mat, card_size_mm=card_size_mm, lattice=lattice)
        #: what the game is played on, kept with the dealt board in the game file so that a
        #: replay draws it on the same mat and cards (``table`` of the start's observation)
        self._table: dict[str, Any] = {
            "card_size_mm": [float(card_size_mm[0]), float(card_size_mm[1])],
            "mat": _table_mat(mat)}
        self.watch_discard = DISCARD_ZONE in self.tracker.zones
        #: a territory that vanished with no legal move to explain it is taken for a covered
        #: card (wait) rather than a rule broken (docs/zarcana-rulings.md: camera settings)
        self.covered_cards_wait = True
        self._lock = threading.RLock()
        self._listeners: list[Listener] = []
        self._initial: ZarcanaState | None = initial_state
        self._state: ZarcanaState | None = history[-1].state if history else initial_state
        if history and initial_state is None:
            raise LiveError("moves already played need the position they started from")
        self._history: list[HistoryEntry] = list(history)
        self._pending: _Pending | None = None
        self._last_record: Observation | None = None
        self._last_reading: TableReading | None = None
        #: two or three moves seen at once, held until the next picture (or a click of the
        #: player after them) agrees
        self._held: _HeldMoves | None = None
        #: a click out of turn while the move before it is not yet in, kept with the
        #: number of moves then, and taken once that move is seen or clicked
        self._early_click: tuple[Move, int] | None = None
        #: the last trial of the discard pile's orders (:meth:`_pile_read`), under the table
        #: read and the orders tried and the moves held tried after it: the order taken
        #: (None: none explained the table)
        self._pile_trials: Trials[tuple[str, ...] | None] = Trials()
        #: the last search for moves seen at once (:meth:`_hold_moves`), of two (False) and
        #: of three (True), under the table read and the pile seen and whether the pile was
        #: watched: the moves found (None: none). A search cut short is kept too: its budget
        #: is CPU time, so the same table cuts it short again (made anew, it cost up to 3 s
        #: a picture for the same "nothing found")
        self._hold_trials: dict[tuple[bool, bool], Trials[_HeldMoves | None]] = {
            (three, shown): Trials() for three in (False, True) for shown in (False, True)}
        #: the searches themselves (:meth:`_moves_at_once`): the pile's orders that share a
        #: top card search the same, and the hold searches the order the pile was read in
        self._searches: Trials[tuple[Sequence[TwoMoves | ThreeMoves], bool]] = Trials(
            keep=SEARCHES_KEPT)
        #: the moves those searches tried from each position, with the positions they give,
        #: for the table and the position judged (:class:`MovesTried`): each top card of a
        #: pile in no known order is searched for with the same first moves, which the search
        #: for one move made too, and the search for three moves makes the two-move search's
        #: second moves again. Kept while a picture is judged (the next picture's table, if
        #: it is searched, is another)
        self._moves_tried: Trials[MovesTried] = Trials()
        # the other moves that fit the last move's picture (with the state the move taken
        # gave, which must still be the game's last for them to count)
        self._others: tuple[ZarcanaState, list[tuple[Move, ZarcanaState]]] | None = None
        # an attack taken back as a hand over its pyramid, which may have been made, its
        # pyramid's player starting again on the same card (:meth:`_only_covered`)
        self._restarted: _Restarted | None = None
        # the tables waited on for pyramids not seen since the last move or the last picture
        # of the game's table (:meth:`_missed_pyramid`), the last :data:`MISSED_WAITS_KEPT`
        self._missed_waits: list[TableView] = []
        # the last of them, where a legal move fitted it (:meth:`_missed_pyramid`)
        self._missed_move: PyramidsShort | None = None
        # the last two pictures judged: the table seen, the game's position then, whether
        # the picture was complained of (an illegal change, a question), or waited on as the
        # camera's flip-flop (:meth:`_flip_flop`), and the rule-breaking move complained of
        self._judged: list[tuple[TableView, ZarcanaState, bool, Verdict | None]] = []
        self._flipped = False
        # the rule-breaking move the last flip-flop wait named (None: none)
        self._flip_broke: Verdict | None = None
        # the last picture was said to show the position before the last move(s); and the
        # picture before this one (while judging it)
        self._said_back = False
        self._back_before = False
        # the last picture waits for the same table seen again (:attr:`wants_another_look`)
        self._look_again = False
        self._last_frame: int | None = None
        self._camera_ok = True
        # whether the last record called its frame blurred (None: no record said yet)
        self._blurred: bool | None = None
        #: the picture's faults said and not yet over (_said_while): "greyscale", "scale"
        #: (the cards another size than the deck's), "coarse" (too few pixels a mm)
        self._faults_said: set[str] = set()
        self.latencies_ms: list[float] = []
        now = self._state
        self.status = Status.SETUP if now is None else (
            Status.OVER if now.is_over else Status.PLAYING)
        if now is not None:
            self._sync_tracker(now)

    # ================================================================ reading the game ===
    @property
    def state(self) -> ZarcanaState | None:
        """The engine state now (None until the board is dealt)."""
        return self._state

    @property
    def initial_state(self) -> ZarcanaState | None:
        return self._initial

    @property
    def history(self) -> list[HistoryEntry]:
        """Accepted moves in order, each with the state after it."""
        with self._lock:
            return list(self._history)

    @property
    def to_move(self) -> Color | None:
        """Whose decision the game waits for (None before the deal and after the end)."""
        return None if self._state is None else self._state.to_move

    @property
    def is_over(self) -> bool:
        return self.status is Status.OVER

    @property
    def wants_another_look(self) -> bool:
        """Whether the last picture was waited on until its table is seen once more (the
        camera going back and forth between two tables; pyramids not seen, beside a legal
        move, a rule broken, or no move): a table left standing is not judged again by
        itself, and the move it shows was never taken or ruled on
        (:meth:`SettleDetector.look_again`)."""
        return self._look_again

    @property
    def can_override(self) -> bool:
        """Whether :meth:`override` has something to accept: a question's first reading,
        or a rule-breaking move that explains the flagged table (not a table no move
        explains)."""
        p = self._pending
        if p is None:
            return False
        if self._held_from(self._state) is not None and \
                self.status in (Status.QUESTION, Status.WRONG_TABLE):
            return True
        if self.status is Status.QUESTION:
            return bool(p.suggestions)
        return (self.status is Status.WRONG_TABLE and p.explanation is not None
                and bool(p.explanation.illegal))

    @property
    def pending_suggestions(self) -> tuple[Suggestion, ...]:
        """The open question's suggestions (empty when no question is open)."""
        p = self._pending
        return p.suggestions if p is not None and self.status is Status.QUESTION else ()

    @property
    def last_reading(self) -> TableReading | None:
        """The last settled table as read (for an overlay)."""
        p = self._pending
        if p is not None:
            return p.reading
        return self._last_reading

    def scores(self) -> dict[str, int]:
        """Points per colour now (empty before the deal)."""
        if self._state is None:
            return {}
        return {c.value: v for c, v in self._state.scores().items()}

    def score_details(self) -> dict[str, list[tuple[Cell, str, int]]]:
        """Per colour: (cell, top card, points) of each territory that scores for it."""
        if self._state is None:
            return {}
        return {c.value: list(v) for c, v in self._state.score_details().items()}

    def winners(self) -> list[str]:
        return [] if self._state is None else [c.value for c in self._state.winners()]

    def read(self, reader: Callable[[LiveSession], T]) -> T:
        """``reader(self)`` with the session's lock held: what it reads of the session is one
        position, never half of one move and half of the next (another thread's call waits)."""
        with self._lock:
            return reader(self)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event)`` for every event from now on; returns an unsubscribe."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)
        return unsubscribe

    # ================================================================ the camera ===
    def observe(self, record: Observation | Mapping[str, Any], *, frame: int | None = None,
                keyframe_jpeg: bytes | None = None, time_s: float | None = None) -> list[LiveEvent]:
        """Take one settled observation record (the spec's JSON object) and referee it.

        ``keyframe_jpeg``: the frame as JPEG bytes, stored with an accepted move. Returns the
        events produced (also sent to listeners). A malformed record raises an
        :class:`~companion.core.observation.ObservationError` naming the field.
        """
        t0 = time.perf_counter()
        obs = as_observation(record, f"frame {frame}" if frame is not None else "observation")
        with self._lock:
            self._last_frame = frame
            self._look_again = False
            events = self._observe(obs, frame, keyframe_jpeg, time_s)
        self.latencies_ms.append((time.perf_counter() - t0) * 1000.0)
        return self._emit(events)

    def camera_lost(self, reason: str, frame: int | None = None) -> list[LiveEvent]:
        """The frame source failed; reported once until :meth:`camera_back`."""
        with self._lock:
            if not self._camera_ok:
                return []
            self._camera_ok = False
        return self._emit([LiveEvent(EventKind.CAMERA_LOST, f"camera lost: {reason}",
                                     frame=frame, source="system")])

    def frame_skipped(self, text: str, frame: int | None = None) -> list[LiveEvent]:
        """One frame of the source could not be read (``text`` names it and says why); the
        source goes on, so the camera is not called lost."""
        return self._emit([LiveEvent(EventKind.FRAME_SKIPPED, text, frame=frame,
                                     source="system")])

    def source_note(self, text: str, frame: int | None = None) -> list[LiveEvent]:
        """A line about the frame source that is no failure (a watched folder waits for
        photos)."""
        return self._emit([LiveEvent(EventKind.INFO, text, frame=frame, source="system")])

    def source_ended(self, name: str) -> list[LiveEvent]:
        """The video or folder has ended. Two moves its last picture showed, held for a
        picture after them to agree (:meth:`_hold_moves`) or asked about as they end the
        game, are taken: none will come, and dropping them lost moves the pictures showed,
        without a word. Unless another question is open (a misread asked first), or they
        are three, which are always asked about: it stays, and a line names what is asked
        ("Accept anyway" takes the moves, :meth:`override`)."""
        with self._lock:
            held = self._held_from(self._state)
            if held is None:
                return []
            misread = self._pending is not None and bool(self._pending.suggestions)
            if self.status is Status.QUESTION and (misread or len(held.moves) == 3):
                # a misread was asked first, as the likelier reading: the players decide
                what = "its last picture is a misread, or " if misread else ""
                events = [LiveEvent(
                    EventKind.WAITING, f"{name} ended on an open question: {what}"
                    f"{held.count} ({held.words}): answer the question, or press "
                    f"\"Accept anyway\" to take the {held.count}",
                    frame=held.frame, source="camera")]
            else:
                events = self._take_held(
                    held, f"{held.count} on the last picture: {held.words}; taken at the end "
                    f"of {name}",
                    f"{name} ended with these {held.count} on its last picture, with none "
                    "after them to agree: if one was a misread, press \"Take back move\" and "
                    "correct it")
        return self._emit(events)

    def camera_back(self, text: str = "camera back", frame: int | None = None) -> list[LiveEvent]:
        """The frame source delivers again."""
        with self._lock:
            if self._camera_ok:
                return []
            self._camera_ok = True
        return self._emit([LiveEvent(EventKind.CAMERA_BACK, text, frame=frame, source="system")])

    # ================================================================ the players ===
    def manual(self, move_text: str) -> list[LiveEvent]:
        """A move the camera cannot see (draw, pass, end, bid, pay, reveal...), as clicked.

        ``move_text`` is engine notation; the ``colour:`` prefix may be left out (the player
        whose decision is awaited). Text that does not parse raises
        :class:`~companion.core.errors.NotationError`; a move that breaks a rule gives an
        ``illegal`` event and changes nothing. ``destroyed: COLOUR started again at CELL``
        (offered by :meth:`manual_options`) says an attack taken back as only covered was
        made, that player then starting again on the card (:meth:`_restart_said`).
        """
        with self._lock:
            st = self._require_state()
            text = move_text.strip()
            if text.lower().startswith(DESTROYED_CLICK):
                return self._emit(self._restart_said(text))
            if ":" not in text.split(" ", 1)[0] and st.to_move is not None:
                text = f"{st.to_move.value}: {text}"
            move = parse_move(text)
            events = self._held_clicked(st, move)
            early = [] if events else self._keep_early_click(st, move)
            if early:
                return self._emit(early)
            if not events:
                events = self._other_reading_for(st, move)
            if not events:
                events = self._restart_clicked(st, move)
            if not events:
                events = self._back_for_the_click(st, move)
            if not events:
                early = self._keep_own_click(st, move)
                if early:
                    return self._emit(early)
            events += self._apply_checked(move, source="click")
            if self._pending is not None and self.status in (Status.WRONG_TABLE, Status.QUESTION):
                # the click may be what the waiting table needed
                p = self._pending
                asked = (p.suggestions[0].correction.describe()
                         if self.status is Status.QUESTION and p.suggestions else None)
                if self._state is not None and not self._state.is_over:
                    again = self._judge(p.reading, p.record, p.frame, None, None)
                    first = next((k for k, e in enumerate(again)
                                  if e.kind is EventKind.ACCEPTED and e.source == "camera"), None)
                    if asked is not None and first is not None:
                        # a picture taken before the click, and asked about as a misread,
                        # now fits a move: the players saw which it was; say how to undo it
                        again[first] = self._before_the_click(again[first], asked)
                    events += again
            # (a click kept earlier whose turn this click, or the table it let in, brought:
            # blue's draw clicked while red's draw was not yet)
            events += self._take_early_click()
        return self._emit(events)

    def _others_now(self) -> tuple[ZarcanaState, list[tuple[Move, ZarcanaState]]] | None:
        """The other moves that fit the last move's picture, while that move, taken from
        the camera, is still the game's last (a take-back, a click or another picture since
        leaves none)."""
        kept = self._others
        if (kept is None or not self._history or self._history[-1].kind != "move"
                or self._history[-1].state is not kept[0] or self._state is not kept[0]):
            return None
        return kept

    def _other_reading_for(self, st: ZarcanaState, move: Move) -> list[LiveEvent]:
        """The last move taken from a picture, replaced by another that fit the same picture
        where only that one allows this click: the table cannot show what an Emperor's tax
        asked for, whether Judgement took a card back, which hand Justice traded with, and
        the simplest was taken; the payer's click of the tax then was refused ("another
        decision must be made first"). The replacement is said and recorded (an undo, then
        the move). None fits, or the click is legal as it is: nothing changes."""
        kept = self._others_now()
        if kept is None or st.check(move).legal:
            return []
        before = self._before_last()
        other = next(((m, after) for m, after in kept[1] if after.check(move).legal), None)
        if before is None or other is None:
            return []
        alt, after = other
        last = self._take_back_last()
        before = self._before_last(0)
        self._state = before
        self._others = None
        why = f"the click {move} fits only that one; the picture fits both"
        self._record("undo", None, player=last.player, state=before,
                     note=f"read again: {last.move} (the click {move} fits only {alt})")
        text = f"{last.player}'s move is read again: {alt}, not {last.move} ({why})"
        events = [LiveEvent(EventKind.INFO, text, move=last.move, player=last.player,
                            frame=last.frame, source="click", notice=text)]
        events += self._accept(alt, after, kind="move", source="camera", frame=last.frame,
                               time_s=last.time_s, note=f"read again for the click {move}")
        self._sync_tracker(after)
        return events

    def _back_for_the_click(self, st: ZarcanaState, move: Move) -> list[LiveEvent]:
        """The last move taken from a picture, taken back for a click that only the
        position before it allows, where the last picture showed the table as it was before
        that move (said so, and asked): a card misread on one picture fitted a move (the
        pile's top read as the Fool: red played it), and red's pass was then refused
        ("another decision must be made first"). Two signs the move was never made. Said on
        show and recorded as an undo; the click is then taken as usual. Anything else:
        nothing changes."""
        if (not self._said_back or not self._history or self._history[-1].kind != "move"
                or st.check(move).legal):
            return []
        before = self._before_last()
        if before is None or not before.check(move).legal:
            return []
        last = self._take_back_last()
        # (without a name the move read off the pile)
        before = self._before_last(0) or before
        self._state = before
        self._others = self._held = self._pending = None
        self.status = Status.PLAYING
        self._said_back = False
        self._sync_tracker(before)
        why = f"the table showed the position before it, and the click {move} fits only that"
        self._record("undo", None, player=last.player, state=before,
                     note=f"not played: {last.move} ({why})")
        text = f"{last.move} is taken back: {why}"
        return [LiveEvent(EventKind.INFO, text, move=last.move, player=last.player,
                          frame=last.frame, source="click", notice=text)]

    def _before_the_click(self, event: LiveEvent, asked: str) -> LiveEvent:
        """A move accepted from a picture taken before a click, which was first asked about
        as a misread (``asked``): the event, and the game file, say so and how to undo it."""
        if event.kind is not EventKind.ACCEPTED or event.move is None:
            return event
        note = (f"seen before the click; if it was a misread instead ({asked}), press "
                "\"Take back move\" and correct it")
        self._record("note", event.move, player=event.player, note=note)
        return replace(event, text=f"{event.text} [{note}]",
                       notice=f"{event.move}: {note}")

    def manual_options(self) -> list[str]:
        """The legal moves the camera cannot see, for the player to move, as buttons (and
        while two or three moves seen at once are held, for the player after them too).

        Draws, pass and declaring the end on a normal turn; during bidding the bids; when a
        power leaves a decision (the Emperor's tax, the Plague, the Fool's draws) its choices.
        While an attack taken back as only covered may have been made, its pyramid's player
        starting again on that card (:meth:`_only_covered`), the click that says so.
        """
        with self._lock:
            st = self._state
            if st is None or st.is_over or self.status is Status.OVER:
                return []
            out = _click_options(st, self.watch_discard)
            held = self._held_from(st)
            if held is not None and not held.after.is_over:
                # moves seen at once, held for the next picture: the player after them may
                # click first (a draw), which agrees with them (_held_clicked); their
                # buttons too, or the click would go to the player before them
                out += [o for o in _click_options(held.after, self.watch_discard)
                        if o not in out]
            kept = self._others_now()
            if kept is not None:
                # a decision that another move fitting the last picture leaves (the tax an
                # Emperor asked for: the table shows no number): its click reads that move
                # instead (:meth:`_other_reading_for`)
                for _, after in kept[1]:
                    if after.pending:
                        out += [o for o in _click_options(after, self.watch_discard)
                                if o not in out]
            restarted = self._restarted_now()
            if restarted is not None:
                # an attack taken back as a hand over its pyramid, maybe made, its player
                # starting again on that card: the next player's click then (a draw) says
                # so (:meth:`_restart_clicked`), and so does the players' own word, the one
                # way where the next move fits both (two players: _restart_said)
                out += [o for o in _click_options(restarted.after, self.watch_discard)
                        if o not in out]
                out.append(restarted.click)
            return out

    def hidden_cards(self) -> list[Cell]:
        """Face-down territories whose card nobody has named yet (a Wheel of Fortune build)."""
        st = self._state
        if st is None:
            return []
        return sorted(c for c, s in st.board.items() if s[-1] == (UNKNOWN, False))

    def unnamed_face_up_cards(self) -> list[Cell]:
        """Face-up cards on top that nobody has named yet: the Alchemist's covered card,
        uncovered where no picture could name it (a hand over it, or the card read is one
        the game knows elsewhere). It gives no power and scores 0 until named."""
        st = self._state
        if st is None:
            return []
        return sorted(c for c, s in st.board.items() if s[-1] == (UNKNOWN, True))

    def name_card(self, cell: Cell, card: str) -> list[LiveEvent]:
        """Say which card an unnamed card on top is: a face-down territory
        (:meth:`hidden_cards`) or a face-up one (:meth:`unnamed_face_up_cards`). Recorded
        as a correction whose state names it; a face-up one's line says so too
        (``covered-name said 1,0 cups-04``, recording.store.covered_name_read: the text
        export names it on the Alchemist's line, and a continued game holds no misread
        for it)."""
        with self._lock:
            st = self._require_state()
            self._refuse_when_over("a card cannot be named")
            stack = st.board.get(cell)
            where = format_cell(cell)
            if not stack or stack[-1][0] != UNKNOWN:
                raise LiveError(f"there is no unnamed card at {where}")
            face_up = stack[-1][1]
            what = "card" if face_up else "face-down card"
            try:
                card_info(card)
            except ValueError as exc:
                raise LiveError(f"{card!r} is not a card id: {exc}") from None
            if card not in st.unseen_cards():
                raise LiveError(f"{card} cannot be the {what} at {where}: "
                                "it is accounted for elsewhere")
            new = st.copy()
            # an unknown card becomes a known one: the count of unaccounted cards stays right
            new.board[cell] = stack[:-1] + ((card, face_up),)
            self._name_back(st, new)
            self._state = new
            if face_up:
                # (the camera reads the card there as named from now on)
                self._sync_tracker(new)
                text = f"the card at {where} is {card}: {PLAYERS_NAME_NOTE}"
                self._record("correction", covered_name_line("said", where, card), state=new,
                             note=text)
                # (a misread there the players said was the unnamed card is the name now:
                # read as "?", the table no longer matched the game; recorded, as the
                # correction it replaces was, for a continued game to hold)
                for seen in self.tracker.card_fixes_renamed(cell, UNKNOWN, card):
                    fix = CardCorrection(cell, seen, card)
                    self._record("correction", correction_text(fix), state=new,
                                 note=fix.describe())
            else:
                text = f"the face-down card at {where} is {card}"
                self._record("correction", None, state=new, note=text)
            events = [LiveEvent(EventKind.INFO, text, source="correction", frame=self._last_frame)]
            if face_up:
                events += self._question_named(cell, card)
        return self._emit(events)

    def _question_named(self, cell: Cell, card: str) -> list[LiveEvent]:
        """A question or ruling open on a picture when the players name the uncovered card
        at ``cell`` (:meth:`name_card`): the picture judged again with the name. The
        question "is the card at 1,0 ?, not swords-02?" (the card read there lies
        elsewhere) is answered by the name: the camera misread ``card`` as swords-02,
        held and recorded as :meth:`correct` does. The question stayed on show after the
        name otherwise, asking after a card the game now knew (and its one answer, "?",
        is no card :meth:`correct` takes)."""
        p = self._pending
        if p is None or self.status not in (Status.QUESTION, Status.WRONG_TABLE):
            return []
        asked = next((s.correction for s in self.pending_suggestions
                      if isinstance(s.correction, CardCorrection) and s.correction.where == cell
                      and s.correction.actual == UNKNOWN and s.correction.seen != card), None)
        if asked is not None:
            return self._corrected(CardCorrection(cell, asked.seen, card))
        return self._judged_again()

    def _name_back(self, st: ZarcanaState, named: ZarcanaState) -> None:
        """The face-down cards ``named`` names (``st`` being the game's last position) named
        in every position they lay face down in: a move taken back does not forget the name
        (as the game file's replay does not)."""
        names = names_given(st, named)
        if self._initial is not None:
            states = name_back([self._initial] + [h.state for h in self._history], names)
            self._initial = states[0]
            self._history = [h if state is h.state else replace(h, state=state)
                             for h, state in zip(self._history, states[1:])]

    def correct(self, correction: Correction) -> list[LiveEvent]:
        """The user fixes a misread card or pyramid; the last settled table is judged again.

        The fix holds while the camera keeps reading that piece the same way.
        """
        with self._lock:
            self._require_state()
            self._refuse_when_over("a reading cannot be corrected")
            if isinstance(correction, CardCorrection):
                try:
                    card_info(correction.actual)
                except ValueError as exc:
                    if correction.actual != BACK and not self._unnamed_at(correction):
                        raise LiveError(f"{correction.actual!r} is not a card id: {exc}") from None
            events = self._corrected(correction)
        return self._emit(events)

    def _unnamed_at(self, correction: CardCorrection) -> bool:
        """Whether ``correction`` says that the card the camera read is the unnamed face-up
        card the game has there ("is the card at 1,0 ?, not swords-02?", asked where the
        Alchemist's covered card lies uncovered and the camera reads one the game knows
        elsewhere): the players' answer, which says the camera misread it, not what it
        is (they name it with :meth:`name_card`, which the fix then follows)."""
        st = self._state
        where = correction.where
        if correction.actual != UNKNOWN or st is None or isinstance(where, str):
            return False
        stack = st.board.get(where)
        return stack is not None and stack[-1:] == ((UNKNOWN, True),)

    def _corrected(self, correction: Correction) -> list[LiveEvent]:
        """:meth:`correct`'s work, under the lock: the fix held and recorded, the last
        settled table judged again."""
        self._hold_fix(correction)
        self._record("correction", correction_text(correction), state=self._state,
                     note=correction.describe())
        return [LiveEvent(EventKind.INFO, f"corrected: {correction.describe()}",
                          source="correction", frame=self._last_frame)] + self._judged_again()

    def _judged_again(self) -> list[LiveEvent]:
        """The last settled table (the one a question or ruling is open on, else the last
        judged) judged again, after a correction or a name the players gave."""
        record = self._pending.record if self._pending is not None else self._last_record
        if record is None or self.status is Status.OVER:
            return []
        frame = self._pending.frame if self._pending is not None else self._last_frame
        reading = self.tracker.read(record)
        events = self._judge(reading, record, frame, None, None)
        return events + self._take_early_click()  # (the move the correction let in)

    def restore_corrections(self, texts: Sequence[str]) -> int:
        """The readings the players corrected in an earlier sitting of this game (its
        file's correction events, :func:`correction_text`), held again by the table's
        reader: the camera most likely misreads the same piece the same way. Each lasts,
        as a correction made now does, while the camera keeps reading the piece so (one
        no longer seen is dropped at the next picture). How many were restored; a line
        that does not read as one is passed over, and so is one the game's position does
        not bear out (the corrected piece has changed since: a correction held for a
        misread that ended would read the piece's true change as the misread)."""
        n = 0
        with self._lock:
            for text in texts:
                try:
                    c = parse_correction(text)
                except NotationError:
                    log.warning("a recorded correction %r is not one this version reads", text)
                    continue
                if not self._agrees(c):
                    continue    # the game has moved on from it: the piece changed since
                self._hold_fix(c)
                n += 1
        return n

    def _hold_fix(self, c: Correction) -> None:
        """The table's reader reads the corrected piece as corrected from now on."""
        if isinstance(c, CardCorrection):
            self.tracker.correct_card(c.where, c.seen, c.actual)
        else:
            self.tracker.correct_pyramid(c.cell, c.seen, c.actual, c.actual_cell)

    def _agrees(self, c: Correction) -> bool:
        """Whether the game's position has the corrected reading and not the misread one."""
        st = self._state if self._state is not None else self._initial
        if st is None:
            return False
        if isinstance(c, CardCorrection):
            if c.where == DISCARD_ZONE:
                return st.discard_top() == c.actual
            if isinstance(c.where, str):
                return False
            top = TableView.of(st).cards.get(c.where)
            return top == c.actual and top != c.seen
        here = st.pieces.get(c.cell, ())
        if c.seen in here and c.actual != c.seen:
            return False
        if c.actual is None:
            return True
        return c.actual in st.pieces.get(c.actual_cell if c.actual_cell is not None
                                         else c.cell, ())

    def override(self) -> list[LiveEvent]:
        """Accept the flagged change anyway.

        On a wrong table: the move that explains it with the fewest broken rules is carried
        out with the rules off (recorded as "override"). On a question: the first suggested
        reading is taken (as :meth:`correct` would). Two or three moves that explain the
        picture, held beside a question or a ruling on an earlier picture, are what the
        camera saw: they are taken instead. Raises :class:`LiveError` when there is nothing
        to override.
        """
        with self._lock:
            p = self._pending
            if p is None or self.status not in (Status.WRONG_TABLE, Status.QUESTION):
                raise LiveError("there is nothing to override: the table matches the game")
            held = self._held_from(self._state)
            if held is not None:
                # (what the camera saw since: a ruling on an earlier picture, still on show
                # while later moves are held, is not what the players accept)
                events = self._take_held(held, f"{held.count} since the last picture: "
                                         f"{held.words} (accepted by the players)",
                                         f"{held.count} on one picture, accepted by the "
                                         "players" + (" over the misread asked"
                                                      if p.suggestions else ""))
                events += self._take_early_click()
                return self._emit(events)
            if self.status is Status.QUESTION and p.suggestions:
                correction = p.suggestions[0].correction
            else:
                correction = None
                if p.explanation is None or not p.explanation.illegal:
                    raise LiveError("no move explains this change, not even an illegal one: "
                                    "put the table right or correct a reading")
                verdict = p.explanation.illegal[0]
                events = self._force(verdict.move, p)
                events += self._take_early_click()
        if correction is not None:
            return self.correct(correction)
        return self._emit(events)

    def _refuse_when_over(self, what: str) -> None:
        """LiveError once the game is over: its file is finished, and a change made after
        that (a Take back pressed as the last move was judged, say) could not be recorded."""
        if self.status is Status.OVER or (self._state is not None and self._state.is_over):
            raise LiveError(f"the game is over: {what} (its game file is finished)")

    def step_back(self) -> list[LiveEvent]:
        """Take back the last accepted move (recorded as an "undo" holding the state before
        it, so the recorded move list leaves the move out). The camera then sees the move again unless the
        players take it back on the table too."""
        with self._lock:
            self._refuse_when_over("no move can be taken back")
            if not self._history:
                raise LiveError("there is no accepted move to take back")
            last = self._take_back_last()
            self._state = self._before_last(0)
            self._early_click = None
            self._forget_missed_waits()
            # (the pictures judged were judged in the position now restored: a table ruled
            # on then, seen once more, is not the camera going back and forth)
            self._judged = []
            assert self._state is not None
            self._pending = None
            self.status = Status.PLAYING
            self._sync_tracker(self._state)
            self._record("undo", None, player=last.player, state=self._state,
                         note=f"took back {last.move}")
            events = [LiveEvent(EventKind.INFO, f"took back: {last.move}", move=last.move,
                                player=last.player, source="undo", frame=self._last_frame)]
        return self._emit(events)

    def end_game(self) -> list[LiveEvent]:
        """End the game now (the players stop) and score it; the recording is finished."""
        with self._lock:
            if self.status is Status.OVER:
                return []
            st = self._require_state()
            if not st.is_over:
                st = st.copy()
                st.phase = "over"
                self._state = st
            events = self._game_over("the players ended the game")
        return self._emit(events)

    def close(self) -> None:
        """Close the recorder (the game stays recorded as far as it went), after one more
        try at what it could not write before (:attr:`unwritten` says what is still
        missing)."""
        if self.recorder is not None:
            with self._lock:
                self.write_pending()
                # a move the runner still accepts now stays unwritten, and is said
                self._recorder_closed = True
                try:
                    self.recorder.close()
                    # (the game saved elsewhere at the close, its file gone: what is held
                    # back goes into that copy)
                    self._backlog.into_saved_copy(self.recorder, drop_bad=True)
                except Exception as exc:  # noqa: BLE001 - a recorder failure must not lose the game
                    log.warning("the recorder could not be closed: %s", exc)

    # ================================================================ internals ===
    def _sync_tracker(self, state: ZarcanaState) -> None:
        """The tracker's memory of stacks and discard pile set to what ``state`` knows."""
        self.tracker.sync(stacks_of(state), state.discard)

    def _require_state(self) -> ZarcanaState:
        if self._state is None:
            raise LiveError("the board has not been dealt yet: no settled table with cards seen")
        return self._state

    def _emit(self, events: list[LiveEvent]) -> list[LiveEvent]:
        with self._lock:
            # what the recorder had to say while these were made, before them (the frame's
            # verdict keeps the banner; the window's title keeps the recording's trouble)
            news, self._record_news = self._record_news, []
        events = news + events
        for e in events:
            log.info("%s: %s", e.kind.value, e.text)
        listeners = list(self._listeners)
        for e in events:
            for fn in listeners:
                try:
                    fn(e)
                except Exception:  # noqa: BLE001 - one broken listener must not stop the game
                    log.exception("an event listener failed")
        return events

    def _record(self, kind: str, move: str | None, *, player: str | None = None,
                observation: Observation | None = None, keyframe_jpeg: bytes | None = None,
                state: ZarcanaState | None = None, note: str | None = None) -> None:
        """One event to the recorder. Kinds (companion.recording.store): "start" (the dealt
        board), "move" (seen or clicked; a click says so in the note), "override",
        "correction" (a fixed reading, a named hidden card: with the state after it), "undo"
        (a move taken back, with the state before it), "illegal" (a table ruled on: the
        rule-breaking move named, or none that explains it) and "note" (anything else worth
        keeping: a move seen before a click)."""
        if self.recorder is None:
            return
        saved = None if observation is None else observation.to_dict()
        if kind == "start" and saved is not None:
            saved["table"] = self._table
        with self._lock:
            self._backlog.add("record", {
                "kind": kind, "move": move, "player": player,
                "observation": saved,
                "keyframe_jpeg": keyframe_jpeg,
                "state": None if state is None else dumps(state), "note": note or ""})
            self.write_pending()

    @property
    def unwritten(self) -> list[str]:
        """What the game file still lacks, one line each: a move's text, else the event's
        kind in brackets (a flagged table's note names the move it refused)."""
        def line(what: str, kw: dict[str, Any]) -> str:
            if what == "finish":
                return "(the end of the game)"
            if kw["kind"] in ("move", "override") and kw["move"]:
                return str(kw["move"])
            said = kw["note"] or kw["move"] or ""
            if len(said) > UNWRITTEN_NOTE_CHARS:
                # (a flagged table's note lists every change: in full, a full disk's
                # message ran to kilobytes)
                said = said[:UNWRITTEN_NOTE_CHARS - 1].rstrip() + "…"
            return f"({kw['kind']}{': ' + said if said else ''})"

        with self._lock:
            return [line(what, kw) for what, kw in self._backlog.events]

    def write_pending(self) -> int:
        """Write what the recorder could not take before, oldest first; how much is left.
        The first failure says so once (:attr:`EventKind.NOT_RECORDED`); when all is written
        again, :attr:`EventKind.RECORDED_AGAIN` says that. After :meth:`close` nothing is
        written: what comes then stays in :attr:`unwritten` (a runner still stopping)."""
        with self._lock:
            if self.recorder is None or self._recorder_closed:
                return len(self._backlog.events)
            changed = self._backlog.write(self.recorder, drop_bad=True)
            if changed == "failing":
                log.warning("%s", self.record_error)
                self._record_news.append(LiveEvent(
                    EventKind.NOT_RECORDED,
                    f"the game file cannot be written: {self.record_error}. The moves are kept "
                    "here and tried again at every move; do not close the companion",
                    frame=self._last_frame, source="system"))
            elif changed == "recovered":
                self._record_news.append(LiveEvent(
                    EventKind.RECORDED_AGAIN, "the game file is written again: every move so "
                    "far is in it", frame=self._last_frame, source="system"))
            return len(self._backlog.events)

    @property
    def record_error(self) -> str | None:
        """Why the game file cannot be written now (None: everything is in it)."""
        return self._backlog.error

    def record_problem(self) -> str | None:
        """None when the game file holds the whole game so far; else what it lacks and why,
        naming the file and how to go on (after :meth:`close`: what the user is left with)."""
        left = self.unwritten
        if not left:
            return None
        path = self.recorder_path
        why = (self.record_error or "the recorder was closed first").removeprefix(f"{path}: ")
        return (f"{path}: the last {len(left)} event(s) of this game could not be written "
                f"({why}); the file stops before: {'; '.join(left)}. Once it can be written, "
                f"`companion run --record {path}` goes on from where it stops")

    @property
    def recorder_path(self) -> str:
        return str(getattr(self.recorder, "path", "the game file"))

    def _observe(self, obs: Observation, frame: int | None, jpeg: bytes | None,
                 time_s: float | None) -> list[LiveEvent]:
        if self.status is Status.OVER:
            return []
        said = (self._sharpness(obs, frame) + self._colourless(obs, frame)
                + self._mat_doubt(obs, frame) + self._lens_doubt(obs, frame)
                + self._coarse(obs, frame))
        obs = self._players_pieces(obs)
        expected = None
        if self.tracker.lattice is None and self._state is not None:
            expected = {c: s[-1] for c, s in stacks_of(self._state).items()}
        reading = self.tracker.read(obs, expected=expected)
        # (the picture's line goes last, so a status line shows it after the frame's news)
        if not reading.trusted:
            return [LiveEvent(EventKind.WAITING, f"frame not used: {reading.reason}",
                              frame=frame, source="camera")] + said
        if self._state is not None:
            reading, moved = self._found_again(obs, reading, frame)
            said = moved + said
        self._last_record = obs
        self._last_reading = reading
        if self._state is None:
            return self._deal(reading, obs, frame, jpeg) + said
        events = self._judge(reading, obs, frame, jpeg, time_s)
        return events + self._take_early_click() + said

    def _found_again(self, obs: Observation, reading: TableReading, frame: int | None
                     ) -> tuple[TableReading, list[LiveEvent]]:
        """The reading to judge, and a line when the board had to be looked for again, its
        cards no longer where the lattice puts them (:meth:`TableTracker.refind`)."""
        assert self._state is not None
        before = self.tracker.lattice
        known = {c: s[-1] for c, s in stacks_of(self._state).items()}
        again = self.tracker.refind(obs, reading, known)
        now = self.tracker.lattice
        if again is None or before is None or now is None:
            return reading, []
        moved = math.hypot(*now.moved_from(before))
        return again, [LiveEvent(
            EventKind.INFO, f"the board is found again {moved:.0f} mm from where it was (the "
            "camera or the table moved); its cells keep their names",
            frame=frame, source="camera")]

    def _sharpness(self, obs: Observation, frame: int | None) -> list[LiveEvent]:
        """A line when the frames turn blurred (the record's ``blurred``, read on the mat's
        marker edges) and when they turn sharp again: on a blurred frame the pyramids are
        missed and misread far more often, and a player can steady or focus the camera.
        The frame is still judged: a camera that stays soft should not stop the game."""
        from calibration.sharpness import blurred_picture

        blurred = obs.extra.get("blurred")
        if not isinstance(blurred, bool) or blurred == self._blurred:
            return []
        was, self._blurred = self._blurred, blurred
        said = blurred_picture(obs.extra)
        if said:
            return [LiveEvent(EventKind.INFO, f"{said}: pyramids may be missed or misread; "
                              "steady or focus the camera", frame=frame, source="camera")]
        if was:      # (sharp from the first record on needs no line)
            return [LiveEvent(EventKind.INFO, "the picture is sharp again", frame=frame,
                              source="camera")]
        return []

    def _mat_doubt(self, obs: Observation, frame: int | None) -> list[LiveEvent]:
        """A line when the cards come out another size than the deck's (the record's
        ``calibration.card_scale``): the mat file is most likely not the mat's size, every
        position is off in proportion, and on a board that grows the lattice's cells drift
        off the cards. Said once, until the cards measure right again."""
        from calibration.mat import calibration_scale_doubt

        calib = obs.extra.get("calibration")
        if not isinstance(calib, Mapping) or calib.get("card_scale") is None:
            return []
        return self._said_while("scale", calibration_scale_doubt(calib),
                                "the cards measure the deck's size again", frame)

    def _lens_doubt(self, obs: Observation, frame: int | None) -> list[LiveEvent]:
        """A line when the camera file fits the markers worse than none
        (:func:`calibration.table.lens_doubt`: another camera's file, or the zoom changed):
        every position is bent by it. Said once, until it fits again."""
        from calibration.table import lens_doubt

        calib = obs.extra.get("calibration")
        if not isinstance(calib, Mapping) or calib.get("reprojection_without_lens_mm") is None:
            return []
        return self._said_while("lens", lens_doubt(calib), "the camera file fits the markers "
                                "again", frame)

    def _coarse(self, obs: Observation, frame: int | None) -> list[LiveEvent]:
        """A line when the camera sees the table at too few pixels a millimetre for the
        pyramids (:func:`calibration.sharpness.coarse_picture`: a 720p webcam framing the
        mat), and when it sees it closely enough again."""
        from calibration.sharpness import coarse_picture

        calib = obs.extra.get("calibration")
        if not isinstance(calib, Mapping) or calib.get("px_per_mm") is None:
            return []
        said = coarse_picture(obs.extra)
        return self._said_while("coarse", None if said is None
                                else f"{said}; pyramids may be missed or misread",
                                "the camera sees the table closely enough again", frame)

    def _colourless(self, obs: Observation, frame: int | None) -> list[LiveEvent]:
        """A line when the picture turns black and white (the record's ``greyscale``: a
        camera set so, or one that switched to its infrared night mode in dim light), and
        when colour comes back: no pyramid's colour can be told in such a picture."""
        grey = obs.extra.get("greyscale") is True
        return self._said_while("greyscale", "the picture has no colour (black and white): "
                                "the pyramids' colours cannot be told apart; turn the "
                                "camera's colour on, or light the table" if grey else None,
                                "the picture has colour again", frame)

    def _said_while(self, fault: str, now: str | None, over: str,
                    frame: int | None) -> list[LiveEvent]:
        """A line when the picture's ``fault`` begins (``now``: its words; None while the
        picture is free of it), and ``over`` when it ends; nothing while it lasts."""
        if (now is not None) == (fault in self._faults_said):
            return []
        if now is None:
            self._faults_said.discard(fault)
        else:
            self._faults_said.add(fault)
        return [LiveEvent(EventKind.INFO, now if now is not None else over, frame=frame,
                          source="camera")]

    def _players_pieces(self, obs: Observation) -> Observation:
        """Only the players' colours (and the Ghost's) are pieces of this game: a pyramid of
        another colour is a misreading (card art, a stray piece) and must not be judged."""
        allowed = {c.value for c in self.players}
        # (the settings as dealt; before the deal, as given: an object or `run --setting`s)
        ghost = (self._state.settings.ghost_color if self._state is not None
                 else self._settings_obj.ghost_color if self._settings_obj is not None
                 else self._overrides.get("ghost_color", "clear"))
        allowed.add(str(ghost))
        kept = [p for p in obs.pyramids if p.color in allowed]
        if len(kept) == len(obs.pyramids):
            return obs
        ignored = [p for p in obs.pyramids if p.color not in allowed]
        log.debug("%s: ignored pyramids of colours outside the game: %s", obs.image,
                  [p.color for p in ignored])
        # the recorded frame keeps them, apart, so that the game's file still holds all the
        # camera saw (a replay or a review with other colours can judge them)
        return replace(obs, pyramids=kept,
                       extra={**obs.extra, "ignored_pyramids": [p.to_dict() for p in ignored]})

    def _deal(self, reading: TableReading, obs: Observation, frame: int | None,
              jpeg: bytes | None) -> list[LiveEvent]:
        view = reading.view
        if not view.cards:
            return [LiveEvent(EventKind.WAITING, "waiting for the dealt board", frame=frame)]
        extra: dict[str, Any] = dict(self._overrides)
        if self.seed is not None:
            extra["seed"] = self.seed
        started: list[tuple[Color, Cell]] = []
        if view.pyramids:
            # the companion came in after the first STARTs: they are made on the dealt board
            # (the engine checks each, and whose turn it is follows); any other pyramid means
            # a game under way it cannot know
            made = self._starts_made(view)
            if made is None:
                self.tracker.lattice = None
                seen = "; ".join(f"{format_cell(c)}: {' '.join(str(p) for p in ps)}"
                                 for c, ps in sorted(view.pyramids.items()))
                return [LiveEvent(EventKind.WAITING, "the table already has pyramids on it "
                                  f"({seen}) that are not the first players' starts: a game "
                                  "under way cannot be dealt from a picture. Clear them to "
                                  "deal, or continue its game file (run --record GAME.db)",
                                  frame=frame)]
            started = made
        if view.discard_top is not None and self.watch_discard:
            extra["discard"] = (view.discard_top,)
        try:
            st = game_from_table(self.players, view.cards, edition=self.edition,
                                 settings=self._settings_obj, hand_size=self.hand_size, **extra)
            for colour, cell in started:
                st = st.apply(Start(colour, cell))
        except IllegalMoveError as exc:
            self.tracker.lattice = None
            why = "; ".join(str(v) for v in exc.verdict.violations)
            return [LiveEvent(EventKind.WAITING, "the table already has pyramids on it, and as "
                              f"a START {exc.verdict.move} breaks the rules ({why}): clear "
                              "them to deal", frame=frame, rules=exc.verdict.rules)]
        except (CompanionError, ValueError) as exc:
            self.tracker.lattice = None  # learn it again from the next layout
            return [LiveEvent(EventKind.WAITING, f"cannot start from this table: {exc}",
                              frame=frame)]
        want = st.settings.layout_for(len(st.all_colors))
        if len(view.cards) < want:
            # a board still being laid out (a pause between two cards settles the table):
            # dealt from it, the game could never get past the cards still to come
            self.tracker.lattice = None
            return [LiveEvent(EventKind.WAITING,
                              f"the board shows {len(view.cards)} of the {want} cards the deal "
                              "lays out: waiting for the rest", frame=frame)]
        if len(view.cards) > want:
            self.tracker.lattice = None
            return [LiveEvent(EventKind.WAITING,
                              f"the board shows {len(view.cards)} cards, and the deal lays out "
                              f"{want} for {len(st.all_colors)} players: take away what is "
                              "not the layout, or say how many it has (run --setting "
                              "layout_cards=4, 9 or 13)", frame=frame)]
        self._initial = self._state = st
        self.status = Status.PLAYING
        self._sync_tracker(st)
        starts = (f"; with the start(s) already made by "
                  f"{', '.join(c.value for c, _ in started)}" if started else "")
        self._record("start", None, observation=obs, keyframe_jpeg=jpeg, state=st,
                     note=f"board dealt: {len(view.cards)} cards{starts}")
        who = st.to_move.value if st.to_move is not None else "nobody"
        return [LiveEvent(EventKind.INFO, f"board dealt: {len(view.cards)} cards{starts}; "
                          f"{who} to move", player=who, frame=frame, source="camera")]

    def _starts_made(self, view: TableView) -> list[tuple[Color, Cell]] | None:
        """The STARTs the dealt table already shows, in turn order (a small upright pyramid
        each, of the first players), or None for any other pyramids."""
        pieces = [(p, cell) for cell, ps in view.pyramids.items() for p in ps]
        where = {p.color: cell for p, cell in pieces}
        if any(p.size != 1 or not p.pose.upright for p, _ in pieces) or \
                len(where) != len(pieces) or len(pieces) > len(self.players):
            return None
        first = self.players[:len(pieces)]
        return [(c, where[c]) for c in first] if set(where) == set(first) else None

    def _judge(self, reading: TableReading, obs: Observation, frame: int | None,
               jpeg: bytes | None, time_s: float | None) -> list[LiveEvent]:
        try:
            return self._judged_now(reading, obs, frame, jpeg, time_s)
        finally:
            # (the positions the searches made, thousands where nothing explains the table,
            # let go: the searches' outcomes are kept for the same table seen again)
            self._moves_tried.forget()

    def _judged_now(self, reading: TableReading, obs: Observation, frame: int | None,
                    jpeg: bytes | None, time_s: float | None) -> list[LiveEvent]:
        """:meth:`_judge`'s judgement."""
        st = self._state
        assert st is not None
        if st.is_over:
            return []
        reading = self._pile_read(st, reading)
        # (the pile in the order judged: what a click names a destroyed card after, and the
        # game file says where on the pile a name was read)
        self._last_reading = reading
        view = reading.view
        self._back_before = self._said_back
        self._flipped = self._said_back = False
        events = self._ruling(reading, obs, frame, jpeg, time_s)
        p = self._pending
        complained = self._flipped or self._said_back or any(
            e.kind in (EventKind.ILLEGAL, EventKind.QUESTION) for e in events) or (
            self.status in (Status.WRONG_TABLE, Status.QUESTION) and p is not None
            and p.reading.view.same_as(view))
        # (the rule this table was ruled to break, for a flip-flop back to it to name)
        broke = self._flip_broke if self._flipped else (
            p.explanation.illegal[0] if self.status is Status.WRONG_TABLE and p is not None
            and p.reading.view.same_as(view) and p.explanation is not None
            and p.explanation.illegal else None)
        self._judged = self._judged[-1:] + [(view, st, complained, broke)]
        return events

    def _flip_flop(self, st: ZarcanaState, view: TableView, frame: int | None
                   ) -> list[LiveEvent]:
        """A wait instead of a complaint (an illegal change, a question), where the camera
        goes back and forth between two tables with the game standing still (a hand over a
        piece and lifted, by turns; two readings of one table): this picture shows the table
        of the picture before last, which was complained of, and the last picture another
        (else nothing). The complaint made again, each time the other table was put right
        or complained of in turn, was a ruling each way in turn and an illegal entry each
        time; the table seen twice in a row is ruled on again. The rule this table was ruled
        to break, if any, is named; the next picture is asked for (a camera's, or another
        photo of a folder), as the other waits ask."""
        if len(self._judged) < 2:
            return []
        (before, st_before, complained, broke), (last, st_last, _, _) = self._judged
        if not complained or st_before is not st or st_last is not st:
            return []
        wd = self.watch_discard
        if not view.same_as(before, with_discard=wd) or view.same_as(last, with_discard=wd):
            return []
        self._flipped = self._look_again = True
        self._flip_broke = broke
        flips = tuple(str(c) for c in diff(last, view) if wd or c.cell is not None)
        who = st.to_move.value if st.to_move is not None else None
        rule = "" if broke is None else (f"; on this one, {broke.move} breaks a rule: "
                                         + "; ".join(x.reason for x in broke.violations))
        return [LiveEvent(EventKind.WAITING, "the camera sees two tables by turns ("
                          + "; ".join(flips[:4]) + "): cannot tell yet which is right" + rule
                          + "; waiting for the next picture (the table seen on two pictures "
                          "in a row is ruled on)", player=who, changes=flips,
                          move=None if broke is None else str(broke.move),
                          rules=() if broke is None else broke.rules, frame=frame)]

    def _pile_read(self, st: ZarcanaState, reading: TableReading) -> TableReading:
        """``reading`` with the discard pile in the order that explains the table, where the
        camera cannot tell which of the cards new on it covers which (no level): the first
        of its orders that one move explains (from the game, or after the moves held), else
        two; else the reading as it is. Ordered by confidence alone, two cards of two moves
        seen at once were taken the wrong way up, the moves never found, and the game waited
        for good ("is something covering the table?")."""
        if len(reading.discard_orders) < 2 or not self.watch_discard:
            return reading
        held = self._held if self._held is not None and self._held.before is st else None
        # (the same table seen again from the same position: its outcome, not the trial
        # again, up to a second a picture while a table nothing explains stands still)
        table = (reading.view.normalised(), reading.discard_orders)
        after = None if held is None else held.moves
        order = self._pile_trials.outcome(st, (table, after),
                                          lambda: self._pile_order(st, reading, held))
        return reading if order is None else reading.with_pile(order)

    def _pile_order(self, st: ZarcanaState, reading: TableReading, held: _HeldMoves | None
                    ) -> tuple[str, ...] | None:
        """The trial of :meth:`_pile_read`: the first order of the pile that explains the
        table, from ``st`` or after the moves ``held`` from it (None: no order does)."""
        ways = [reading.with_pile(order) for order in reading.discard_orders]
        bases = [st] + ([held.after] if held is not None else [])
        # (the orders that share a top card show the same table: each judged once)
        judged: dict[tuple[int, Any], bool] = {}
        for way in ways:
            for k, base in enumerate(bases):
                seen = (k, way.view.discard_top)
                if seen not in judged:
                    ex = explain(base, way.view, diagnose=False, compare_discard=True,
                                 tried=self._tried(st))
                    judged[seen] = ex.unchanged or ex.explained
                if judged[seen]:
                    return way.discard_seen
        for way in ways:
            runs, complete = self._moves_at_once(st, way, compare_discard=True)
            if complete and runs:
                return way.discard_seen
        return None

    def _forget_trials(self) -> None:
        """Forget every search's outcome kept for a still table (the next picture searches
        anew)."""
        self._pile_trials.forget()
        self._searches.forget()
        self._moves_tried.forget()
        for trials in self._hold_trials.values():
            trials.forget()

    def _tried(self, st: ZarcanaState) -> MovesTried:
        """The moves tried from ``st`` and the positions they give for the table judged
        now (:attr:`_moves_tried`)."""
        return self._moves_tried.outcome(st, None, MovesTried)

    def _moves_at_once(self, st: ZarcanaState, reading: TableReading, *,
                       compare_discard: bool, three: bool = False
                       ) -> tuple[Sequence[TwoMoves | ThreeMoves], bool]:
        """:func:`explain_two` (``three``: :func:`explain_three`) from ``st`` to the table
        ``reading`` shows, the cards under the pile's top each tried as the first move's,
        within :data:`TWO_MOVES_BUDGET_S` (:data:`THREE_MOVES_BUDGET_S`); made once for a
        table from a position (:attr:`_searches`). The cards under the top are only ever
        tried one by one as the pile's top, whatever their order, and the moves found are
        sorted: the pile's orders that share a top card (two of the six of three new cards)
        get the same outcome, and so does the hold search of the order judged after the
        trial of the pile's orders (:meth:`_pile_read`), which made it already."""
        view = reading.view
        under = reading.discard_seen[1:]
        key = (three, view.normalised(), frozenset(under) - {view.discard_top},
               compare_discard)

        def search() -> tuple[Sequence[TwoMoves | ThreeMoves], bool]:
            tried = self._tried(st)
            if three:
                return explain_three(st, view, under=under, compare_discard=compare_discard,
                                     budget_s=THREE_MOVES_BUDGET_S, tried=tried)
            return explain_two(st, view, under=under, compare_discard=compare_discard,
                               budget_s=TWO_MOVES_BUDGET_S, tried=tried)

        return self._searches.outcome(st, key, search)

    def _ruling(self, reading: TableReading, obs: Observation, frame: int | None,
                jpeg: bytes | None, time_s: float | None) -> list[LiveEvent]:
        """What this picture, no flip-flop, says of the game (:meth:`_judge`)."""
        st = self._state
        assert st is not None
        view = reading.view
        if self._held is not None:
            agreed = self._held_agreed(st, reading, obs, jpeg, frame, time_s)
            if agreed:
                return agreed
        named_later = self._face_down_seen_later(st, view)
        if named_later:
            st = self._require_state()
        named_later += self._uncovered_seen_later(st, view)
        if named_later:
            st = self._require_state()
        hidden = self._hidden_cells(st, view)
        if len(hidden) >= OCCLUDED_CARDS:
            # No move takes this many territories off the table at once: something (a hand,
            # an arm, a box) covers them. Judge the next clear view instead of accusing.
            who_now = st.to_move.value if st.to_move is not None else None
            cells = ", ".join(f"{i},{j}" for i, j in hidden[:6])
            return [LiveEvent(EventKind.WAITING, f"part of the table is covered ({len(hidden)} "
                              f"cards not seen: {cells}); waiting for a clear view",
                              player=who_now, frame=frame)]
        covered = self._only_covered(reading, obs, frame, jpeg, time_s)
        if covered:
            return covered
        ex = explain(st, view, diagnose=False, compare_discard=self.watch_discard,
                     tried=self._tried(st))
        was = self.status
        who = st.to_move.value if st.to_move is not None else None
        events: list[LiveEvent] = list(named_later)
        if ex.unchanged:
            self.tracker.remember(reading)
            # (every pyramid seen again: one not seen on a later picture is hidden anew)
            self._forget_missed_waits()
            if was in (Status.WRONG_TABLE, Status.QUESTION):
                self._pending = None
                self.status = Status.PLAYING
                return named_later + [LiveEvent(EventKind.INFO, "the table is put right; "
                                         f"{who} to move", player=who, frame=frame)]
            return named_later + [LiveEvent(EventKind.UNCHANGED, f"no change; {who} to move",
                                     player=who, frame=frame)]
        if ex.explained:
            rebuilt = self._pile_rebuilt(ex, view)
            if rebuilt is not None:
                return [LiveEvent(EventKind.WAITING, rebuilt, player=who,
                                  changes=tuple(str(c) for c in ex.changes), frame=frame)]
            if was is Status.WRONG_TABLE:
                events.append(LiveEvent(EventKind.INFO, "the flagged table is put right",
                                        frame=frame))
            k = self._pick(ex, reading)
            self._pending = None
            self.status = Status.PLAYING
            note = None
            if len(ex.moves) > 1:
                note = (f"{len(ex.moves) - 1} other move(s) fit what the camera sees, e.g. "
                        f"{ex.moves[1 if k == 0 else 0]}")
            events += self._take_seen(ex, k, reading, obs, frame, jpeg, time_s, note)
            # the others that fit, kept for a click that only one of them allows
            self._others = (ex.states[k], [
                (m, after) for i, (m, after) in enumerate(zip(ex.moves, ex.states)) if i != k])
            return events
        restarted = self._restart_seen(reading, obs, frame, jpeg, time_s)
        if restarted:
            return restarted
        again = self._read_again(reading, obs, frame, jpeg, time_s)
        if again:
            return again
        changes = tuple(str(c) for c in ex.changes)
        # two moves seen at once (a picture missed)? held for the next picture to confirm
        pair = self._hold_moves(st, reading, obs, frame)
        two = self._held_waiting(pair, who, changes, frame)
        faceless = self._faceless_cells(st, view)
        if (hidden or faceless) and self.covered_cards_wait:
            if pair is not None:    # (a territory destroyed by the move whose picture was
                # missed)
                return self._ask_held(pair, ex, was, who, changes) if _asked(pair) else two
            three = self._hold_moves(st, reading, obs, frame, three=True)
            if three is not None:       # (or by one of three)
                return self._ask_held(three, ex, was, who, changes)
            # A territory gone without a legal move to destroy it is far more often a hand
            # or an arm over it than a card taken away: wait for a clear view. So is a
            # face-up territory read as face down: a hand over most of a card leaves the
            # camera a patch that looks like no face (a face-down territory is only ever
            # built new, which a legal move explains before this point).
            cells = ", ".join(f"{i},{j}" for i, j in sorted(hidden + faceless)[:6])
            what = "not seen" if not faceless else \
                "not seen or seen face down" if hidden else "seen face down"
            return [LiveEvent(EventKind.WAITING, f"card(s) at {cells} {what} and no move "
                              "explains it: is something covering the table? waiting for a "
                              f"clear view{self._decision_hint(st)}", player=who,
                              changes=changes, frame=frame)]
        # a change that one misread would explain: ask, do not accuse
        played = self._pile_shows_a_play(st, view)
        named = explain(st, view, diagnose=True, compare_discard=True) if played else None
        if named is not None and not named.illegal:
            played = False      # no rule-breaking move plays that card: it says nothing
        suggestions = tuple(self._misreads(st, reading, played))
        both = ("" if pair is None else
                f"; or two moves since the last picture ({pair.words})? the next picture "
                "will tell" if not _asked(pair) else
                f"; or two moves since the last picture, ending the game ({pair.words})? "
                "press \"Accept anyway\" if they were played")
        taken_back = self._taken_back(view)
        if taken_back:
            # the players took the last move(s) back by hand: the table is the position
            # before them. Say so (a misread, if one would explain the table too, is still
            # offered), unless the camera goes back and forth between that table and the
            # game's (the last move's piece hidden and not by turns): that waits, as for any
            # two tables by turns (it was said, or asked, again on every other picture)
            flip = self._flip_flop(st, view, frame)
            if flip:
                return flip
            self._said_back = True
            # (the same table said so on the picture before: still waited on, as the other
            # waits say on a repeat; it was said in full, or asked, again on every picture)
            last = self._judged[-1] if self._judged else None
            repeated = (self._back_before and last is not None and last[1] is st
                        and last[0].same_as(view, with_discard=self.watch_discard))
            n = len(taken_back)
            text = ((f"the table shows the position before the last move ({taken_back[0]}): "
                     "press \"Take back move\" if it was taken back, or put it back on the "
                     "table") if n == 1 else
                    (f"the table shows the position before the last {n} moves "
                     f"({'; '.join(taken_back)}): press \"Take back move\" {n} times if they "
                     "were taken back, or put them back on the table"))
            if not suggestions:
                said = f"still waiting: {text}" if repeated else text
                return [LiveEvent(EventKind.WAITING, said, player=who, move=taken_back[-1],
                                  changes=changes, frame=frame)]
            same = (repeated and was is Status.QUESTION and self._pending is not None
                    and bool(self._pending.suggestions)
                    and self._pending.suggestions[0].text == suggestions[0].text)
            self._pending = _Pending(reading, obs, ex, suggestions, frame)
            self.status = Status.QUESTION
            if same:
                return [LiveEvent(EventKind.WAITING, f"still waiting for an answer: {text}; or "
                                  f"is a piece misread: {suggestions[0].text}", player=who,
                                  frame=frame)]
            return [LiveEvent(EventKind.QUESTION, f"{text}; or is a piece misread: "
                              f"{suggestions[0].text}", move=suggestions[0].move, player=who,
                              changes=changes, suggestions=suggestions, frame=frame)]
        if suggestions:
            # (the same picture and the same question: a question not asked before, the
            # game having moved on by a click, is asked, not "still waited for")
            same = (was is Status.QUESTION and self._pending is not None
                    and self._pending.reading.view.same_as(view)
                    and bool(self._pending.suggestions)
                    and self._pending.suggestions[0].text == suggestions[0].text)
            flip = [] if same else self._flip_flop(st, view, frame)
            if flip:
                return flip
            self._pending = _Pending(reading, obs, ex, suggestions, frame)
            self.status = Status.QUESTION
            if same:
                return [LiveEvent(EventKind.WAITING, "still waiting for an answer: "
                                  + suggestions[0].text, frame=frame, player=who)]
            return [LiveEvent(EventKind.QUESTION, "please check: " + suggestions[0].text
                              + both, move=suggestions[0].move, player=who, changes=changes,
                              suggestions=suggestions, frame=frame)]
        full = named if named is not None and played else explain(
            st, view, diagnose=True, compare_discard=self.watch_discard)
        if two and not full.illegal:
            # no single move, legal or not, and no misread explains it
            assert pair is not None
            return self._ask_held(pair, ex, was, who, changes) if _asked(pair) else two
        if not full.illegal:
            # nor two moves: three, the two pictures between them missed (a hand over the
            # table through two turns, two photos not taken)?
            three = self._hold_moves(st, reading, obs, frame, three=True)
            if three is not None:
                return self._ask_held(three, ex, was, who, changes)
        else:
            # One move explains the picture only by breaking a rule, and two or three legal
            # moves do too (a picture or two missed): asked about, naming the rule, not
            # ruled on. Red's reorient missed, red's and blue's read as one reorient of
            # red's turned blue's pyramids ("only your own pyramids"): a game played by the
            # rules was ruled against.
            run = (pair or self._hold_moves(st, reading, obs, frame, shown=False)
                   or self._hold_moves(st, reading, obs, frame, three=True, shown=False))
            if run is not None:
                self._held = run = replace(run, beside=full.illegal[0])
                return self._ask_held(run, ex, was, who, changes)
        missed = self._missed_pyramid(st, view)
        unseen = self._still_unseen(st, view) if missed is None else ""
        broken = [] if missed is not None or full.illegal else broken_short(
            st, view, MISSED_PYRAMIDS, compare_discard=self.watch_discard)
        if broken:
            # a rule broken beside pyramids not seen: waited on once, as a legal move is,
            # then ruled on naming the rule (it was "no move explains this change", and the
            # clear picture after it a second illegal entry, naming the rule)
            v, gone = broken[0]
            why = "; ".join(x.reason for x in v.violations)
            if self._waited_on(view):
                full = replace(full, illegal=tuple(b for b, _ in broken))
            else:
                self._missed_waits = self._missed_waits[-(MISSED_WAITS_KEPT - 1):] + [view]
                are = "is" if len(gone) == 1 else "are"
                missed = (f"{v.move} fits, but {_pyramids_words(gone, view.cards)} it leaves "
                          f"{are} not seen on this picture, and it breaks a rule: {why}"
                          if len(broken) == 1 else
                          # (the pyramid the move took is the one hidden: where it went
                          # is not seen)
                          f"{len(broken)} moves that break a rule fit but for pyramids not "
                          f"seen on this picture, e.g. {v.move}: {why}")
        if missed is not None:
            # (a table left standing settles once: the runner looks at it again, else the
            # game waited for good on a camera that keeps missing the pyramid)
            self._look_again = True
            if full.illegal:
                # (the next picture, the same, has it ruled on)
                v = full.illegal[0]
                missed += (f"; else {v.move} breaks a rule: "
                           + "; ".join(x.reason for x in v.violations))
            return [LiveEvent(EventKind.WAITING, f"{missed} (hidden, or missed by the "
                              "camera?); waiting for the next picture", player=who,
                              changes=changes, frame=frame)]
        self._held = None       # a move that breaks a rule explains it: that is ruled on
        # (the same table, or the same rule-breaking move seen anew: a hand lifted off a
        # pyramid it hid, is ruled on once)
        same = (was is Status.WRONG_TABLE and self._pending is not None
                and (self._pending.reading.view.same_as(view)
                     or _same_illegal(self._pending.explanation, full)))
        flip = [] if same else self._flip_flop(st, view, frame)
        if flip:
            return flip
        self._pending = _Pending(reading, obs, full, (), frame)
        self.status = Status.WRONG_TABLE
        if same:
            # (the pyramid the ruling waits to see named again: said once, the players were
            # left to guess which one put it right)
            waits = "" if not unseen else ": " + unseen.removesuffix("; else ")
            return [LiveEvent(EventKind.WAITING, "still waiting for the table to be put right "
                              f"(or an override){waits}", player=who, frame=frame)]
        if full.illegal:
            v = full.illegal[0]
            reasons = tuple(x.reason for x in v.violations)
            text = unseen + f"illegal: {v.move}: " + "; ".join(reasons)
            # (the rules' ids too: a record read later names the rule as the window did)
            self._record("illegal", v.move, player=who, observation=obs, keyframe_jpeg=jpeg,
                         note=text + (f" [rule {', '.join(v.rules)}]" if v.rules else ""))
            return [LiveEvent(EventKind.ILLEGAL, text, move=v.move, player=who,
                              verdicts=tuple(str(x) for x in v.violations), rules=v.rules,
                              changes=changes, frame=frame)]
        text = (unseen + "no move explains this change: " + "; ".join(changes)
                + self._stash_hint(st, view) + self._decision_hint(st))
        self._record("illegal", None, player=who, observation=obs, keyframe_jpeg=jpeg,
                     note=text)
        return [LiveEvent(EventKind.ILLEGAL, text, player=who, changes=changes, frame=frame)]

    @staticmethod
    def _pile_rebuilt(ex: Explanation, view: TableView) -> str | None:
        """What to say where the one change seen is the discard pile gone, shuffled into a
        new draw pile by a draw (None where it is not): a draw is clicked, as ever, and the
        camera cannot tell how many cards were drawn, nor whether by the turn's draw or a
        power's (a High Priestess on a territory), so the session waits for the click. The
        simplest was taken from the picture (a power's draw, or "draw 1" for a draw of 3),
        the hands' sizes wrong from then on, and the click after it refused or kept for
        the player's next turn."""
        if view.discard_top is not None or any(c.cell is not None for c in ex.changes):
            return None
        if any(isinstance(m, Reveal) for m in ex.moves):
            # the Fool's draw shuffled it: any card it may play fits, none is seen (the
            # first in the deck's order was taken, named from nothing)
            who = ex.moves[0].player.value
            return ("the discard pile is gone: shuffled into a new draw pile by the Fool's "
                    f"draw; the camera cannot see the card drawn: {who} clicks \"reveal\" "
                    "with it, under Moves the camera cannot see")
        if not any(isinstance(m, Draw) for m in ex.moves):
            return None
        options = " | ".join(str(m) for m in ex.moves[:6])
        return ("the discard pile is gone: shuffled into a new draw pile by a draw? the "
                f"camera cannot see which; click it ({options})")

    @staticmethod
    def _hidden_cells(st: ZarcanaState, view: TableView) -> list[tuple[int, int]]:
        """Board cells that hold a card in the game but show none to the camera."""
        board = TableView.of(st).cards
        return sorted(c for c in board if c not in view.cards)

    @staticmethod
    def _faceless_cells(st: ZarcanaState, view: TableView) -> list[tuple[int, int]]:
        """Board cells whose top card is face up in the game but face down to the camera."""
        board = TableView.of(st).cards
        return sorted(c for c, cid in board.items()
                      if cid != BACK and view.cards.get(c) == BACK)

    def _read_again(self, reading: TableReading, obs: Observation, frame: int | None,
                    jpeg: bytes | None, time_s: float | None) -> list[LiveEvent]:
        """The last move taken from a picture, read again from this one, which no move from
        the game's position explains. A picture taken mid-move (the card on the pile, the
        pyramid still in the player's hand, away from the table) can fit a legal move: a
        pyramid of one's own gone is an attack on it. When the table then shows one legal
        move of the same player from the position before that one, that is the move made:
        the first reading is taken back (recorded as an undo) and this one accepted. Only
        the last move, only one seen by the camera (a click or an override stands), only
        one that took a pyramid of the player's own off the board (what a picture taken
        mid-move shows) or that changed nothing on the table but pyramids gone (a hand
        resting over a pyramid, taken for a territory's attack on it), and only the same
        player's: any other change is judged as before
        (a misread that comes and goes must not rewrite the move). Unless the picture
        before this one showed the table as it was before the move, said so (a card
        misread on the move's picture fitted a move, a Pentacles territory building on
        itself): two pictures in a row then show the game without it, and this one a move
        of the same player on from there, which was ruled on as no move at all."""
        if not self._history or self._history[-1].kind != "move":
            return []
        last = self._history[-1]
        before = self._before_last()
        if before is None or before.to_move is None or before.to_move.value != last.player:
            return []
        # (the position the last move is taken back to: without a name it read off the pile)
        before = names_forgotten([before], last.named_from_pile)[0]
        mover = before.to_move

        def own(state: ZarcanaState) -> int:
            return sum(1 for ps in state.pieces.values() for p in ps if p.color is mover)

        covered = self._only_pyramids_gone(before, last.state)
        went_back = self._back_before
        if own(last.state) >= own(before) and not covered and not went_back:
            return []
        ex = explain(before, reading.view, diagnose=False, compare_discard=self.watch_discard)
        # the new reading must put back the pyramid the first took off (it was in the hand):
        # a misread card on the pile alone must not turn a true self-attack into another
        back = [k for k in range(len(ex.moves))
                if covered or went_back or own(ex.states[k]) > own(last.state)]
        if not back:
            return []
        ex = replace(ex, moves=tuple(ex.moves[k] for k in back),
                     states=tuple(ex.states[k] for k in back))
        self._take_back_last()
        self._state = before
        self._held = None
        self._sync_tracker(before)
        self._record("undo", None, player=last.player, state=before,
                     note=f"read again: {last.move} (" + (
                         "the table went back without it" if went_back and not covered
                         else "a picture taken mid-move") + ")")
        k = self._pick(ex, reading)
        self._pending = None
        self.status = Status.PLAYING
        why = ("a hand was over the pyramid it took off" if covered else
               "the picture after it showed the table without it" if went_back else
               "it was taken mid-move")
        text = (f"{last.player}'s move is read again: {why} on the picture of {last.move}; "
                f"the table now shows {ex.moves[k]}")
        events = [LiveEvent(EventKind.INFO, text, move=last.move, player=last.player,
                            frame=frame, source="camera", notice=text)]
        return events + self._take_seen(ex, k, reading, obs, frame, jpeg, time_s)

    def _take_seen(self, ex: Explanation, k: int, reading: TableReading, obs: Observation,
                   frame: int | None, jpeg: bytes | None, time_s: float | None,
                   note: str | None = None) -> list[LiveEvent]:
        """Move ``k`` of those ``ex`` finds on ``reading``'s picture taken as the camera saw
        it (a face-down card it destroyed named as the picture's reading found it), and the
        reading remembered as the table after it."""
        events = self._accept(ex.moves[k], ex.states[k], kind="move", source="camera",
                              obs=obs, jpeg=jpeg, frame=frame, time_s=time_s, note=note,
                              named=ex.named_before(self._state, ex.states[k]))
        self.tracker.remember(reading)
        self._sync_tracker(ex.states[k])
        return events

    def _only_covered(self, reading: TableReading, obs: Observation, frame: int | None,
                      jpeg: bytes | None, time_s: float | None) -> list[LiveEvent]:
        """The last move taken from a picture took a pyramid off the board (an attack on
        it), and this picture shows that very pyramid (colour, size and pose) back on the
        cell it stood on: a hand rested over it on that picture, and no attack was made.
        The camera cannot tell a pyramid under a still hand from one taken off, and the
        attack a power of a territory makes changes nothing else on the table; the pyramid
        back was then read as a new move (a START, its player having none left). The
        attack is taken back (said on show, and recorded as an undo) and this picture
        judged from the position before it: the same table, or one legal move from it.
        Only the last move, only one seen by the camera (a click or an override stands),
        and only where the position before it explains this picture; anything else is
        judged as before. A small upright pyramid really destroyed, its player then STARTing
        again on that very card, looks the same to the camera, and is read so too at first
        (a hand resting still is the likelier): that reading is kept (:class:`_Restarted`)
        for the next move to tell, which only one of the two positions may allow (after the
        start, the player after the pyramid's is to move; before the attack, the attacker
        is): :meth:`_restart_stood`."""
        if not self._history or self._history[-1].kind != "move":
            return []
        last = self._history[-1]
        before = self._before_last()
        if before is None:
            return []
        view = reading.view
        lost = (Counter((p.color, p.size) for ps in before.pieces.values() for p in ps)
                - Counter((p.color, p.size) for ps in last.state.pieces.values() for p in ps))
        # (counted: a pyramid like another on its cell, one of the two covered, is back
        # where the cell shows more of them than the attack left)
        back = []
        for cell, ps in before.pieces.items():
            again = ((Counter(ps) & Counter(view.pyramids.get(cell, ())))
                     - Counter(last.state.pieces.get(cell, ())))
            back += [(p, cell) for p, n in sorted(again.items()) if (p.color, p.size) in lost
                     for _ in range(n)]
        if not back:
            return []
        ex = explain(before, view, diagnose=False, compare_discard=self.watch_discard)
        if not ex.unchanged and not ex.explained:
            return []
        self._take_back_last()
        self._state = before
        self._held = None
        self._pending = None
        self.status = Status.PLAYING
        self._forget_missed_waits()
        self._sync_tracker(before)
        was = _pyramids_words(back, TableView.of(before).cards)
        one = len(back) == 1
        self._record("undo", None, player=last.player, state=before,
                     note=f"not played: {last.move} ({was} {'was' if one else 'were'} "
                          "only covered)")
        text = (f"{last.move} is taken back: {was} {'is' if one else 'are'} back where "
                f"{'it' if one else 'they'} stood, so a hand was over "
                f"{'it' if one else 'them'} on the last picture, not an attack")
        restart = self._restart_after(last, view) if ex.unchanged else None
        if restart is not None:
            kept = _Restarted(before, last, restart[0], restart[1], obs, frame, time_s, was)
            self._restarted = kept
            starter = restart[0].player.value
            if kept.turn_tells:
                text += f" (or {starter} started again on it: the next move will tell)"
            else:
                # (two players: the attacker is to move either way, and the next move
                # mostly fits both; the players say which it was)
                mover = (before.to_move.value if before.to_move is not None
                         else "the next player")
                text += (f" (or {starter} started again on it: the next move cannot tell, "
                         f"{mover} being to move either way; if {starter} did, click "
                         f"\"{kept.click}\" before {mover}'s next move)")
        events = [LiveEvent(EventKind.INFO, text, move=last.move, player=last.player,
                            frame=frame, source="camera", notice=text)]
        if ex.unchanged:
            who = before.to_move.value if before.to_move is not None else None
            events.append(LiveEvent(EventKind.UNCHANGED, f"no change; {who} to move",
                                    player=who, frame=frame))
        else:
            k = self._pick(ex, reading)
            events += self._accept(ex.moves[k], ex.states[k], kind="move", source="camera",
                                   obs=obs, jpeg=jpeg, frame=frame, time_s=time_s)
        self.tracker.remember(reading)
        self._sync_tracker(self._state)
        return events

    def _restart_after(self, attack: HistoryEntry, view: TableView
                       ) -> tuple[Start, ZarcanaState] | None:
        """The start, legal after ``attack``, that puts back on its card the one pyramid
        the attack took off, as ``view`` shows it, with the game after it; None where no
        single start does (a pyramid the attack only made smaller, two taken off, or its
        player not the next to move)."""
        ex = explain(attack.state, view, diagnose=False, compare_discard=self.watch_discard)
        starts = [(m, after) for m, after in zip(ex.moves, ex.states) if isinstance(m, Start)]
        return starts[0] if len(starts) == 1 else None

    def _restarted_now(self) -> _Restarted | None:
        """The attack kept as maybe made (:meth:`_only_covered`), while the game stands
        where it was taken back to: a move since puts it aside, and taking that move back
        brings it back (the same position, the same table: the players may then say it
        was destroyed, :meth:`_restart_said`); a card named since ends it (a new position)."""
        kept = self._restarted
        if kept is None or self._state is not kept.at:
            return None
        return kept

    def _restart_seen(self, reading: TableReading, obs: Observation, frame: int | None,
                      jpeg: bytes | None, time_s: float | None) -> list[LiveEvent]:
        """This picture, which no move explains from the position an attack was taken back
        to, explained by a legal move after that attack and its pyramid's player starting
        again on the same card: they stood (:meth:`_restart_stood`), and that move is
        taken. Else nothing."""
        kept = self._restarted_now()
        if kept is None:
            return []
        ex = explain(kept.after, reading.view, diagnose=False,
                     compare_discard=self.watch_discard)
        if not ex.explained:
            return []
        k = self._pick(ex, reading)
        events = self._restart_stood(kept, ex.moves[k], source="camera", frame=frame)
        return events + self._take_seen(ex, k, reading, obs, frame, jpeg, time_s)

    def _restart_clicked(self, st: ZarcanaState, move: Move) -> list[LiveEvent]:
        """A click not legal where an attack was taken back to, and legal after the attack
        and its pyramid's player starting again on the same card (the next player's draw):
        they stood (:meth:`_restart_stood`); the click is then carried out by the caller.
        Else nothing."""
        kept = self._restarted_now()
        if kept is None or st.check(move).legal or not kept.after.check(move).legal:
            return []
        return self._restart_stood(kept, move, source="click", frame=self._last_frame)

    def _restart_said(self, text: str) -> list[LiveEvent]:
        """The players' click (``text``, :attr:`_Restarted.click`) saying the attack taken
        back as only covered was made, its pyramid's player starting again on that card:
        they stand (:meth:`_restart_stood`). Offered while the game stands where the attack
        was taken back to (:meth:`manual_options`): with two players no next move tells."""
        self._refuse_when_over("an attack taken back cannot be said to stand")
        kept = self._restarted_now()
        if kept is None or " ".join(text.split()).lower() != kept.click:
            offer = "" if kept is None else f" (the one there is: {kept.click!r})"
            raise LiveError(f"{text!r}: there is no attack taken back as only covered to "
                            f"say was made now{offer}; the click is offered while the game "
                            "stands where the attack was taken back to (take back the moves "
                            "since to get it again)")
        return self._restart_stood(kept, None, source="click", frame=self._last_frame)

    def _restart_stood(self, kept: _Restarted, nxt: Move | None, *, source: str,
                       frame: int | None) -> list[LiveEvent]:
        """The attack ``kept`` taken back, and the start after it that put its pyramid
        back, accepted (said on show, and recorded after the undo): ``nxt``, the move that
        follows, follows only them (None: the players said so, :meth:`_restart_said`)."""
        self._restarted = None
        self._pending = None
        self.status = Status.PLAYING
        start = kept.start
        why = (", as the players said" if nxt is None else f": {nxt} follows only them")
        text = (f"{kept.attack.move} stands, and {start.player.value} started again on "
                f"{format_cell(start.cell)}{why} ({kept.words} was destroyed, not covered)")
        events = [LiveEvent(EventKind.INFO, text, move=kept.attack.move,
                            player=kept.attack.player, frame=frame, source=source,
                            notice=text)]
        note = ("read again: the players said it was destroyed, not covered" if nxt is None
                else f"read again for {nxt}")
        events += self._accept(kept.attack.move, kept.attack.state, kind="move",
                               source="camera", frame=kept.attack.frame,
                               time_s=kept.attack.time_s, note=note)
        events += self._accept(start, kept.after, kind="move", source="camera",
                               obs=kept.record, frame=kept.frame, time_s=kept.time_s,
                               note=note)
        self._sync_tracker(kept.after)
        return events

    @staticmethod
    def _only_pyramids_gone(before: ZarcanaState, after: ZarcanaState) -> bool:
        """Whether the table after a move is the one before it less some pyramids, nothing
        else changed: what the camera sees of a pyramid attacked by a territory's power, and
        of a pyramid under a hand resting still."""
        was, now = TableView.of(before), TableView.of(after)
        if was.cards != now.cards or was.discard_top != now.discard_top:
            return False
        gone = False
        for cell in set(was.pyramids) | set(now.pyramids):
            left = Counter(now.pyramids.get(cell, ())) - Counter(was.pyramids.get(cell, ()))
            if left:
                return False
            gone = gone or len(now.pyramids.get(cell, ())) < len(was.pyramids.get(cell, ()))
        return gone

    def _forget_missed_waits(self) -> None:
        """Forget the tables waited on for pyramids not seen, and the move the last wait
        named (:meth:`_missed_pyramid`): a move taken or taken back, or every pyramid seen."""
        self._missed_waits = []
        self._missed_move = None

    def _waited_on(self, view: TableView) -> bool:
        """Whether this table was waited on already for pyramids not seen, or ruled on: it
        is not waited on again (:meth:`_missed_pyramid`)."""
        if any(view.same_as(w, with_discard=self.watch_discard) for w in self._missed_waits):
            return True
        return (self.status is Status.WRONG_TABLE and self._pending is not None
                and self._pending.reading.view.same_as(view))

    def _still_unseen(self, st: ZarcanaState, view: TableView) -> str:
        """What a ruling says first of a table waited on already for pyramids not seen
        (:meth:`_missed_pyramid`), seen again without them: which are still not seen, and
        that the ruling is put right once the camera sees them (a picture showing them is
        judged anew). Ruled on after the one wait, it said only "no move explains this
        change: 2,2: blue small (upright) left", or a far-fetched rule-breaking move. Empty
        for any other table."""
        if not any(view.same_as(w, with_discard=self.watch_discard)
                   for w in self._missed_waits):
            return ""
        short = pyramids_short(st, view, MISSED_PYRAMIDS, compare_discard=self.watch_discard)
        if short is None:
            return ""
        what = _pyramids_words(short.missing, TableView.of(short.after).cards)
        one = len(short.missing) == 1
        it, are = ("it", "is") if one else ("they", "are")
        fits = "" if short.move is None else f"{short.move} fits, but "
        leaves = "" if short.move is None else (" it leaves" if one else " they leave")
        return (f"{fits}{what}{leaves} {are} still not seen: if {it} {are} still there, show "
                f"{'it' if one else 'them'} to the camera: this ruling is put right when {it} "
                f"{are} seen; else ")

    def _missed_pyramid(self, st: ZarcanaState, view: TableView) -> str | None:
        """One or two (:data:`MISSED_PYRAMIDS`) pyramids of the game not seen on this
        picture, where the table with them put back is the game's, or one legal move from
        it, said ("the red small (upright) pyramid on the 9 of Cups at 0,2: not seen ...";
        else None). The camera misses a pyramid now and then (under a card's shadow, a
        clear one on a pale table, a hand over two), and that picture was ruled "no move
        explains this change", a red accusation the next picture took back. It is waited
        on once: the same table on a later picture, before a move is taken or the game's
        table seen again, is ruled on as before (pyramids taken off for good; every table
        waited on is remembered, so a camera that misses another pyramid on every other
        picture cannot keep the table from being ruled on). The move the last wait named
        and one more after it, with pyramids still not seen (the hand stayed while the next
        player moved), are waited on as well: the picture was ruled "no move explains this
        change", and the next one, with every pyramid seen, took both moves."""
        if self._waited_on(view):
            return None
        # (the game's table or one legal move's but for them: often the pyramid the move
        # grew, moved, cloned or turned; or two, a hand or an arm over both)
        short = pyramids_short(st, view, MISSED_PYRAMIDS, compare_discard=self.watch_discard)
        first, self._missed_move = self._missed_move, None
        if short is None and first is not None and not first.after.is_over:
            # (the move the last wait named, then the next decision's: no further)
            short = pyramids_short(first.after, view, MISSED_PYRAMIDS,
                                   compare_discard=self.watch_discard)
        else:
            first = None
        if short is not None:
            self._missed_waits = self._missed_waits[-(MISSED_WAITS_KEPT - 1):] + [view]
            if first is None and short.move is not None:
                self._missed_move = short
            what = _pyramids_words(short.missing, TableView.of(short.after).cards)
            are = "is" if len(short.missing) == 1 else "are"
            if first is not None:
                assert first.move is not None
                if short.move is None:
                    return (f"{first.move} fits, but {what} it leaves {are} not seen on this "
                            "picture")
                return (f"{first.move} and then {short.move} fit, but {what} they leave {are} "
                        "not seen on this picture")
            if short.move is None:
                it = "it" if len(short.missing) == 1 else "them"
                return (f"{what}: not seen on this picture, and no legal move explains {it} "
                        "being gone")
            return f"{short.move} fits, but {what} it leaves {are} not seen on this picture"
        return None

    def _hold_moves(self, st: ZarcanaState, reading: TableReading, obs: Observation,
                    frame: int | None, three: bool = False, shown: bool = True
                    ) -> _HeldMoves | None:
        """Two legal moves seen at once (the picture between them was missed: a hand over
        the table, a photo not taken) that explain every change, held (not taken) until the
        next picture shows one more move after them (:meth:`_held_agreed`); with ``three``,
        three moves (two pictures missed), asked only where nothing else explains the
        table. Only moves with a card to show for them (a card played onto the pile,
        built, or destroyed): a pyramid the camera misses or misreads can look like a
        capture or a growth, never like a card. Or a START among them: a pyramid of a
        colour not yet on the board, standing on a territory, is its player's START, which
        no size misread makes (a colour misread would also have to explain the colour
        gone). A move beside it may still be a misread (a growth that is a size read
        wrong): the hold is what catches that, as the next picture, read right, shows no
        move of the next player from their end, and they are dropped (the misread question
        is asked first meanwhile). ``shown`` off: any moves, a card shown or not (two
        moves beside a rule broken, which are asked about). None found, or the search ran
        out of time: None."""
        # (the same table seen again from the same position: the moves found, from this
        # picture, not the search again, 0.25 s or more a picture while a table nothing
        # explains stands still)
        key = (reading.view.normalised(), reading.discard_seen, self.watch_discard)
        found = self._hold_trials[three, shown].outcome(
            st, key, lambda: self._held_found(st, reading, obs, frame, three, shown))
        self._held = None if found is None else replace(found, reading=reading, record=obs,
                                                        frame=frame)
        return self._held

    def _held_found(self, st: ZarcanaState, reading: TableReading, obs: Observation,
                    frame: int | None, three: bool, shown_only: bool = True
                    ) -> _HeldMoves | None:
        """The search of :meth:`_hold_moves`: the moves it holds (None: none)."""
        runs, complete = self._moves_at_once(st, reading, compare_discard=self.watch_discard,
                                             three=three)
        held = [_HeldMoves.of(r, reading, obs, frame, st) for r in runs] if complete else []
        seen = set(reading.discard_seen)

        def cards_shown(h: _HeldMoves) -> bool:
            steps = zip((st,) + h.states[:-1], h.states)
            return any(TableView.of(a).cards != TableView.of(b).cards
                       or a.discard != b.discard for a, b in steps) or any(
                isinstance(mv, Start) for mv in h.moves)

        def unseen_cards(mv: Move) -> int:
            if isinstance(mv, Action) and mv.source in (Source.HAND, Source.WILD):
                return sum(1 for c in mv.cards if c not in seen)
            return 0

        shown = [h for h in held if cards_shown(h) or not shown_only]
        if not shown:
            return None
        # (first those whose pile agrees with the pile seen: two cards played as one, the
        # one under the other, fit the board as the top one played alone)
        return self._pile_named(
            min(shown, key=lambda h: (_against_pile(h.after, reading),
                                      sum(unseen_cards(mv) for mv in h.moves))), reading)

    def _pile_named(self, held: _HeldMoves, reading: TableReading) -> _HeldMoves:
        """``held`` with the card of a face-down territory one of its moves destroyed named
        where the picture shows it under the pile's top: the one card seen on the pile that
        the game after the moves knows nowhere (the search made the move with "?" on the
        pile, which the next move covered, so the card was named nowhere, though seen). Its
        moves made again from there; as they are taken, :meth:`_face_down_seen` names it
        back. Else (the pile neat, or more than one such card seen) ``held`` as it is."""
        if not self.watch_discard:
            return held
        steps = [i for i, s in enumerate(held.states[:-1]) if s.discard_top() == UNKNOWN]
        unknown = held.after.unseen_cards()
        seen = {c for c in reading.discard_seen[1:] if c not in (BACK, UNKNOWN)
                and c in unknown}
        if len(steps) != 1 or len(seen) != 1:
            return held
        card = seen.pop()
        # (a card of the pile the picture does not show, which the camera may have taken for
        # this one: then it is that card misread as often as the destroyed one, and a wrong
        # name stood for good, a later picture of the cards under the top never compared)
        alike = sorted(c for c in set(held.after.discard) - set(reading.discard_seen)
                       if _look_alike(card, c))
        over = reading.discard_seen[reading.discard_seen.index(card) - 1]
        if alike:
            return replace(held, unsure=f"{card}, seen on the discard pile under {over}, may "
                                        f"be {' or '.join(alike)} misread")
        # (nor where the camera was not sure of the card, mostly covered: it keeps the nearest
        # card id, with a low confidence, and a misread of the destroyed card itself, another
        # card the game knows nowhere, named it wrongly for good)
        sure = max((c.confidence for c in reading.cards
                    if c.zone == DISCARD_ZONE and c.id == card), default=1.0)
        if sure < PILE_NAME_SURE:
            return replace(held, unsure=f"{card}, seen on the discard pile under {over}, was "
                                        "not read surely")
        i = steps[0]
        named = list(held.named)
        # (made from the position with the cards the Alchemist covered that it uncovers
        # named, where it uncovers any, as the run was)
        given = named[i] if named else None
        before = given if given is not None else held.before if i == 0 else held.states[i - 1]
        found = face_down_named(before, held.moves[i], card)
        if found is None:
            return held
        states = list(held.states[:i]) + [found[1]]
        try:
            for j in range(i + 1, len(held.moves)):
                here = states[-1]
                given = named[j] if named else None
                if given is not None:
                    named[j] = here = with_names(here, names_given(held.states[j - 1], given))
                states.append(here.apply(held.moves[j]))
        except CompanionError:
            return held
        return replace(held, states=tuple(states), named=tuple(named))

    @staticmethod
    def _held_waiting(held: _HeldMoves | None, who: str | None, changes: tuple[str, ...],
                      frame: int | None) -> list[LiveEvent]:
        """The line that says moves are held for the next picture (none held: none)."""
        if held is None:
            return []
        return [LiveEvent(EventKind.WAITING, f"{held.count} since the last picture? "
                          f"{held.words}: waiting for the next picture to agree", player=who,
                          changes=changes, frame=frame, source="camera")]

    def _ask_held(self, held: _HeldMoves, ex: Explanation, was: Status, who: str | None,
                  changes: tuple[str, ...]) -> list[LiveEvent]:
        """Moves seen at once that are asked about (:func:`_asked`), not taken when the
        next picture agrees as two are. Three: more than one run of three can end on the
        table seen, and a tester's lost pictures 13 and 14 had a false one taken, which the
        next picture confirmed as well as the true one. Two that end the game: no move
        comes after them for a picture to agree with, so they were held and dropped on
        every picture of the finished table, and the game never ended. "Accept anyway"
        (:meth:`override`), or a click of the player after three, takes them; a picture
        that changes the table drops the question."""
        same = (was is Status.QUESTION and self._pending is not None
                and self._pending.reading.view.same_as(held.reading.view))
        self._pending = _Pending(held.reading, held.record, ex, (), held.frame)
        self.status = Status.QUESTION
        if same:
            return [self._still_asked(held, who)]
        v = held.beside
        alone = ("" if v is None else f"; as one move, {v.move} breaks a rule: "
                 + "; ".join(x.reason for x in v.violations))
        return [LiveEvent(EventKind.QUESTION, f"{held.since}? {held.words}: press \"Accept "
                          f"anyway\" if they were played, or put the table right{alone}",
                          player=who, changes=changes, frame=held.frame, source="camera",
                          verdicts=() if v is None else tuple(str(x) for x in v.violations),
                          rules=() if v is None else v.rules)]

    @staticmethod
    def _still_asked(held: _HeldMoves, who: str | None) -> LiveEvent:
        return LiveEvent(EventKind.WAITING, f"still waiting for an answer: {held.since}? "
                         f"{held.words}", player=who, frame=held.frame)

    def _held_agreed(self, st: ZarcanaState, reading: TableReading, obs: Observation,
                     jpeg: bytes | None, frame: int | None, time_s: float | None
                     ) -> list[LiveEvent]:
        """The moves held by :meth:`_hold_moves`, accepted with the move this picture shows
        after them; else dropped (the table is judged from the last accepted move as
        usual)."""
        held, self._held = self._held, None
        if held is None or held.before is not st:
            return []
        if _asked(held):
            # (asked, not taken by a picture: _ask_held) the same table keeps the question
            # open, said again without searching again; another drops it, and the table is
            # judged as usual. (Two that end the game beside a misread asked first: that
            # question is the one said again, by the usual judging.)
            if (self.status is Status.QUESTION and self._pending is not None
                    and not self._pending.suggestions
                    and reading.view.same_as(held.reading.view,
                                             with_discard=self.watch_discard)):
                self._held = held
                return [self._still_asked(held, st.to_move.value
                                          if st.to_move is not None else None)]
            return []
        after = held.after
        then = explain(after, reading.view, diagnose=True, compare_discard=self.watch_discard)
        if not then.explained and not then.illegal:
            covered = self._hidden_cells(after, reading.view) + \
                self._faceless_cells(after, reading.view)
            if covered and self.covered_cards_wait:
                # a hand over the table after the moves' picture: they wait for a clear
                # view to agree (before, they were dropped here, and every move after them
                # was refused: 9 of 22 moves recorded)
                self._held = held
                cells = ", ".join(f"{i},{j}" for i, j in sorted(covered)[:6])
                return [LiveEvent(EventKind.WAITING, f"{held.count} since the last picture? "
                                  f"{held.words}: card(s) at {cells} not seen now; waiting "
                                  "for a clear view to agree",
                                  player=st.to_move.value if st.to_move is not None else None,
                                  frame=frame, source="camera")]
            return []
        k = self._pick(then, reading) if then.explained else 0
        note = f"seen together with the next move: {held.missed}"
        events = [LiveEvent(EventKind.INFO, f"{held.count} since the last picture: "
                            f"{held.words}", frame=frame, source="camera")]
        for mv, new, named in held.steps:
            events += self._accept(mv, new, kind="move", source="camera", obs=obs,
                                   frame=frame, time_s=time_s, note=note, named=named,
                                   unsure=held.unsure, shown=held.reading)
        self._pending = None
        self.status = Status.PLAYING
        if self._state is not after or not then.explained:
            # (the game ended with them, or the move after them breaks a rule: this
            # picture is judged as usual, from their end)
            self._sync_tracker(self._state if self._state is not None else after)
            if self._state is after:
                events += self._judge(reading, obs, frame, jpeg, time_s)
            return events
        return events + self._take_seen(then, k, reading, obs, frame, jpeg, time_s)

    def _keep_early_click(self, st: ZarcanaState, move: Move) -> list[LiveEvent]:
        """A click whose only fault is its turn (blue clicks a draw while the game still
        waits for red's move), kept rather than refused: red moved, and the picture that
        shows it is not in yet (a hand over the table, a photo not taken). Taken once the
        move before it is in, seen or clicked (:meth:`_take_early_click`). Only a click of the
        player after the one to move, one move ahead, and only while no ruling is on show:
        a table the camera saw change with a rule broken is no missed picture, and a
        click two seats ahead is a slip more often than two missed moves. Another click
        replaces it."""
        player = getattr(move, "player", None)
        if (st.is_over or st.to_move is None or player is None or player not in st.players
                or self.status is Status.WRONG_TABLE):
            return []
        order = list(st.players)
        if player != order[(order.index(st.to_move) + 1) % len(order)]:
            return []
        verdict = st.check(move)
        if verdict.legal or set(verdict.rules) != {"turn.wrong-player"}:
            return []
        return self._kept_early(move, f"it is {st.to_move.value}'s turn in the game so far")

    def _keep_own_click(self, st: ZarcanaState, move: Move) -> list[LiveEvent]:
        """The player to move's own click, kept as :meth:`_keep_early_click` keeps the next
        player's, where only a move of theirs not seen yet can make it good: a draw past the
        hand limit (green played the High Priestess, a card out of a full hand, and draws
        with the extra option; the picture of the Priestess was lost, and the draw was
        refused), or a decision nothing asks for yet. Asked only once no other reading of
        the game lets the click in; any other broken rule is refused as before."""
        player = getattr(move, "player", None)
        if (st.is_over or player is None or player != st.to_move or st.phase != "play"
                or st.pending or self.status is Status.WRONG_TABLE):
            return []
        verdict = st.check(move)
        if verdict.legal or not set(verdict.rules) <= {"draw.hand-limit", "turn.pending"}:
            return []
        return self._kept_early(move, "the game so far does not allow it: "
                                + "; ".join(v.reason for v in verdict.violations))

    def _kept_early(self, move: Move, why: str) -> list[LiveEvent]:
        """``move`` kept for :meth:`_take_early_click` (any click kept before dropped), and
        the line that says so and ``why``."""
        st = self._require_state()
        assert st.to_move is not None
        dropped = self._dropped_early_click("another click came")
        self._early_click = (move, len(self._history))
        player = getattr(move, "player", None)
        return dropped + [LiveEvent(
            EventKind.WAITING, f"{move}: kept until {st.to_move.value}'s move is seen or "
            f"clicked ({why}); click it again once that move is in if it is not taken by then",
            move=str(move), player=player.value if player is not None else None,
            frame=self._last_frame, source="click")]

    def _dropped_early_click(self, why: str) -> list[LiveEvent]:
        """The click kept earlier, dropped with a line saying ``why`` (none: nothing)."""
        kept, self._early_click = self._early_click, None
        if kept is None:
            return []
        return [LiveEvent(EventKind.INFO, f"{kept[0]}: the click kept earlier is dropped "
                          f"({why}); click it again if it stands", move=str(kept[0]),
                          frame=self._last_frame, source="click")]

    def _take_early_click(self) -> list[LiveEvent]:
        """The click :meth:`_keep_early_click` (or :meth:`_keep_own_click`) kept, carried out
        once the one move before it is in (seen by the camera, or clicked); dropped with a
        line when more came (the clicking player moved on the table instead) or the game
        ended."""
        kept, st = self._early_click, self._state
        if kept is None or st is None or self.status is not Status.PLAYING:
            return []
        move, since = kept
        seen = len(self._history) - since
        if seen == 0:
            return []
        if st.is_over or seen > 1 or getattr(move, "player", None) != st.to_move:
            return self._dropped_early_click("other moves came first")
        self._early_click = None
        events = self._apply_checked(move, source="click")
        if events and events[0].kind is EventKind.ACCEPTED:
            self._record("note", str(move), player=events[0].player,
                         note="clicked before the camera saw the move before it")
            events[0] = replace(events[0], text=events[0].text + " [clicked before the camera "
                                "saw the move before it]")
        return events

    def _take_held(self, held: _HeldMoves, line: str, note: str) -> list[LiveEvent]:
        """The moves ``held`` accepted, from their own picture (a click, the source's end
        or an override agreed with them): ``line`` says so, ``note`` goes with each."""
        self._held = None
        events = [LiveEvent(EventKind.INFO, line, frame=held.frame, source="camera")]
        for mv, new, named in held.steps:
            events += self._accept(mv, new, kind="move", source="camera", obs=held.record,
                                   frame=held.frame, note=note, named=named,
                                   unsure=held.unsure, shown=held.reading)
        self._pending = None
        if self.status is not Status.OVER:
            self.status = Status.PLAYING
        self.tracker.remember(held.reading)
        self._sync_tracker(self._state if self._state is not None else held.after)
        return events

    def _held_from(self, st: ZarcanaState | None) -> _HeldMoves | None:
        """The moves held from the game as it stands (None: none, or moves the game has
        moved on from)."""
        held = self._held
        if held is None or st is None or held.before is not st or st.is_over:
            return None
        return held

    def _held_clicked(self, st: ZarcanaState, move: Move) -> list[LiveEvent]:
        """The moves held by :meth:`_hold_moves`, accepted when a click comes from the
        player who moves after them (blue clicks a draw before the next picture): that
        click agrees with them as the next picture would, and refusing it as out of turn
        left the game moves behind the table. A click of another player that fits the game
        as it stands leaves them held.

        The player after them can be the one to move before them too: two moves held with
        two players, three with three. Their first move was that player's turn, which
        holds one option only, so the click comes after them (and the run has no camera
        reading that one misread explains: none is held then)."""
        held = self._held_from(st)
        if (held is None or held.ends_early or held.after.is_over
                or getattr(move, "player", None) != held.after.to_move
                or not held.after.check(move).legal):
            return []
        return self._take_held(held, f"{held.count} since the last picture: {held.words} "
                               "(the click agrees)",
                               f"seen together on one picture, before {move} was clicked: "
                               f"{held.missed}")

    @staticmethod
    def _pick(ex: Explanation, reading: TableReading) -> int:
        """Among moves that fit, prefer those whose discarded cards the camera saw.

        So where a card played from the hand and a face-down territory destroyed by a
        territory's power both fit (swords-07 on the pile: played, or the face-down card),
        the hand's play is taken and the other kept for a click. Deliberately: nothing the
        camera sees tells them apart, then or later (the top card is the same; the card under
        it, the destroyed one or the pile's old top, is seen only on a spread pile, whose
        order the camera does not know), and though a player would more often use the free
        territory power, the hand's play names nothing. (Before 2026-12-02 the territory's
        reading named the face-down card for good, through a take-back, so the hand's play
        could not then be put right; a name read off the pile now goes with the move,
        :meth:`_take_back_last`.) If it was wrong, it is taken back and the territory's
        attack clicked, which names the card from the pile (:meth:`_apply_checked`).

        First, though, the moves whose discard pile agrees with the pile seen, where the
        camera knows its order: Judgement's draws all leave Judgement on top, and only the
        cards under it tell how many it took (the simplest, none, was taken whatever they
        showed, the hands' sizes wrong from then on)."""
        seen = set(reading.discard_seen)

        def score(i: int) -> tuple[int, int, int]:
            mv = ex.moves[i]
            against = _against_pile(ex.states[i], reading)
            if isinstance(mv, Action) and mv.source in (Source.HAND, Source.WILD):
                return (against, -sum(1 for c in mv.cards if c in seen), i)
            return (against, 0, i)
        return min(range(len(ex.moves)), key=score)

    def _accept(self, move: Move | str, new: ZarcanaState, *, kind: str, source: str,
                obs: Observation | None = None, jpeg: bytes | None = None,
                frame: int | None = None, time_s: float | None = None,
                note: str | None = None, named: ZarcanaState | None = None,
                unsure: str | None = None, shown: TableReading | None = None
                ) -> list[LiveEvent]:
        """``move`` taken, ``new`` the game after it. ``named``: the game before it with the
        cards the Alchemist covered that it uncovered named from the table
        (:meth:`_uncovered_seen`), and the face-down card it destroyed from the discard
        pile, where the caller has them (:meth:`_face_down_seen` looks for the latter
        otherwise). ``unsure``: why a card seen on the pile was not taken for the one it
        destroyed (:attr:`_HeldMoves.unsure`). ``shown``: the picture that showed the move,
        where not the last one judged (moves held, taken by a later picture or a click)."""
        old = self._state
        assert old is not None
        self._forget_missed_waits()   # (a table waited on before this move is another game's)
        text = new.history[-1] if new.history else str(move)
        player = text.split(":", 1)[0]
        covered: list[str] = []
        if named is not None:
            old, named, covered = self._uncovered_seen(old, named, text)
        names, unknown = self._face_down_seen(old, move, new, text, named, unsure, shown)
        self._state = new
        self._history.append(HistoryEntry(kind, text, player, new, frame, time_s, names))
        said_note = note or (CLICKED_NOTE if kind == "manual" else "")
        self._record("override" if kind == "override" else "move", text, player=player,
                     observation=obs, keyframe_jpeg=jpeg, state=new,
                     note="; ".join(n for n in (said_note, unknown) if n))
        # (the names of the cards it uncovered, which the game file's correction before the
        # move says: the line says them too, as it names a card read off the discard pile
        # in the move's own words, and as a name read after a clicked move has its line)
        note = "; ".join(n for n in (*covered, note, unknown) if n) or None
        said = "; ".join(new.events)
        nxt = new.to_move.value if new.to_move is not None else None
        words = f"{text}" + (f" ({said})" if said else "")
        if nxt is not None and not new.is_over:
            words += f"; {nxt} to move"
        if note:
            words += f" [{note}]"
        events = [LiveEvent(EventKind.ACCEPTED, words, move=text, player=player, frame=frame,
                            source=source)]
        if new.is_over:
            events += self._game_over("the game is over")
        return events

    def _face_down_seen(self, old: ZarcanaState, move: Move | str, new: ZarcanaState,
                        text: str, named: ZarcanaState | None = None,
                        unsure: str | None = None, shown: TableReading | None = None
                        ) -> tuple[FaceDownNames, str | None]:
        """A face-down territory ``move`` destroyed, its card read off the discard pile
        (table.explain): named back in the positions it lay face down in, and recorded as
        a correction before the move, so that the game file's replay of the move puts that
        card on the pile too. The game file kept the card on the pile with the move alone,
        which replayed as "?" there: "the replayed state disagrees with the stored one".
        ``named``: ``old`` with the card named, where the move's reading or click found it
        already (looked for here otherwise). The names given (none: nothing named), and,
        its card not known (no picture showed it: covered on the pile by the next move's
        card before the camera saw it), the words that say so, for the move's note: the
        move said only "? at 1,0 is destroyed". ``unsure``: the card a picture showed that
        may be it, and why it was not named so, said instead. ``shown``: the picture that
        showed the move (:meth:`_accept`; else the last one judged)."""
        card = new.discard_top()
        if card == UNKNOWN and len(new.discard) > len(old.discard):
            gone = sorted(c for c, s in old.board.items()
                          if s and s[-1] == (UNKNOWN, False) and new.board.get(c) != s)
            why = unsure or "no picture showed it face up on the discard pile"
            return {}, (f"the face-down card destroyed at {format_cell(gone[0])} is not "
                        f"known: {why}" if gone else None)
        if card is None or card == UNKNOWN:
            return {}, None
        if named is None:
            found = _named_off_the_pile(old, move, card)
            if found is None:
                return {}, None
            named = found[0]
        self._name_back(old, named)
        cell = _cell_named(old, named)
        # (named from under the pile's top, where held moves are taken: a later move's card
        # covered it on the picture, which did not show it as this move destroyed it. That
        # picture's pile: the last one judged, when a later picture or a click takes the
        # moves, may be squared up or covered, and said "as")
        reading = shown if shown is not None else self._last_reading
        pile = reading.discard_seen if reading is not None else ()
        k = pile.index(card) if card in pile else 0
        where = "as" if k == 0 else f"under {pile[k - 1]} (a later move's card) after"
        # (the line says what the note says in words: a continued game and the replay
        # read it, recording.store.pile_name_read)
        self._record("correction", pile_name_line("before", format_cell(cell), card),
                     state=named,
                     note=f"the face-down card at {format_cell(cell)} is {card}: "
                          f"{PILE_NAME_NOTE} {where} {text} destroyed it")
        return names_given(old, named), None

    def _uncovered_seen(self, old: ZarcanaState, named: ZarcanaState, text: str
                        ) -> tuple[ZarcanaState, ZarcanaState | None, list[str]]:
        """The cards the Alchemist covered at once ("?": no camera saw them) that the move
        ``text`` uncovered, as ``named`` (``old``, the game before the move, with the cards
        the picture showed named: table.explain) names them: named back in every position
        they lay covered in, and recorded as a correction before the move, so that the
        game file's replay of the move uncovers them named too. ``old`` with those names,
        and ``named`` where it names more (a face-down card destroyed, read off the
        discard pile: :meth:`_face_down_seen`), else None; and the names in words, for the
        move's line ("the card the Alchemist covered at 1,0 is cups-04: seen on the
        table")."""
        covered = {cell: given for cell, given in names_given(old, named).items()
                   if any(a != b and a[1] for a, b in zip(*given))}
        if not covered:
            return old, named, []
        first = with_names(old, covered)
        self._name_back(old, first)
        said = []
        for cell, (unknown, stack) in sorted(covered.items()):
            card = next(b[0] for a, b in zip(unknown, stack) if a != b)
            where = format_cell(cell)
            words = f"the card the Alchemist covered at {where} is {card}: {COVERED_NAME_NOTE}"
            said.append(words)
            # (the line says what the note says in words: the replay and a continued game
            # read it, recording.store.covered_name_read)
            self._record("correction", covered_name_line("before", where, card), state=first,
                         note=f"{words} as {text} uncovered it")
        return first, (named if names_given(first, named) else None), said

    def _uncovered_seen_later(self, st: ZarcanaState, view: TableView) -> list[LiveEvent]:
        """The cards the Alchemist covered at once that lie on top now, "?" (the move that
        took the card above away was clicked before the camera saw them), named where this
        picture shows there a card the game knows nowhere, in the game and back to where
        they lay on top, recorded as a correction after the move. The table showed a card
        where the game had "?", which no move explained. Else nothing."""
        names: FaceDownNames = {}
        unseen: set[str] | None = None
        for cell, stack in sorted(st.board.items()):
            card = view.cards.get(cell)
            if not stack or stack[-1] != (UNKNOWN, True) or card is None \
                    or card in (BACK, UNKNOWN):
                continue
            unseen = st.unseen_cards() if unseen is None else unseen
            if card in unseen and all(n[-1][0] != card for _, n in names.values()):
                names[cell] = (stack, stack[:-1] + ((card, True),))
        if not names:
            return []
        named = with_names(st, names)
        self._name_back(st, named)
        self._state = named
        self._sync_tracker(named)
        last = self._history[-1] if self._history else None
        events = []
        for cell, (_, stack) in sorted(names.items()):
            where, card = format_cell(cell), stack[-1][0]
            text = (f"the card the Alchemist covered at {where} is {card}: {COVERED_NAME_NOTE}"
                    + (f" after {last.move}" if last is not None else ""))
            self._record("correction", covered_name_line("after", where, card), state=named,
                         note=text)
            # (kept on show: the same picture's "no change" follows on the status bar)
            events.append(LiveEvent(EventKind.INFO, text,
                                    player=last.player if last is not None else None,
                                    frame=self._last_frame, notice=text))
        return events

    def _take_back_last(self) -> HistoryEntry:
        """The last accepted move, taken off the history. A name it read off the discard
        pile goes with it (the card is "?" again in the positions it lay face down in): the
        pile may have been misread, and only a "?" card can be named or read again, so a
        misread name kept through the take-back stood for good. (A name the players gave
        stays: a take-back does not unsay it.)"""
        last = self._history.pop()
        if last.named_from_pile and self._initial is not None:
            states = names_forgotten([self._initial] + [h.state for h in self._history],
                                     last.named_from_pile)
            self._initial = states[0]
            self._history = [h if state is h.state else replace(h, state=state)
                             for h, state in zip(self._history, states[1:])]
        return last

    def _face_down_seen_later(self, st: ZarcanaState, view: TableView) -> list[LiveEvent]:
        """The card of a face-down territory the last move destroyed, "?" on the pile (the
        move clicked before the camera saw it), named where this picture shows a card on
        top of the pile that the game knows nowhere: as :meth:`_face_down_seen` names it,
        in the move and back to where it lay face down, recorded as a correction after the
        move. The picture asked "is the card played ?, not major-10?". Else nothing."""
        card = view.discard_top
        if (not self.watch_discard or not self._history or st.discard_top() != UNKNOWN
                or card is None or card in (BACK, UNKNOWN) or card not in st.unseen_cards()):
            return []
        before = self._before_last()
        last = self._history[-1]
        if before is None:
            return []
        found = _named_off_the_pile(before, last.move, card)
        if found is None:
            return []
        named, after = found
        cell = format_cell(_cell_named(before, named))
        # (named back with the move's position off the history: it holds the stack no more)
        self._history.pop()
        self._name_back(before, named)
        # (read off the pile: a take-back of the move forgets it, as the pile may be misread)
        self._history.append(replace(last, state=after,
                                     named_from_pile=names_given(before, named)))
        self._state = after
        self._sync_tracker(after)
        text = (f"the face-down card destroyed at {cell} is {card}: {PILE_NAME_NOTE} "
                f"after {last.move}")
        # (a continued game finds the move whose name this is by the line, not the words:
        # commands/run.py, _recorded_history)
        self._record("correction", pile_name_line("after", cell, card), state=after,
                     note=text)
        # (kept on show: the same picture's "no change" follows on the status bar)
        return [LiveEvent(EventKind.INFO, text, player=last.player, frame=self._last_frame,
                          notice=text)]

    def _apply_checked(self, move: Move, *, source: str) -> list[LiveEvent]:
        st = self._require_state()
        if self.status is Status.OVER or st.is_over:
            raise LiveError("the game is over")
        verdict = st.check(move)
        who = st.to_move.value if st.to_move is not None else None
        if not verdict.legal:
            return [LiveEvent(EventKind.ILLEGAL, "illegal: " + verdict.explain().replace("\n", " "),
                              move=str(move), player=who, rules=verdict.rules,
                              verdicts=tuple(str(v) for v in verdict.violations),
                              frame=self._last_frame, source=source)]
        try:
            new = st.apply(move)
        except CompanionError as exc:
            return [LiveEvent(EventKind.ILLEGAL, f"cannot carry out {move}: {exc}",
                              move=str(move), player=who, frame=self._last_frame, source=source)]
        shown = self._last_reading.view.discard_top if self._last_reading is not None \
            and self.watch_discard else None
        named: ZarcanaState | None = None
        if new.discard_top() == UNKNOWN and shown is not None:
            # a face-down territory destroyed by a click (a reading taken back and put
            # right): its card is the one the last picture shows on the pile, which the game
            # does not know to lie elsewhere (as table.explain names it from a picture)
            found = face_down_named(st, move, shown, plain=new)
            if found is not None:
                named, new = found
        events = self._accept(move, new, kind="manual", source=source, frame=self._last_frame,
                              named=named)
        self._sync_tracker(new)
        return events

    def _force(self, move_text: str, p: _Pending) -> list[LiveEvent]:
        """Carry out a rule-breaking move as the players insist (rules off)."""
        st = self._require_state()
        move = parse_move(move_text)
        new = st.copy()
        try:
            recorded = new._perform(move)
            new._cull_void()
            new.history = new.history + (str(recorded),)
            if not isinstance(move, Bid):
                new._settle()
        except (AssertionError, KeyError, ValueError, IndexError, CompanionError) as exc:
            raise LiveError(f"the engine cannot carry out {move_text} even with the rules "
                            f"off: {exc}") from None
        self._pending = None
        self.status = Status.PLAYING
        events = self._accept(move, new, kind="override", source="override", obs=p.record,
                              frame=p.frame, note="accepted by the players against the rules")
        self.tracker.remember(p.reading)
        self._sync_tracker(new)
        return events

    def _game_over(self, why: str) -> list[LiveEvent]:
        st = self._state
        assert st is not None
        self.status = Status.OVER
        self._pending = None
        scores = self.scores()
        winners = self.winners()
        if self.recorder is not None:
            self._backlog.add("finish", {"scores": scores, "winners": winners})
            self.write_pending()
        table = ", ".join(f"{c} {v}" for c, v in scores.items())
        # a Wheel of Fortune territory whose card nobody named is worth nothing here: said,
        # as the scores then need the players' own count of it
        unnamed = ", ".join(f"{i},{j}" for i, j in self.hidden_cards())
        note = (f" (the face-down territory at {unnamed} was never named: scored 0)"
                if unnamed else "")
        # (so is an uncovered card of the Alchemist's that no picture or player named)
        face_up = ", ".join(f"{i},{j}" for i, j in self.unnamed_face_up_cards())
        note += (f" (the card at {face_up} was never named: scored 0)" if face_up else "")
        return [LiveEvent(EventKind.GAME_OVER, f"{why}: {table}; winner(s): "
                          f"{', '.join(winners)}{note}", frame=self._last_frame,
                          source="system")]

    # ------------------------------------------------------------------ misreads
    def _before_last(self, n: int = 1) -> ZarcanaState | None:
        """The position before the last ``n`` accepted moves (there must be that many)."""
        return self._history[-n - 1].state if len(self._history) > n else self._initial

    def _taken_back(self, view: TableView) -> list[str]:
        """The last accepted moves, oldest first, when ``view`` is the position before them
        (taken back on the table by hand; the fewest that match, up to
        :data:`TAKE_BACK_DEPTH`), else none."""
        for n in range(1, min(TAKE_BACK_DEPTH, len(self._history)) + 1):
            before = self._before_last(n)
            if before is not None and TableView.of(before).same_as(
                    view, with_discard=self.watch_discard):
                return [h.move for h in self._history[-n:]]
        return []

    @staticmethod
    def _decision_hint(st: ZarcanaState) -> str:
        """A word for a decision the game waits for that no camera sees (the card the Fool
        drew, a tax's payment, the Plague's choices): what the table shows next follows it,
        so no picture is explained until it is clicked. Empty when there is none."""
        top = st.pending[-1] if st.pending else None
        who = st.to_move.value if st.to_move is not None else "the player"
        if isinstance(top, FoolDraw):
            return (f" (the Fool's drawn card is not named yet: {who} clicks \"reveal\" with "
                    "it first, under Moves the camera cannot see)")
        if isinstance(top, (TaxDue, PlagueCull, PlagueRaze)):
            return (f" ({who} has a choice to make first, under Moves the camera cannot see: "
                    "the table is judged after it)")
        return ""

    def _stash_hint(self, st: ZarcanaState, view: TableView) -> str:
        """A word for pyramids that arrived on wasteland spaces (no card there) with no move
        to put them there: most often a player's stash laid too near the board, which the
        camera cannot tell from pieces in play. Empty when there are none."""
        where = sorted({cell for cell, ps in view.pyramids.items() if cell not in view.cards
                        and Counter(ps) - Counter(st.pieces.get(cell, ()))})
        if not where:
            return ""
        cells = ", ".join(format_cell(c) for c in where)
        return (f" (pyramids at {cells} stand on the wasteland with no move to put them "
                "there: a stash kept beside the board must lie two cells or more, about "
                f"{2 * self.tracker.pitch_mm:.0f} mm, from the middle of every territory's "
                "card, or it is read as pieces in play)")

    def _pile_shows_a_play(self, st: ZarcanaState, view: TableView) -> bool:
        """Whether, with no mat's zone for the discard pile, the pile the tracker found
        shows a new card on top: a card was played. Such a pile is not compared move by
        move (a card laid beside it can be taken for it), but a new card on it is still
        evidence: a table that one misread would leave unchanged is not unchanged, and a
        rule-breaking move is named with that card, as on the mat (when none plays it, the
        card is no evidence, :meth:`_judge`). New: a card the game has never seen
        discarded, and not the top the last trusted picture showed (so a card wrongly
        taken for the pile's top, once seen on an unchanged table, stops counting)."""
        top = view.discard_top
        if self.watch_discard or top is None or top == self.tracker.pile_top:
            return False
        # a card this game has seen discarded (the pile knocked, the card under the top
        # showing; the pile turned into a new draw pile) is no news
        return all(top not in h.state.discard for h in self._history) and (
            self._initial is None or top not in self._initial.discard) and top not in st.discard

    def _misreads(self, st: ZarcanaState, reading: TableReading, played: bool = False
                  ) -> list[Suggestion]:
        """Readings one card id or one pyramid attribute away that a legal move explains
        (``played``: a card was seen played, :meth:`_pile_shows_a_play`, so none that
        would leave the table unchanged)."""
        view = reading.view
        before = TableView.of(st)
        deadline = time.thread_time() + MISREAD_BUDGET_S
        alts: list[tuple[Correction, TableView, str]] = []
        # one card id at a cell: the camera read another card than the one lying there
        built = self._built_by_last_move()
        for cell, seen_id in sorted(view.cards.items()):
            was = before.cards.get(cell)
            if was is None or was == seen_id:
                continue
            alt_cards = dict(view.cards)
            alt_cards[cell] = was
            # (or the last move's picture misread the card it built: then the move is what
            # is wrong, and "Take back move" has the table read again)
            then = (f" Or was it built as {seen_id}, misread on the last move's picture? "
                    "Then press \"Take back move\"" if cell in built else "")
            alts.append((CardCorrection(cell, seen_id, was), replace(view, cards=alt_cards),
                         f"is the card at {format_cell(cell)} {was}, not {seen_id}?{then}"))
        # or a card new on a cell (built from the draw pile, on it or on a territory) read
        # as one like it: the card read lying elsewhere already, the build was ruled on as
        # illegal (a build names the card it drew from the table: each reading has its own
        # moves)
        built_alts: list[tuple[Correction, TableView, str]] = []
        unseen = st.unseen_cards()
        for cell, seen_id in sorted(view.cards.items()):
            was = before.cards.get(cell)
            if seen_id in (was, BACK):
                continue
            for alt_id in sorted(unseen):
                if alt_id not in (seen_id, was) and _look_alike(seen_id, alt_id):
                    built_alts.append((CardCorrection(cell, seen_id, alt_id),
                                       replace(view, cards={**view.cards, cell: alt_id}),
                                       f"is the card at {format_cell(cell)} {alt_id}, not "
                                       f"{seen_id}?"))
        # one attribute of one pyramid that appeared (colour, size, pose, cell, or none there)
        colors = list(st.all_colors)
        for cell in sorted(view.pyramids):
            came = Counter(view.pyramids.get(cell, ())) - Counter(before.pyramids.get(cell, ()))
            for p in sorted(came):
                options: list[tuple[Pyramid | None, Cell]] = []
                options += [(Pyramid(c, p.size, p.pose), cell) for c in colors if c is not p.color]
                options += [(p.with_size(s), cell) for s in (1, 2, 3) if s != p.size]
                options += [(p.with_pose(q), cell) for q in (Pose.UP,) + DIRECTIONS
                            if q is not p.pose]
                options += [(p, n) for n in neighbours(cell)]
                options.append((None, cell))
                for alt, where in options:
                    pyr = {c: list(ps) for c, ps in view.pyramids.items()}
                    pyr[cell].remove(p)
                    if alt is not None:
                        pyr.setdefault(where, []).append(alt)
                    alt_view = replace(view, pyramids={c: tuple(sorted(ps))
                                                       for c, ps in pyr.items() if ps})
                    corr = PyramidCorrection(cell, p, alt, None if where == cell else where)
                    aside = (" (not in play: misread, or a stash too near the board)"
                             if alt is None and cell not in view.cards else "")
                    alts.append((corr, alt_view, f"is it so that {corr.describe()}{aside}?"))
        # the top of the discard pile: a look-alike card (same rank, or same suit nearby)
        if self.watch_discard and view.discard_top not in (None, before.discard_top):
            seen_id = view.discard_top
            assert seen_id is not None
            for alt_id in self._similar_cards(st, seen_id, before.discard_top):
                alts.append((CardCorrection(DISCARD_ZONE, seen_id, alt_id),
                             replace(view, discard_top=alt_id),
                             f"is the card played {alt_id}, not {seen_id}?"))
        matcher = _Matcher(st, view, self.watch_discard)
        out: list[Suggestion] = []
        for correction, other, question in alts:
            if time.thread_time() > deadline:
                log.info("misread search stopped after %.1f s", MISREAD_BUDGET_S)
                break
            if other.same_as(before, with_discard=self.watch_discard):
                if not played:
                    out.append(Suggestion(correction, None,
                                          question + " (then nothing changed)"))
                continue
            mv = matcher.match(other)
            if mv is not None:
                out.append(Suggestion(correction, str(mv), f"{question} (then: {mv})"))
        for correction, other, question in built_alts:
            if time.thread_time() > deadline:
                log.info("misread search stopped after %.1f s", MISREAD_BUDGET_S)
                break
            mv = _Matcher(st, other, self.watch_discard).match(other)
            if mv is not None:
                out.append(Suggestion(correction, str(mv), f"{question} (then: {mv})"))
        return out

    def _built_by_last_move(self) -> set[Cell]:
        """The cells whose top card the last move put there as the camera read it (a build
        of a card drawn unseen, named from its picture); none after a click or an
        override."""
        if not self._history or self._history[-1].kind != "move":
            return set()
        before, after = self._before_last(), self._history[-1].state
        if before is None:
            return set()
        return {cell for cell, stack in after.board.items()
                if stack[-1][1] and before.board.get(cell, ((None, False),))[-1] != stack[-1]}

    @staticmethod
    def _similar_cards(st: ZarcanaState, seen_id: str, before: str | None) -> list[str]:
        """Cards the camera may have taken for ``seen_id``: the card that was there, the same
        rank in another suit, or a neighbouring rank of the same suit, if the player may hold
        them."""
        out: list[str] = [] if before is None else [before]
        try:
            info = card_info(seen_id)
        except ValueError:
            return out
        who = st.to_move
        pool = set(st.hand_candidates(who)) - {UNKNOWN} if who is not None else set()
        for cid in sorted(pool):
            if cid == seen_id or cid in out:
                continue
            try:
                other = card_info(cid)
            except ValueError:
                continue
            if _alike(info, other):
                out.append(cid)
        return out


def _against_pile(after: ZarcanaState, reading: TableReading) -> int:
    """How many of the discard pile's cards seen, top first, the pile of ``after`` does not
    have there (0 where the camera cannot tell the pile's order: cards new on it with no
    level to say which covers which)."""
    if len(reading.discard_orders) >= 2:
        return 0
    pile = after.discard[::-1]
    return sum(1 for k, cid in enumerate(reading.discard_seen)
               if k >= len(pile) or pile[k] not in (cid, UNKNOWN))


def _alike(a: CardInfo, b: CardInfo) -> bool:
    """Whether the camera may take one of two cards (their :func:`card_info`) for the other:
    the same rank in another suit (neither a trump), or a neighbouring rank of the same
    suit."""
    same_rank = b.number == a.number and b.suit != a.suit and not (b.is_major or a.is_major)
    near = b.suit == a.suit and 0 < abs(b.number - a.number) <= 2
    return same_rank or near


def _look_alike(seen: str, other: str) -> bool:
    """:func:`_alike` of two card ids (False where either is no card's: "?", a back)."""
    try:
        return _alike(card_info(seen), card_info(other))
    except ValueError:
        return False


class _Matcher:
    """Which legal move turns a state into a given view: many views, one enumeration.

    ``explain`` enumerates the candidate moves for every view it is asked about; the misread
    search asks about dozens of views that differ in one detail, so the candidates (which
    depend on the view only through the discard top) are carried out once per discard top
    and indexed by the table they leave.
    """

    def __init__(self, st: ZarcanaState, seen: TableView, compare_discard: bool) -> None:
        self.st = st
        self.seen = seen
        self.compare_discard = compare_discard
        self._tables: dict[str | None, dict[Any, list[Move]]] = {}

    def _key(self, view: TableView) -> Any:
        n = view.normalised()
        return n if self.compare_discard else n[:2]

    def _table(self, discard_top: str | None) -> dict[Any, list[Move]]:
        table = self._tables.get(discard_top)
        if table is not None:
            return table
        table = {}
        done: set[str] = set()
        probe = replace(self.seen, discard_top=discard_top)
        for mv in candidate_moves(self.st, probe):
            if isinstance(mv, Reorient):
                continue  # read off each view separately
            mv = fill_builds(mv, self.seen, self.st)
            key = str(mv)
            if key in done:
                continue
            done.add(key)
            if not self.st.check(mv).legal:
                continue
            try:
                after = self.st.apply(mv)
            except CompanionError:
                continue
            table.setdefault(self._key(TableView.of(after)), []).append(mv)
        self._tables[discard_top] = table
        return table

    def match(self, view: TableView) -> Move | None:
        """The simplest legal move that leaves exactly ``view`` (None: no move does)."""
        found = list(self._table(view.discard_top).get(self._key(view), []))
        turn = _reorient_to(self.st, view)
        if turn is not None and self.st.check(turn).legal:
            try:
                if TableView.of(self.st.apply(turn)).same_as(view,
                                                             with_discard=self.compare_discard):
                    found.append(turn)
            except CompanionError:
                pass
        if not found:
            return None
        return min(found, key=_complexity)


def _named_off_the_pile(before: ZarcanaState, move: Move | str, card: str
                        ) -> tuple[ZarcanaState, ZarcanaState] | None:
    """:func:`face_down_named` of ``move`` (or its text) made in ``before``, ``card`` seen on
    the discard pile after it; None also where the move does not read or cannot be made."""
    try:
        return face_down_named(before, parse_move(move) if isinstance(move, str) else move,
                               card)
    except CompanionError:
        return None


def _cell_named(before: ZarcanaState, named: ZarcanaState) -> Cell:
    """The cell whose face-down card ``named`` names (``before`` with that card named)."""
    return next(c for c in named.board if named.board[c] != before.board[c])


def _complexity(move: Move) -> tuple[int, int, str]:
    """Simplest first: reorientations and starts, single cards, then discarded pairs."""
    if isinstance(move, Action):
        return (2 if move.source is Source.WILD else 1, len(move.steps), str(move))
    return (0, 0, str(move))


def _reorient_to(st: ZarcanaState, view: TableView) -> Reorient | None:
    """The reorientation that gives ``view``'s poses, if only poses changed."""
    who = st.to_move
    if who is None:
        return None
    turns: list[Turn] = []
    for cell in set(st.pieces) | set(view.pyramids):
        before = Counter(st.pieces.get(cell, ()))
        after = Counter(view.pyramids.get(cell, ()))
        gone = sorted((before - after).elements(), key=lambda p: (p.color.value, p.size))
        came = sorted((after - before).elements(), key=lambda p: (p.color.value, p.size))
        if len(gone) != len(came):
            return None
        for g, c in zip(gone, came):
            if (g.color, g.size) != (c.color, c.size):
                return None
            turns.append(Turn(Minion(cell, g), c.pose))
    return Reorient(who, tuple(sorted(turns))) if turns else None


__all__ = ["CardCorrection", "Correction", "EventKind", "HistoryEntry", "LiveError", "LiveEvent",
           "LiveSession", "PyramidCorrection", "Recorder", "Status", "Suggestion",
           "pyramid_words"]
