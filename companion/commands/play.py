"""``companion play``: play a game in the terminal, between people or random bots.

People type moves in the engine's notation (``red: draw 3``; the ``colour:`` prefix may be
left out); the engine checks every move and explains a refusal. Bots pick random legal
moves. The same loop serves a hot-seat game, a person against bots, a non-interactive
all-bots game (smoke tests, benchmarks) and recording a game as JSON lines for later replay.

Exit codes: 0 when the game reached its end, 1 when it stopped before (``quit``, end of
input, ``--max-turns``), 2 for errors (reported by :func:`companion.cli.main`).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import signal
import sys
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, TextIO

from companion.commands.argtypes import (colour_list, player_colours, positive_int, seed_arg,
                                         user_path)
from companion.core.cards import card_info, card_words
from companion.core.errors import CompanionError, NotationError
from companion.core.files import file_in_the_way, not_a_folder, write_text_atomic
from companion.core.pieces import Cell, Color, Minion, format_cell, parse_minion
from companion.games.zarcana import Edition, Settings, new_game, parse_move
from companion.games.zarcana.engine import ZarcanaState, dumps, loads, pending_text
from companion.recording.store import Backlog, GameRecorder, create_lines_record, is_sqlite_file
from companion.games.zarcana.moves import Action, Cull, Move, Reorient

log = logging.getLogger(__name__)

GAMES: tuple[str, ...] = ("zarcana",)

#: Exit code of a game stopped before its end (quit, end of input, --max-turns).
EXIT_UNFINISHED = 1

HELP_TEXT = """\
Type a move in Zarcana notation; the "colour:" prefix may be left out. Examples:
    draw 3        pass        end        start 1,1
    reorient red2U@1,1>E
    play swords-05 by red2E@1,1: attack blue1U@2,1
    use major-13 by red3U@1,1: attack @2,1
    wild cups-03+cups-07 as wands by red2E@1,1: move 2,1
    play cups-14 as pentacles by red1U@1,1: build 1,1
Commands:
    moves               list the legal moves, numbered; then type a number to play one
    moves PYR@CELL      only the moves of that pyramid, e.g. moves red1U@1,1
    check MOVE          say whether a move is legal and which rules it breaks (never plays it)
    board               show the table again
    hand                show your hand
    scores              the scores as the table stands now
    save FILE           save the game (load it with --load FILE)
    help                this text
    quit                stop the game"""

LEGEND = ("C cups, W wands, S swords, P pentacles, M major arcana; ## face down; "
          "... wasteland; [n] cards in the stack; ! Evil Eye mark")

_SUIT_LETTERS: dict[str, str] = {"cups": "C", "wands": "W", "swords": "S", "pentacles": "P",
                                 "major": "M"}
_EXTRA_SHORT: dict[str, str] = {"extra-gateway": "Gate", "extra-doppelganger": "Dopp"}


class _Stop(Exception):
    """Raised inside the prompt loop when the person asks to stop (quit or end of input)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# ------------------------------------------------------------------- arguments ---

def _players_arg(text: str) -> int | tuple[str, ...]:
    """``--players``: a count (2..6) or a comma list of colours."""
    text = text.strip()
    if text.isdigit():
        n = int(text)
        if not 2 <= n <= 6:
            raise argparse.ArgumentTypeError(f"Zarcana is for 2 to 6 players, not {n}")
        return n
    return player_colours(text)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "play", help="play a game in the terminal (people or random bots)",
        description="Play a game in the terminal. People type moves in the game's notation "
                    "(type 'help' at the prompt); bots play random legal moves.")
    p.add_argument("game", choices=GAMES, help="which game")
    p.add_argument("--edition", choices=[e.value for e in Edition], default=None,
                   help="rules edition (default: looney)")
    p.add_argument("--players", type=_players_arg, default=None, metavar="N|COLOURS",
                   help="number of players (2..6) or colours, e.g. red,blue,green (default: 3)")
    p.add_argument("--seed", type=seed_arg, default=None,
                   help="seed for the shuffle and the bots (default: a random one, printed)")
    p.add_argument("--bots", action="store_true", help="every seat is a bot")
    p.add_argument("--bot-seats", type=colour_list, default=(), metavar="COLOURS",
                   help="these seats are bots, e.g. blue,green")
    p.add_argument("--save", type=user_path, metavar="FILE",
                   help="save the game here when it ends or stops")
    p.add_argument("--load", type=user_path, metavar="FILE", help="continue a saved game")
    p.add_argument("--record", type=user_path, metavar="GAME.db|FILE.jsonl",
                   help="record the game: a .db file (or .sqlite, .sqlite3, .db3, no ending) is "
                        "the game store that 'companion "
                        "games', 'export' and 'replay' read (one committed transaction per "
                        "move); a .jsonl file gets JSON lines (header, moves, scores)")
    p.add_argument("--max-turns", type=positive_int, default=None, metavar="N",
                   help="stop after N turns")
    p.add_argument("--quiet", action="store_true",
                   help="print only the final scores (and prompts for people)")
    p.set_defaults(func=run)


# --------------------------------------------------------------------- display ---

def card_short(card: str) -> str:
    """A few characters for a card in the grid: C3, W12, M13, Gate."""
    if card in _EXTRA_SHORT:
        return _EXTRA_SHORT[card]
    try:
        info = card_info(card)
    except NotationError:
        return card  # "?" (unknown) or anything else is shown as it is
    return f"{_SUIT_LETTERS.get(info.suit.value, '?')}{info.number}"


def _cell_label(state: ZarcanaState, cell: Cell) -> str:
    stack = state.board.get(cell)
    if not stack:
        return "..." if state.is_wasteland(cell) else ""
    card, face_up = stack[-1]
    label = card_short(card) if face_up else "##"
    if cell in state.marks:
        label += "!"
    if len(stack) > 1:
        label += f"[{len(stack)}]"
    return label


def render_grid(state: ZarcanaState) -> str:
    """The lattice as rows (j, growing southward) and columns (i, growing eastward).

    Each cell shows its top card on one line and its pyramids below, one per line, so the
    columns stay narrow however crowded a space is.
    """
    cells: set[Cell] = set(state.board) | set(state.wasteland_cells()) | set(state.pieces)
    if not cells:
        return "(the table is empty)"
    i_lo, i_hi = min(c[0] for c in cells), max(c[0] for c in cells)
    j_lo, j_hi = min(c[1] for c in cells), max(c[1] for c in cells)
    cols = range(i_lo, i_hi + 1)
    labels = {c: _cell_label(state, c) for c in cells}
    pyramids = {c: [str(p) for p in state.pieces.get(c, ())] for c in cells}
    width = max([6] + [len(s) for s in labels.values()]
                + [len(s) for ps in pyramids.values() for s in ps]) + 2
    head = "j\\i " + "".join(f"{i:^{width}}" for i in cols)
    lines = [head.rstrip()]
    for j in range(j_lo, j_hi + 1):
        row_cells = [(i, j) for i in cols]
        lines.append((f"{j:>3} " + "".join(f"{labels.get(c, ''):^{width}}"
                                            for c in row_cells)).rstrip())
        depth = max(len(pyramids.get(c, [])) for c in row_cells)
        for k in range(depth):
            parts = []
            for c in row_cells:
                ps = pyramids.get(c, [])
                parts.append(f"{ps[k] if k < len(ps) else '':^{width}}")
            lines.append(("    " + "".join(parts)).rstrip())
    return "\n".join(lines)


def decider(state: ZarcanaState) -> Color | None:
    """The seat that makes the awaited decision (the invisible player's is the current one's)."""
    who = state.to_move
    if who is None:
        return None
    return who if who in state.players else state.current_player


def _end_line(state: ZarcanaState) -> str:
    # Mirrors the engine's end.* rules on public fields: asking check() instead would
    # answer "another decision first" whenever a decision is pending mid-turn.
    if state.end_declared_by is not None:
        left = state.final_turns_left
        return f"declared by {state.end_declared_by.value} ({left} turn(s) left)"
    if state.reshuffles > 0:
        return "may be declared"
    return "may not be declared yet (the draw pile has not been rebuilt from the discards)"


def render_table(state: ZarcanaState, viewer: Color | None) -> str:
    """The whole table as text; ``viewer``'s hand is shown in full, others' only counted."""
    scores = state.scores()
    lines = [render_grid(state), "  " + LEGEND, ""]
    to_move = state.to_move
    for c in state.all_colors:
        s1, s2, s3 = state.stash(c)
        mark = "->" if c is to_move else "  "
        ghost = " (invisible player)" if c is state.ghost else ""
        score = scores.get(c)
        score_text = f"  score {score}" if score is not None else ""
        lines.append(f"{mark} {c.value:<7} stash {s1}/{s2}/{s3} (small/medium/large)"
                     f"  hand {len(state.hand(c))}{score_text}{ghost}")
    top = state.discard_top()
    lines.append(f"draw pile {len(state.deck)}, discard pile {len(state.discard)}"
                 f" (top: {card_words(top) if top else 'none'}), reshuffles {state.reshuffles}")
    lines.append(f"end of game: {_end_line(state)}")
    if viewer is not None:
        hand = state.hand(viewer)
        shown = ", ".join(card_words(c) for c in hand) if hand else "(empty)"
        lines.append(f"{viewer.value}'s hand: {shown}")
    pending = pending_text(state)
    if state.is_over:
        lines.append(f"turn {state.turn_number}: the game is over")
    else:
        who = decider(state)
        lines.append(f"turn {state.turn_number}: {state.current_player.value}'s turn"
                     + (f", {who.value} to decide" if who is not state.current_player and who else "")
                     + (f" ({pending})" if pending else ""))
    return "\n".join(lines)


def render_scores(state: ZarcanaState) -> str:
    """Per player: the total and each territory that scores (occupied by that player alone)."""
    details = state.score_details()
    totals = state.scores()
    lines = []
    for c in state.all_colors:
        parts = [f"{format_cell(cell)} {card} {pts:+d}" for cell, card, pts in details.get(c, [])]
        total = totals.get(c)
        total_text = f"{total:>4}" if total is not None else "   -"
        note = ""
        if c is state.ghost:
            note = "  (the invisible player: its points go to whoever holds the Ghost)"
        lines.append(f"  {c.value:<7}{total_text}  " + (", ".join(parts) if parts else "no territory")
                     + note)
    return "\n".join(lines)


def winners_line(state: ZarcanaState) -> str:
    best = state.winners()
    score = state.scores()[best[0]]
    if len(best) == 1:
        return f"winner: {best[0].value} with {score} point(s)"
    return f"tie between {', '.join(c.value for c in best)} with {score} point(s) each"


# ------------------------------------------------------------------------ bots ---

def choose_bot_move(state: ZarcanaState, rng: random.Random,
                    moves: Sequence[Move] | None = None) -> Move:
    """A random legal move: first a kind (type name) uniformly, then a move of that kind.

    Picking the kind first keeps bots from spending every turn on whichever kind happens to
    have the most variants (reorientations, attacks), so games look like games and end.
    """
    if moves is None:
        moves = state.legal_moves()
    if not moves:
        raise CompanionError(f"the engine offers no legal move at turn {state.turn_number} "
                             f"for {state.to_move.value if state.to_move else 'nobody'}")
    groups: dict[str, list[Move]] = defaultdict(list)
    for mv in moves:
        groups[type(mv).__name__].append(mv)
    kind = rng.choice(sorted(groups))
    return rng.choice(groups[kind])


# ---------------------------------------------------------------------- saving ---

def _not_over_a_game_file(path: Path, named: str) -> None:
    """A save never writes over a recorded game: that is the whole game, a save one
    position. ``named``: how the path is named in the message."""
    if is_sqlite_file(path.expanduser()):
        raise CompanionError(f"{named} is a recorded game (a game file `companion games`, "
                             "`export` and `replay` read): a save never writes over one; give "
                             "a new name")


def save_game(state: ZarcanaState, path: Path) -> None:
    _not_over_a_game_file(path, f"cannot save to {path}: it")
    try:
        write_text_atomic(path.expanduser(), dumps(state) + "\n")
    except OSError as exc:
        raise CompanionError(f"cannot save to {path}: {exc.strerror or exc}") from None
    log.info("saved the game to %s", path)


def load_game(path: Path) -> ZarcanaState:
    try:
        text = path.expanduser().read_text(encoding="utf-8")
    except OSError as exc:
        raise CompanionError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        hint = (" (a recorded game: `companion export` or `companion replay` read those)"
                if is_sqlite_file(path) else "")
        raise CompanionError(f"{path}: not a saved game (not text){hint}") from None
    return loads(text, name=str(path))


def _check_save_path(path: Path) -> None:
    """A --save path that cannot be written is said before the game, not after it."""
    p = path.expanduser()
    if p.is_dir():
        raise CompanionError(f"--save {str(path)!r} is a folder; give a file name")
    folder = p.parent
    if not folder.is_dir():
        in_way = file_in_the_way(folder)
        what = (not_a_folder(in_way) if in_way is not None
                else f"the folder {str(folder)!r} does not exist")
        raise CompanionError(f"--save {str(path)!r}: {what}")
    if not os.access(folder, os.W_OK):
        raise CompanionError(f"--save {str(path)!r}: the folder {str(folder)!r} cannot be "
                             "written")
    _not_over_a_game_file(p, f"--save {str(path)!r}")


@contextmanager
def _ended_as_interrupted() -> Iterator[None]:
    """While the game runs, the terminal closing (SIGHUP) or a polite kill (SIGTERM) stops it
    as Ctrl-C does: the game is saved, not lost."""
    def stop(signum: int, frame: Any) -> None:
        for sig in kept:       # a second one must not cut the save short
            signal.signal(sig, signal.SIG_IGN)
        raise KeyboardInterrupt

    kept: dict[int, Any] = {}
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        # (one ignored already stays so: `nohup companion play` outlives its terminal)
        if sig is not None and threading.current_thread() is threading.main_thread() \
                and signal.getsignal(sig) is not signal.SIG_IGN:
            kept[sig] = signal.signal(sig, stop)
    try:
        yield
    finally:
        for sig, handler in kept.items():
            signal.signal(sig, handler)


# --------------------------------------------------------------------- session ---

class PlaySession:
    """One game at the terminal: whose seat is a bot, what is printed, what is written."""

    def __init__(self, state: ZarcanaState, *, bots: frozenset[Color], rng: random.Random,
                 out: TextIO, quiet: bool = False, save_path: Path | None = None,
                 record: IO[str] | None = None, max_turns: int | None = None,
                 read: Callable[[str], str] = input, echo: bool = False,
                 recorder: GameRecorder | None = None) -> None:
        self.state = state
        self.bots = bots
        self.rng = rng
        self.out = out
        self.quiet = quiet
        self.save_path = save_path
        self.record = record
        self.recorder = recorder
        self.max_turns = max_turns
        # (--max-turns counts the turns played in this run: a game loaded at turn 4 stops
        # after N more, not at the game's turn N)
        self._first_turn = state.turn_number
        self.read = read
        self.echo = echo  # repeat typed lines so a piped-in script reads as a transcript
        self._listed: list[Move] = []       # the last numbered list `moves` printed
        self._listed_for: ZarcanaState | None = None
        # (turn, viewer) of the table printed last: print it again for a new turn, or when
        # another person must decide mid-turn (a tax payer) and so should see their hand.
        self._shown: tuple[int, Color | None] | None = None
        # what the game file could not take yet (a full disk, a lock held by another
        # program): tried again at every move, as `companion run` does
        self._backlog = Backlog()
        self.lines_error: str | None = None     # why the JSON lines file stopped

    def say(self, text: str = "") -> None:
        print(text, file=self.out)

    def _record(self, obj: dict[str, object]) -> None:
        """One JSON line, on disk when this returns (a crash keeps every move printed). A
        file that cannot be written any more is said once, and the game goes on."""
        if self.record is None or self.lines_error is not None:
            return
        try:
            self.record.write(json.dumps(obj, sort_keys=True) + "\n")
            self.record.flush()
            os.fsync(self.record.fileno())
        except (OSError, ValueError) as exc:
            name = getattr(self.record, "name", "the record file")
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            self.lines_error = f"{name}: cannot be written any more ({why})"
            print(f"companion play: warning: {self.lines_error}; the game goes on, and that "
                  "file stops before this move", file=sys.stderr)

    def _to_recorder(self, what: str, kw: dict[str, Any]) -> None:
        if self.recorder is None:
            return
        self._backlog.add(what, kw)
        self._write_pending()

    def _write_pending(self) -> None:
        assert self.recorder is not None
        changed = self._backlog.write(self.recorder)
        if changed == "failing":
            print(f"companion play: warning: {self._backlog.error}; the moves are kept here "
                  "and tried again at every move", file=sys.stderr)
        elif changed == "recovered":
            print("companion play: the game file is written again: every move so far is in "
                  "it", file=sys.stderr)

    def record_problem(self) -> str | None:
        """What the recorded files lack at the end and why, else None."""
        problems = []
        if self.recorder is not None:
            if self._backlog.events:
                self._write_pending()        # a last try
            # the game is over: closed here, so that a file gone (that cannot be made again)
            # is saved elsewhere now, what is held back is written into that copy, and
            # where the game went is said
            self.recorder.close()
            self._backlog.into_saved_copy(self.recorder)
            if (not_kept := self.recorder.not_kept()) is not None:
                problems.append(not_kept)
            if self._backlog.events:
                left = len(self._backlog.events)
                problems.append(f"{self.recorder.path} lacks the last {left} event(s) of the "
                                f"game ({self._backlog.error})")
        if self.lines_error is not None:
            problems.append(self.lines_error)
        return "; ".join(problems) or None

    # ------------------------------------------------------------------ main loop
    def run(self) -> int:
        humans = [c for c in self.state.players if c not in self.bots]
        if self.state.history and not self.quiet:
            self.say(f"continuing a game of {len(self.state.history)} move(s)")
        if humans and not self.quiet:
            self.say("type 'help' for the notation and commands, 'moves' for the legal moves")
        try:
            while not self.state.is_over:
                if (self.max_turns is not None
                        and self.state.turn_number - self._first_turn >= self.max_turns):
                    self.say(f"stopped after {self.max_turns} turn(s) (--max-turns); "
                             "the game is not over")
                    return self._stop("max-turns")
                who = decider(self.state)
                if who is None:  # no decision awaited but not over: the engine is stuck
                    raise CompanionError(f"nobody is to move at turn {self.state.turn_number}")
                viewer = None if who in self.bots else who
                if not self.quiet and self._shown != (self.state.turn_number, viewer):
                    self._show(viewer)
                if who in self.bots:
                    self._play(choose_bot_move(self.state, self.rng))
                else:
                    try:
                        self._play(self._ask(who))
                    except _Stop as stop:
                        return self._stop(stop.reason)
        except KeyboardInterrupt:
            # Save what there is before cli.main reports the interruption.
            self._stop("interrupted")
            raise
        self._finish()
        return 0

    def _show(self, viewer: Color | None) -> None:
        self._shown = (self.state.turn_number, viewer)
        self.say()
        self.say(render_table(self.state, viewer))

    def _play(self, move: Move) -> None:
        before = self.state
        self.state = before.apply(move)
        self._record({"type": "move", "turn": before.turn_number, "player": move.player.value,
                      "move": str(move), "recorded": self.state.history[-1]})
        self._to_recorder("move", {"kind": "move", "move": str(move),
                                   "player": move.player.value, "state": dumps(self.state)})
        if not self.quiet:
            self.say(f"turn {before.turn_number}: {move}")
            for event in self.state.events:
                self.say(f"    {event}")

    def _stop(self, reason: str) -> int:
        log.info("game stopped (%s) at turn %d", reason, self.state.turn_number)
        self._record({"type": "stopped", "reason": reason, "turn": self.state.turn_number,
                      "scores": {c.value: v for c, v in self.state.scores().items()}})
        if self.save_path is not None:
            save_game(self.state, self.save_path)
            self.say(f"saved to {self.save_path}")
        if reason != "interrupted":
            self.say("scores so far:")
            self.say(render_scores(self.state))
        return EXIT_UNFINISHED

    def _finish(self) -> None:
        st = self.state
        self._record({"type": "final", "turn": st.turn_number,
                      "scores": {c.value: v for c, v in st.scores().items()},
                      "winners": [c.value for c in st.winners()]})
        self._to_recorder("finish", {"scores": {c.value: v for c, v in st.scores().items()},
                                     "winners": [c.value for c in st.winners()]})
        if self.save_path is not None:
            save_game(st, self.save_path)
        self.say()
        self.say(f"game over after {st.turn_number} turn(s), {len(st.history)} move(s)")
        self.say("final scores:")
        self.say(render_scores(st))
        self.say(winners_line(st))

    # ----------------------------------------------------------------- the prompt
    def _ask(self, who: Color) -> Move:
        """Prompt until the person gives a legal move; commands are answered on the way."""
        while True:
            deciding = self.state.to_move
            label = who.value if deciding in (who, None) else f"{who.value} for {deciding.value}"
            try:
                line = self.read(f"{label}> ")
                if self.echo:
                    self.say(line)
            except EOFError:
                self.say()
                self.say("end of input")
                raise _Stop("end of input") from None
            line = line.strip()
            if not line:
                continue
            word, _, arg = line.partition(" ")
            arg = arg.strip()
            cmd = word.lower()
            try:
                if cmd in ("quit", "exit"):
                    raise _Stop("quit")
                if cmd in ("help", "?"):
                    self.say(HELP_TEXT)
                elif cmd == "board":
                    self.say(render_table(self.state, who))
                elif cmd == "hand":
                    hand = self.state.hand(who)
                    self.say(", ".join(card_words(c) for c in hand) if hand else "(empty hand)")
                elif cmd == "scores":
                    self.say(render_scores(self.state))
                elif cmd == "save":
                    if not arg:
                        self.say("usage: save FILE")
                    else:
                        save_game(self.state, Path(arg))
                        self.say(f"saved to {arg}")
                elif cmd == "moves":
                    self._list_moves(arg)
                elif cmd == "check":
                    if not arg:
                        self.say("usage: check MOVE")
                    else:
                        self.say(self.state.check(self._parse(arg, who)).explain())
                elif line.isdigit():
                    move = self._pick(int(line))
                    if move is not None:
                        return move
                else:
                    move = self._parse(line, who)
                    verdict = self.state.check(move)
                    if verdict.legal:
                        return move
                    self.say(verdict.explain())
            except _Stop:
                raise
            except CompanionError as exc:  # NotationError, a failed save, ...
                self.say(str(exc))
            except Exception as exc:  # an engine bug must not end a person's game
                log.debug("engine error on %r", line, exc_info=True)
                self.say(f"the engine failed on {line!r} ({type(exc).__name__}: {exc}); "
                         "please report it. Try another move.")

    def _parse(self, text: str, who: Color) -> Move:
        """Parse a move; without a leading ``colour:`` it is the awaited decision's colour
        (the invisible player's when the person acts for it)."""
        colour = self.state.to_move or who
        head, sep, _ = text.partition(":")
        try:
            has_colour = bool(sep) and bool(head.strip()) and Color.parse(head) is not None
        except NotationError:
            has_colour = False
        return parse_move(text if has_colour else f"{colour.value}: {text}")

    def _list_moves(self, arg: str) -> None:
        moves = self.state.legal_moves()
        if arg:
            minion = parse_minion(arg)
            moves = [m for m in moves if _involves(m, minion)]
        if not moves:
            # Keep the previous numbered list: a number typed next still means what it said.
            self.say(f"no legal move for {arg}" if arg else "no legal move")
            return
        self._listed, self._listed_for = list(moves), self.state
        for n, mv in enumerate(moves, 1):
            self.say(f"{n:>4}. {mv}")

    def _pick(self, n: int) -> Move | None:
        if self._listed_for is not self.state or not self._listed:
            self.say("type 'moves' first, then the number of a move")
            return None
        if not 1 <= n <= len(self._listed):
            self.say(f"pick a number from 1 to {len(self._listed)}")
            return None
        return self._listed[n - 1]


def _involves(move: Move, minion: Minion) -> bool:
    """Does the move act through (or, for reorientations and culls, turn or lose) this pyramid?"""
    if isinstance(move, Action):
        return move.minion == minion
    if isinstance(move, Reorient):
        return any(t.minion == minion for t in move.turns)
    if isinstance(move, Cull):
        return move.minion == minion
    return False


# --------------------------------------------------------------------- command ---

def _new_state(args: argparse.Namespace, seed: int) -> ZarcanaState:
    edition = Edition.parse(args.edition or Edition.LOONEY.value)
    players = args.players if args.players is not None else 3
    try:
        return new_game(players, edition=edition, seed=seed, settings=Settings(edition=edition))
    except ValueError as exc:
        raise CompanionError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    if args.load is not None:
        state = load_game(args.load)
        if args.edition is not None or args.players is not None:
            log.warning("--edition and --players are taken from the saved game %s", args.load)
        seed = args.seed if args.seed is not None else state.seed
    else:
        seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2 ** 31)
        state = _new_state(args, seed)
    seats = frozenset(Color.parse(c) for c in args.bot_seats)
    strangers = sorted(c.value for c in seats if c not in state.players)
    if strangers:
        raise CompanionError(f"--bot-seats {', '.join(strangers)}: not a player colour "
                             f"(players: {', '.join(c.value for c in state.players)})")
    if args.bots and seats:
        # (--bot-seats went unheeded: whoever gave it meant some seats for people)
        raise CompanionError(f"--bots makes every seat a bot and --bot-seats "
                             f"{','.join(args.bot_seats)} names the bots: give one or the "
                             "other")
    bots = frozenset(state.players) if args.bots else seats
    if args.save is not None:
        _check_save_path(args.save)
    out = sys.stdout
    if not args.quiet:
        kind = "all bots" if bots == frozenset(state.players) else (
            "bots: " + ", ".join(c.value for c in state.players if c in bots) if bots else "no bots")
        print(f"{state.settings.edition.label}, players {', '.join(c.value for c in state.players)}"
              f" ({kind}), seed {seed}", file=out)
    # Bots draw from their own stream so their choices do not depend on the shuffle's.
    rng = random.Random(f"zarcana-bots:{seed}")
    record: IO[str] | None = None
    recorder: GameRecorder | None = None
    lines = args.record is not None and args.record.suffix.lower() == ".jsonl"
    if args.record is not None and not lines:
        recorder = GameRecorder.create(
            args.record, game="zarcana", edition=state.settings.edition.value,
            players=[c.value for c in state.players], settings=state.settings.to_dict(),
            # a game loaded mid-way (--load) starts from its saved position, not from the
            # seed's deal: a seed beside it would have the replay check one against the other
            seed=None if args.load is not None else seed, initial_state=dumps(state))
    elif args.record is not None:
        # (never over an earlier game's record, as game files are not)
        record = create_lines_record(args.record)
    try:
        session = PlaySession(state, bots=bots, rng=rng, out=out, quiet=args.quiet,
                              save_path=args.save, record=record, max_turns=args.max_turns,
                              echo=not sys.stdin.isatty(), recorder=recorder)
        if record is not None:
            session._record({
                "type": "header", "game": "zarcana", "settings": state.settings.to_dict(),
                "players": [c.value for c in state.players], "seed": seed,
                "bots": sorted(c.value for c in bots),
                "loaded_from": str(args.load) if args.load is not None else None,
                "start_turn": state.turn_number,
            })
        with _ended_as_interrupted():
            try:
                code = session.run()
            finally:
                problem = session.record_problem()
                if problem is not None:
                    print(f"companion play: error: {problem}", file=sys.stderr)
        return code if problem is None else max(code, 1)
    finally:
        if record is not None:
            try:
                record.close()
            except OSError:
                pass        # (said above: the lines file could not be written)
        if recorder is not None:
            recorder.close()
