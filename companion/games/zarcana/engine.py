"""The Zarcana rules engine: legal moves, verdicts, applying moves, scoring.

Every rule lives in one place: each power has a *check* (pure, lists the rules a step
breaks) and a *do* (changes a scratch copy). ``legal_moves`` proposes candidate steps and
keeps those the checks pass, so the enumerator and ``check`` cannot disagree.
"""

from __future__ import annotations

import functools
import itertools
import random
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from companion.core.cards import MINOR_SUITS, Suit, card_info, card_words, tarot_deck
from companion.core.errors import CompanionError, IllegalMoveError, NotationError
from companion.core.pieces import (
    DIRECTIONS,
    Cell,
    Color,
    Minion,
    Pose,
    Pyramid,
    format_cell,
    neighbours,
    step,
)
from companion.core.verdict import Verdict, Violation
from companion.games.zarcana.moves import (
    UNKNOWN,
    Action,
    Attack,
    Bid,
    Build,
    Clone,
    Convert,
    Cull,
    DeclareEnd,
    DiscardCards,
    Draw,
    DrawCards,
    Grow,
    Mark,
    Move,
    MoveTo,
    Pass,
    Pay,
    Place,
    Raze,
    Reorient,
    Reveal,
    Sacrifice,
    Source,
    Start,
    Step,
    Tax,
    Trade,
    Transport,
    Turn,
    parse_move,
)
from companion.games.zarcana.rules import (
    DOPPELGANGER,
    MAGICIAN,
    MAJOR_ROLES,
    MINION_POWERS,
    OPTIONAL_TRUMP_NAMES,
    SUIT_POWERS,
    WORLD,
    Edition,
    Power,
    Settings,
    violation,
)
if TYPE_CHECKING:
    from companion.games.zarcana.table import TableView

from companion.games.zarcana.state import (
    Bidding,
    ExtraOption,
    FoolDraw,
    FoolPlay,
    GhostDone,
    GhostTurn,
    Layer,
    PlagueCull,
    PlagueRaze,
    StateData,
    TaxDue,
)

POPULATION_LIMIT = 3
#: Reorientations of several pyramids are listed in full up to this many combinations;
#: beyond it ``legal_moves`` lists one-pyramid changes (``check`` accepts any combination).
REORIENT_COMBINATION_CAP = 64

_CUPS_LIKE = frozenset({Power.CUPS, Power.EMPRESS, Power.STRENGTH, Power.HOLY_GRAIL})
_MOVE_LIKE = frozenset({Power.WANDS, Power.CHARIOT, Power.HERMIT, Power.GATEWAY, Power.GATE})
_SWORD_LIKE = frozenset({Power.SWORDS, Power.EMPEROR, Power.DEATH, Power.TOWER, Power.ASSASSIN,
                         Power.CATAPULT})
_BUILD_LIKE = frozenset({Power.PENTACLES, Power.WHEEL, Power.TEMPERANCE, Power.SUN,
                         Power.ALCHEMIST})
_DRAW_LIKE = frozenset({Power.HIGH_PRIESTESS, Power.STAR, Power.JUDGEMENT})
_TWICE = frozenset({Power.STRENGTH, Power.CHARIOT, Power.DEATH, Power.ALCHEMIST})
_STEP_KIND: dict[Power, type] = {
    **{p: Grow for p in _CUPS_LIKE}, **{p: MoveTo for p in _MOVE_LIKE},
    **{p: Attack for p in _SWORD_LIKE}, **{p: Build for p in _BUILD_LIKE},
    **{p: DrawCards for p in _DRAW_LIKE},
    Power.HIEROPHANT: Convert, Power.LOVERS: Place, Power.JUSTICE: Trade,
    Power.HANGED_MAN: Sacrifice, Power.DEVIL: Turn, Power.MOON: Transport,
    Power.EVIL_EYE: Mark, Power.MISER: DiscardCards,
}
_NO_STEPS = frozenset({Power.FOOL, Power.PLAGUE, Power.GHOST})
#: Powers whose candidate steps, and the checks of them, read nothing of the hands, the
#: card(s) played or the cards used this turn (_first_steps, _check_step): the legal steps
#: by a pyramid are the same whichever card played from the hand gives the power (a card of
#: the suit, a royalty card, the Magician, a wild pair), so move generation finds them once
#: per position.
#: A power whose steps read the hand (the Sun, the Emperor's tax, the Miser) must not be here.
_HAND_BLIND = frozenset(SUIT_POWERS)
#: suit power -> its legal (pyramid, steps) when played from the hand, in the order they
#: are listed: see _HAND_BLIND
_Found = dict[Power, list[tuple[Minion | None, tuple[Step, ...]]]]

#: A broken rule noted by the checks: (rule id, detail template, the values it names). The
#: detail (see :func:`violation`) is written only by :meth:`ZarcanaState._explain`, for
#: ``check``: move generation pays for no words about the candidates it rejects. A value
#: that is a cell (a tuple) is written "i,j", as format_cell does; the others as str().
_Flag = tuple[str, str, tuple[object, ...]]


@dataclass(slots=True)
class _Ctx:
    """Who acts, with what, and through which pyramid (updated as steps move or grow it)."""

    actor: Color
    power: Power
    minion: Minion | None
    from_hand: bool   # played from the hand (or wild, or drawn by the Fool)
    source: Source
    played: tuple[str, ...] = ()    # the card(s) played, on their way to the discard pile


def _layout_cells(count: int) -> list[Cell]:
    if count == 4:
        return [(0, 0), (1, 0), (0, 1), (1, 1)]
    cells = [(i, j) for j in range(3) for i in range(3)]
    if count == 13:
        cells += [(1, -1), (3, 1), (1, 3), (-1, 1)]
    return cells


def _multiset_minus(items: Sequence[str], remove: Iterable[str]) -> list[str] | None:
    left = list(items)
    for card in remove:
        if card in left:
            left.remove(card)
        elif UNKNOWN in left:
            left.remove(UNKNOWN)
        else:
            return None
    return left


class IncompleteMoveError(CompanionError, ValueError):
    """A move that is legal for some hidden card but needs that card named to be applied."""


class ZarcanaState(StateData):
    """A Zarcana position plus the rules. Treat as immutable: ``apply`` returns a new state."""

    # ================================================================== card roles ===
    def full_deck(self) -> tuple[str, ...]:
        deck = tarot_deck(self.settings.extra_cards)
        if self.settings.without_trumps:
            deck = tuple(c for c in deck if not card_info(c).is_major)
        return deck

    def role(self, card: str) -> Power | str | None:
        """The power a card carries in this game (a Power, or MAGICIAN/WORLD/DOPPELGANGER)."""
        if card == UNKNOWN:
            return None
        name = self.settings.optional_map.get(card)
        if name is not None:
            return OPTIONAL_TRUMP_NAMES[name]
        info = card_info(card)
        if info.suit.is_minor:
            return Power(info.suit.value)
        if info.is_major:
            return MAJOR_ROLES[info.number]
        if card == "extra-gateway":
            return Power.GATEWAY if self.settings.edition is Edition.LOONEY else Power.GATE
        if card == "extra-doppelganger":
            return DOPPELGANGER
        return None

    def card_value(self, card: str) -> int:
        """Points a card is worth now (the Doppelganger takes the top discard's value)."""
        if card == UNKNOWN:
            return 0
        if self.role(card) == DOPPELGANGER:
            top = self.discard_top()
            if top is None or self.role(top) == DOPPELGANGER:
                return 0
            return self.card_value(top)
        return card_info(card).printed_value

    def _suit_of(self, card: str) -> Suit:
        return _suit_of(card)

    def power_options(self, card: str, source: Source) -> list[tuple[Power, str | None]]:
        """(power, mimicked card) pairs this card may be used as from this source."""
        if card == UNKNOWN:
            return []
        info = card_info(card)
        role = self.role(card)
        from_hand = source in (Source.HAND, Source.FOOL)
        if info.suit.is_minor and card not in self.settings.optional_map:
            if info.is_royalty and source is Source.HAND:
                return [(p, None) for p in SUIT_POWERS]
            return [(Power(info.suit.value), None)]
        if isinstance(role, Power):
            return [(role, None)]
        if role == MAGICIAN:
            return [(p, None) for p in SUIT_POWERS]
        if role == WORLD:
            out: list[tuple[Power, str | None]] = []
            for _, stack in sorted(self.board.items()):
                top, face_up = stack[-1]
                # (a card face up that nobody could name: the Alchemist's covered one,
                # uncovered where the picture did not name it; the World cannot tell
                # whether it is a trump)
                if not face_up or top in (card, UNKNOWN) or not card_info(top).is_major:
                    continue
                mimic_role = self.role(top)
                if isinstance(mimic_role, Power):
                    out.append((mimic_role, top))
                elif mimic_role == MAGICIAN and self.settings.edition is Edition.LOONEY:
                    # 1996: the World is never played as a suit card
                    out += [(p, top) for p in SUIT_POWERS]
            return out
        if role == DOPPELGANGER:
            shown = self.discard_top()
            if shown is None:
                return []
            inner = self.role(shown)
            if inner in (DOPPELGANGER, WORLD) or inner is None:
                return []
            as_from = Source.HAND if from_hand else Source.TERRITORY
            return [(p, shown) for p, _ in self.power_options(shown, as_from)]
        return []

    # ============================================================ knowledge helpers ===
    def _places(self) -> _Places:
        """Where cards lie: the board's stacks, the hands, and the draw and discard piles,
        the box and the cards in flight (hashable, :func:`_unseen`'s key)."""
        return (tuple(self.board.values()), tuple(self.hands.values()),
                (self.deck, self.discard, self.box, self.in_flight))

    def card_count(self) -> Counter[str]:
        """Every card id where it lies (board stacks, hands, piles, box, in flight);
        unknown cards count under UNKNOWN."""
        return Counter(_cards_in(self._places()))

    def unseen_cards(self) -> set[str]:
        """Cards whose whereabouts nobody knows (in unknown hands, the deck or the box)."""
        return set(_unseen(self.full_deck(), self._places()))

    def hand_candidates(self, color: Color) -> list[str]:
        """Distinct cards the player could hold (known ones, plus any unseen if some are unknown)."""
        hand = self.hand(color)
        known = sorted({c for c in hand if c != UNKNOWN})
        if UNKNOWN in hand:
            known += sorted(self.unseen_cards() - set(known))
        return known

    def could_hold(self, color: Color, cards: Sequence[str]) -> bool:
        hand = list(self.hand(color))
        # (the kept set itself, not unseen_cards()' copy of it: a hidden hand is asked this
        # of every pair of cards it could hold)
        unseen: frozenset[str] | None = None
        named: list[str] = []  # unseen cards taken for unknown ones already
        for card in cards:
            if card in hand:
                hand.remove(card)
            elif UNKNOWN in hand and card != UNKNOWN:
                if unseen is None:
                    unseen = _unseen(self.full_deck(), self._places())
                if card not in unseen or card in named:
                    return False
                hand.remove(UNKNOWN)
                named.append(card)
            else:
                return False
        return True

    # ================================================================= who decides ===
    @property
    def actor(self) -> Color:
        return self.acting_as if self.acting_as is not None else self.current_player

    @property
    def to_move(self) -> Color | None:
        """The colour whose decision is awaited (the invisible player's is made by the current one)."""
        if self.phase == "over":
            return None
        if self.phase == "bid":
            assert self.bidding is not None
            done = {c for c, _ in self.bidding.bids}
            for c in self.bidding.eligible:
                if c not in done:
                    return c
            return None
        if self.pending:
            top = self.pending[-1]
            if isinstance(top, TaxDue):
                return top.payer
            if isinstance(top, (PlagueCull, PlagueRaze)):
                return top.player
            if isinstance(top, GhostTurn):
                assert self.ghost is not None
                return self.ghost
        return self.actor

    # ====================================================================== board ===
    def count(self, cell: Cell, pyramid: Pyramid) -> int:
        return sum(1 for p in self.pieces.get(cell, ()) if p == pyramid)

    def has_minion(self, minion: Minion) -> bool:
        return minion.pyramid in self.pieces.get(minion.cell, ())

    def wasteland_cells(self) -> list[Cell]:
        out: set[Cell] = set()
        for cell in self.board:
            for n in neighbours(cell):
                if n not in self.board:
                    out.add(n)
        return sorted(out)

    def minions_of(self, color: Color) -> list[Minion]:
        """The player's pyramids on the board, identical ones in a cell listed once."""
        out = []
        for cell in sorted(self.pieces):
            mine = [p for p in self.pieces[cell] if p.color is color]
            if len(mine) > 1:  # (the sort compares in Python: only where it has work to do)
                mine = sorted(set(mine))
            out += [Minion(cell, p) for p in mine]
        return out

    def _add_piece(self, cell: Cell, p: Pyramid) -> None:
        self.pieces[cell] = tuple(sorted(self.pieces.get(cell, ()) + (p,)))

    def _remove_piece(self, cell: Cell, p: Pyramid) -> None:
        lst = list(self.pieces[cell])
        lst.remove(p)
        if lst:
            self.pieces[cell] = tuple(lst)
        else:
            del self.pieces[cell]

    def _take(self, color: Color, size: int) -> None:
        s = list(self.stashes[color])
        s[size - 1] -= 1
        self.stashes[color] = (s[0], s[1], s[2])

    def _give_back(self, p: Pyramid) -> None:
        s = list(self.stashes[p.color])
        s[p.size - 1] += 1
        self.stashes[p.color] = (s[0], s[1], s[2])

    def _note(self, text: str) -> None:
        self.events = self.events + (text,)

    def _kill(self, cell: Cell, p: Pyramid, why: str) -> None:
        self._remove_piece(cell, p)
        self._give_back(p)
        self._note(f"{p.describe()} at {format_cell(cell)} {why}")

    def _cull_void(self) -> None:
        """Pyramids left outside territory and wasteland die (they return to the stash)."""
        for cell in [c for c in self.pieces if not self.on_map(c)]:
            for p in self.pieces[cell]:
                self._kill(cell, p, "is lost in the void and dies")

    def _remove_top(self, cell: Cell) -> str:
        stack = self.board[cell]
        card = stack[-1][0]
        if len(stack) == 1:
            del self.board[cell]
        else:
            self.board[cell] = stack[:-1]
        self.marks = self.marks - {cell}
        return card

    def _put_card(self, cell: Cell, layer: Layer) -> None:
        self.marks = self.marks - {cell}     # (a card covered loses its mark)
        self.board[cell] = self.board.get(cell, ()) + (layer,)

    def _to_discard(self, card: str) -> None:
        self.discard = self.discard + (card,)

    def cards_available(self) -> int:
        return len(self.deck) + len(self.discard)

    def _fool_may_draw(self) -> set[str]:
        """The cards the Fool's draw, waiting to be named, may bring up: those nobody has
        seen, and with the draw pile empty the discard pile's too, which the draw shuffles
        into a new draw pile first (1996 rules: the discard pile is shuffled into a new draw
        pile once a player needs to draw a card)."""
        if self.deck:
            return self.unseen_cards()
        probe = self.copy()
        probe._draw_one()
        return probe.unseen_cards()

    def next_drawn(self) -> str | None:
        """The card the next draw or build from the draw pile takes, as the game knows it
        (UNKNOWN where nobody does; None: no card is left), the piles left as they are."""
        return self.copy()._draw_one()

    def _draw_one(self) -> str | None:
        """Top card of the draw pile, rebuilding it from the discard pile when it runs out."""
        if not self.deck:
            if not self.discard:
                return None
            pile = list(self.discard)
            if UNKNOWN not in pile and not self.hidden:
                random.Random(f"{self.seed}:reshuffle:{self.reshuffles}").shuffle(pile)
            else:
                pile = [UNKNOWN] * len(pile)
            self.deck = tuple(pile)
            self.discard = ()
            self.reshuffles += 1
            self._note("the discard pile is shuffled into a new draw pile")
        card = self.deck[-1]
        self.deck = self.deck[:-1]
        return card

    def _hand_add(self, color: Color, cards: Iterable[str]) -> None:
        self.hands[color] = self.hands[color] + tuple(cards)

    def _hand_remove(self, color: Color, cards: Iterable[str]) -> None:
        left = _multiset_minus(self.hands[color], cards)
        assert left is not None
        self.hands[color] = tuple(left)

    # ================================================================= public API ===
    def legal_moves(self) -> list[Move]:
        """Every legal decision now (see REORIENT_COMBINATION_CAP for reorientations)."""
        if self.phase == "over":
            return []
        if self.phase == "bid":
            return self._bid_moves()
        top = self.pending[-1] if self.pending else None
        if isinstance(top, TaxDue):
            return self._pay_moves(top)
        if isinstance(top, PlagueCull):
            return [Cull(top.player, m) for m in self.minions_of(top.player)]
        if isinstance(top, PlagueRaze):
            return [Raze(top.player, c) for c in self._empty_territories()]
        if isinstance(top, FoolDraw):
            return [Reveal(self.actor, c) for c in sorted(self._fool_may_draw())]
        if isinstance(top, FoolPlay):
            return list(self._card_actions(self.actor, Source.FOOL, (top.card,)))
        return self._turn_options(self.to_move or self.actor)

    def check(self, move: Move | str) -> Verdict:
        """Legal, or every rule the move breaks (a malformed string raises NotationError)."""
        if isinstance(move, str):
            move = parse_move(move)
        return Verdict(str(move), tuple(self._violations(move)))

    def is_legal(self, move: Move | str) -> bool:
        return self.check(move).legal

    def apply(self, move: Move | str) -> "ZarcanaState":
        """The state after the move; raises IllegalMoveError (with the verdict) if illegal."""
        if isinstance(move, str):
            move = parse_move(move)
        bad = self._violations(move)
        if bad:
            raise IllegalMoveError(Verdict(str(move), tuple(bad)))
        st = self.copy()
        recorded = st._perform(move)
        st.history = st.history + (str(recorded),)
        if not isinstance(move, Bid):  # the bid that ends the bidding starts, not ends, a turn
            st._settle()
        return st

    def push(self, text: str) -> "ZarcanaState":
        return self.apply(parse_move(text))

    # ============================================================== turn options ===
    def _turn_options(self, who: Color) -> list[Move]:
        moves: list[Move] = []
        if not self.has_pieces(who) and self.stashes[who][0] > 0:
            for cell in sorted(self.board):
                mv = Start(who, cell)
                if not self._start_violations(mv):
                    moves.append(mv)
        # (this position is only read here: its pyramids are listed, and the steps of a
        # suit power found, once for every card that gives it)
        own = self.minions_of(who)
        found: _Found = {}
        cands = self.hand_candidates(who)
        for card in cands:
            moves.extend(self._card_actions(who, Source.HAND, (card,), own=own, found=found))
        for m in own:
            top = self.top(m.cell)
            if top is not None and top[1] and top[0] not in self.used:
                moves.extend(self._card_actions(who, Source.TERRITORY, (top[0],), only=m))
        if self.settings.doubles != "off":
            for a, b in itertools.combinations(cands, 2):
                if self._pair_ok(a, b) and self.could_hold(who, (a, b)):
                    moves.extend(self._card_actions(who, Source.WILD, (a, b), own=own,
                                                    found=found))
            # Two identical unknown-suit cards cannot exist; known duplicates cannot either.
        moves.extend(self._reorient_moves(who))
        room = self.settings.hand_limit - len(self.hand(who))
        for n in range(1, min(self.settings.draw_amount, room, self.cards_available()) + 1):
            moves.append(Draw(who, n))
        moves.append(Pass(who))
        if not self._end_flags(DeclareEnd(who)):
            moves.append(DeclareEnd(who))
        return moves

    def _pair_ok(self, a: str, b: str) -> bool:
        if a == b or UNKNOWN in (a, b):
            return False
        sa, sb = self._suit_of(a), self._suit_of(b)
        if sa != sb:
            return False
        return sa is not Suit.MAJOR or self.settings.doubles == "suits+majors"

    def _reorient_moves(self, who: Color) -> list[Move]:
        items: list[tuple[Minion, list[Pose]]] = []
        for cell in sorted(self.pieces):
            for p in self.pieces[cell]:
                if p.color is who:
                    items.append((Minion(cell, p), [q for q in Pose if q is not p.pose]))
        return [Reorient(who, turns) for turns in _turn_sets(items)]

    # ================================================================ violations ===
    def _violations(self, move: Move) -> list[Violation]:
        ed = self.settings.edition
        if self.phase == "over":
            return [violation("turn.game-over", ed)]
        who = self.to_move
        if move.player is not who:
            return [violation("turn.wrong-player", ed,
                              f"{move.player.value} moved, {who.value if who else 'nobody'} is to move")]
        if self.phase == "bid":
            if not isinstance(move, Bid):
                return [violation("turn.pending", ed, "bid for the first turn first")]
            return self._bid_violations(move)
        top = self.pending[-1] if self.pending else None
        if isinstance(top, TaxDue):
            return self._pay_violations(move, top)
        if isinstance(top, PlagueCull):
            if not isinstance(move, Cull):
                return [violation("turn.pending", ed, "destroy one of your own pyramids for the Plague")]
            if not self.has_minion(move.minion) or move.minion.color is not move.player:
                return [violation("plague.cull", ed, f"{move.minion} is not yours or not there")]
            return []
        if isinstance(top, PlagueRaze):
            if not isinstance(move, Raze):
                return [violation("turn.pending", ed, "discard an empty territory for the Plague")]
            if move.cell not in self._empty_territories():
                return [violation("plague.raze", ed, f"{format_cell(move.cell)} is not an empty territory")]
            return []
        if isinstance(top, FoolDraw):
            if not isinstance(move, Reveal):
                return [violation("turn.pending", ed, "say which card the Fool drew")]
            if move.card not in self._fool_may_draw():
                return [violation("fool.must-play", ed, f"{move.card} cannot be in the draw pile")]
            return []
        if isinstance(top, FoolPlay):
            if not isinstance(move, Action) or move.source is not Source.FOOL or move.cards != (top.card,):
                return [violation("fool.must-play", ed, f"play the drawn {top.card}")]
            return self._action_violations(move)
        if isinstance(move, (Pay, Cull, Raze, Reveal, Bid)):
            return [violation("turn.pending", ed, "that decision is not asked for now")]
        if isinstance(move, Action) and move.source is Source.FOOL:
            return [violation("fool.must-play", ed, "no card drawn by the Fool is waiting")]
        if isinstance(move, Start):
            return self._start_violations(move)
        if isinstance(move, Draw):
            return self._draw_violations(move)
        if isinstance(move, Pass):
            return []
        if isinstance(move, DeclareEnd):
            return self._end_violations(move)
        if isinstance(move, Reorient):
            return self._reorient_violations(move.player, move.turns, own_only=True)
        if isinstance(move, Action):
            return self._action_violations(move)
        raise TypeError(f"not a Zarcana move: {move!r}")

    def _start_violations(self, mv: Start) -> list[Violation]:
        ed = self.settings.edition
        out = []
        if self.has_pieces(mv.player):
            out.append(violation("start.has-pieces", ed))
        if mv.cell not in self.board:
            out.append(violation("start.not-territory", ed, f"{format_cell(mv.cell)} has no card"))
        elif self.settings.start_unoccupied and self.population(mv.cell) > 0:
            out.append(violation("start.occupied", ed))
        elif self.population(mv.cell) >= POPULATION_LIMIT:
            out.append(violation("start.population", ed, f"{format_cell(mv.cell)} is full"))
        if self.stashes[mv.player][0] <= 0:
            out.append(violation("start.no-small", ed))
        return out

    def _draw_violations(self, mv: Draw) -> list[Violation]:
        ed = self.settings.edition
        out = []
        if mv.count < 1 or mv.count > self.settings.draw_amount:
            out.append(violation("draw.too-many", ed, f"draw 1 to {self.settings.draw_amount}, not {mv.count}"))
        if len(self.hand(mv.player)) + mv.count > self.settings.hand_limit:
            out.append(violation("draw.hand-limit", ed, f"{len(self.hand(mv.player))} cards in hand"))
        if mv.count > self.cards_available():
            out.append(violation("draw.empty", ed, f"{self.cards_available()} cards left"))
        return out

    def _end_violations(self, mv: DeclareEnd) -> list[Violation]:
        return self._explain(self._end_flags(mv))

    def _end_flags(self, mv: DeclareEnd) -> list[_Flag]:
        out: list[_Flag] = []
        if mv.player is self.ghost:
            out.append(("turn.pending", "the invisible player cannot declare the end", ()))
        if self.reshuffles == 0:
            out.append(("end.not-reshuffled", "", ()))
        if self.end_declared_by is not None:
            out.append(("end.already", "", ()))
        return out

    def _reorient_violations(self, who: Color, turns: Sequence[Turn], *, own_only: bool,
                             around: Cell | None = None) -> list[Violation]:
        return self._explain(self._reorient_flags(who, turns, own_only=own_only, around=around))

    def _reorient_flags(self, who: Color, turns: Sequence[Turn], *, own_only: bool,
                        around: Cell | None = None) -> list[_Flag]:
        out: list[_Flag] = []
        if not turns:
            return [("reorient.unchanged", "no pyramid named", ())]
        used: Counter[Minion] = Counter()
        for t in turns:
            m = t.minion
            used[m] += 1
            if self.count(m.cell, m.pyramid) < used[m]:
                out.append(("minion.missing" if used[m] == 1 else "devil.twice", "{}", (m,)))
                continue
            if own_only and m.color is not who:
                out.append(("reorient.not-own", "{}", (m,)))
            if around is not None and m.cell != around and m.cell not in neighbours(around):
                out.append(("devil.range", "{}", (m,)))
            if t.pose is m.pose:
                out.append(("reorient.unchanged", "{}", (m,)))
        return out

    # ================================================================== actions ===
    def _action_violations(self, mv: Action) -> list[Violation]:
        ed = self.settings.edition
        who = mv.player
        out: list[Violation] = []
        # --- the card(s) and where they come from
        if mv.source is Source.WILD:
            if self.settings.doubles == "off":
                return [violation("wild.off", ed)]
            if len(mv.cards) != 2 or not self._pair_ok(mv.cards[0], mv.cards[1]):
                return [violation("wild.not-pair", ed, "+".join(mv.cards))]
            if not self.could_hold(who, mv.cards):
                return [violation("card.not-in-hand", ed, "+".join(mv.cards))]
            if mv.power not in SUIT_POWERS or mv.mimic is not None:
                return [violation("card.wrong-power", ed, "a wild action is one of the four suits")]
        else:
            if len(mv.cards) != 1:
                return [violation("card.wrong-power", ed, "one card")]
            card = mv.card
            if card in self.used:
                out.append(violation("turn.card-used", ed, card))
            if mv.source is Source.HAND and not self.could_hold(who, (card,)):
                return out + [violation("card.not-in-hand", ed, card)]
            if mv.source is Source.TERRITORY:
                if mv.minion is None:
                    return out + [violation("minion.needed", ed)]
                top = self.top(mv.minion.cell)
                if top is None or top[0] != card:
                    return out + [violation("territory.not-occupying", ed,
                                            f"{card} is not the top card under {mv.minion}")]
                if not top[1]:
                    return out + [violation("territory.face-down", ed)]
            if card == UNKNOWN:
                # (a card nobody has named, in a hand or face up on the table: the
                # Alchemist's covered card uncovered where the picture could not name it;
                # its power is not known until a correction names it)
                return out + [violation("card.unnamed", ed, f"{card} as {mv.power.value}")]
            options = self.power_options(card, mv.source)
            if (mv.power, mv.mimic) not in options:
                info = card_info(card)
                if info.is_royalty and mv.power in SUIT_POWERS:
                    rid = "fool.royalty" if mv.source is Source.FOOL else "royalty.table"
                elif self.role(card) == WORLD:
                    rid = "world.target"
                elif self.role(card) == DOPPELGANGER:
                    rid = "doppelganger.empty"
                else:
                    rid = "card.wrong-power"
                return out + [violation(rid, ed, f"{card} as {mv.power.value}")]
        # --- the acting pyramid
        needs_minion = mv.power in MINION_POWERS or mv.source is Source.TERRITORY
        if needs_minion:
            if mv.minion is None:
                return out + [violation("minion.needed", ed)]
            if not self.has_minion(mv.minion):
                return out + [violation("minion.missing", ed, str(mv.minion))]
            if mv.minion.color is not who:
                return out + [violation("minion.not-own", ed, str(mv.minion))]
        elif mv.minion is not None:
            return out + [violation("step.shape", ed, f"{mv.power.value} acts without a pyramid")]
        if out:
            return out
        # --- the steps, on a scratch copy
        return self._steps_violations(mv)

    def _ctx(self, mv: Action) -> _Ctx:
        return _Ctx(mv.player, mv.power, mv.minion, mv.source is not Source.TERRITORY, mv.source,
                    mv.cards)

    def _steps_violations(self, mv: Action, lifted: ZarcanaState | None = None
                          ) -> list[Violation]:
        """``lifted``: this position with ``mv``'s card(s) already lifted (:meth:`_lift_card`),
        when the caller has it; it is only read (copied before a step is carried out)."""
        return self._explain(self._steps_flags(mv, lifted))

    def _explain(self, flags: Sequence[_Flag]) -> list[Violation]:
        """The broken rules of ``flags`` in words: what ``check`` says of a move."""
        ed = self.settings.edition
        out = []
        for rid, detail, values in flags:
            if values:
                detail = detail.format(*(format_cell(x) if isinstance(x, tuple) else x
                                         for x in values))
            out.append(violation(rid, ed, detail))
        return out

    def _steps_flags(self, mv: Action, lifted: ZarcanaState | None = None) -> list[_Flag]:
        """:meth:`_steps_violations` with their words left unwritten: move generation only
        needs to know whether there are any, for every candidate it rejects."""
        steps = mv.steps
        power = mv.power
        kind = _STEP_KIND.get(power)
        if power in _NO_STEPS:
            return [] if not steps else [("step.shape", "{} takes no steps", (power.value,))]
        most = 2 if power in _TWICE else (len(steps) if power is Power.DEVIL else 1)
        if power is Power.EMPEROR:
            if not (1 <= len(steps) <= 2 and isinstance(steps[0], Attack)
                    and (len(steps) == 1 or isinstance(steps[1], Tax))):
                return [("step.shape", "the Emperor attacks once, then may tax", ())]
        elif not 1 <= len(steps) <= most:
            return [("step.shape", "{} takes {} step(s)", (power.value, most if most > 1 else "one"))]
        elif power is Power.ALCHEMIST and len(steps) != 2:
            # (not "up to twice", as the Chariot and Strength: the text makes a stack of two)
            return [("alchemist.twice", "", ())]
        else:
            for s in steps:
                assert kind is not None
                ok = isinstance(s, kind) if kind is not Grow else isinstance(s, (Grow, Clone))
                if not ok:
                    return [("step.shape", "{} is not a {} step", (s, power.value))]
        if lifted is None:
            st = self.copy()
            st._lift_card(mv)
        else:
            st = lifted
        ctx = st._ctx(mv)
        if power is Power.DEVIL:
            assert ctx.minion is not None
            return st._reorient_flags(mv.player, [s for s in steps if isinstance(s, Turn)],
                                      own_only=False, around=ctx.minion.cell)
        if power is Power.DEATH and len(steps) == 2 and steps[0] == steps[1]:
            s0 = steps[0]
            if isinstance(s0, Attack) and st._death_combo(ctx.minion, s0):
                return st._check_step(ctx, replace(s0), allow_invincible=True)
        for i, s in enumerate(steps):
            bad = st._check_step(ctx, s, index=i, steps=steps)
            if bad:
                return bad
            if i + 1 < len(steps):
                if st is lifted:
                    st = st.copy()
                st._do_step(ctx, s, trial=True)
        return []

    def _lift_card(self, mv: Action) -> None:
        """Take the played card(s) out of the hand before the power works (scratch or real)."""
        if mv.source in (Source.HAND, Source.WILD):
            self._hand_remove(mv.player, mv.cards)
        elif mv.source is Source.FOOL:
            self.in_flight = ()

    def _death_combo(self, attacker: Minion | None, hit: Attack) -> bool:
        """Death's two attacks spent together on one invincible (larger) pyramid."""
        t = hit.target
        return (attacker is not None and t is not None and t.size > attacker.size
                and self._invincible(t))

    def _invincible(self, target: Minion) -> bool:
        return target.size > 1 and self.stashes[target.color][target.size - 2] <= 0

    def _attack_spaces(self, ctx: _Ctx) -> list[Cell]:
        m = ctx.minion
        assert m is not None
        if ctx.power is Power.ASSASSIN:
            return [m.cell, *neighbours(m.cell)]
        if ctx.power is Power.CATAPULT and not m.pose.upright:
            return [step(m.cell, m.pose, 1), step(m.cell, m.pose, 2)]
        return [m.target()]

    def _check_step(self, ctx: _Ctx, s: Step, *, index: int = 0, steps: Sequence[Step] = (),
                    allow_invincible: bool = False) -> list[_Flag]:
        """The rules step ``s`` breaks, their words written only if asked (:meth:`_explain`)."""
        ed = self.settings.edition
        p = ctx.power
        m = ctx.minion
        out: list[_Flag] = []

        def v(rid: str, detail: str = "", *values: object) -> None:
            out.append((rid, detail, values))

        if isinstance(s, (Grow, Clone)):
            assert m is not None
            if p is not Power.HOLY_GRAIL and not m.pose.upright:
                v("cups.upright", "{}", m)
            if p not in (Power.EMPRESS, Power.HOLY_GRAIL) and m.cell not in self.board:
                v("cups.wasteland", "{}", m)
            stash = self.stashes[ctx.actor]
            if isinstance(s, Grow):
                if m.size == 3:
                    v("cups.max-size")
                elif stash[m.size] <= 0:
                    v("cups.no-larger")
            else:
                if not 1 <= s.size <= m.size:
                    v("cups.clone-size", "{} pips beside a {}-pip pyramid", s.size, m.size)
                elif stash[s.size - 1] <= 0:
                    v("cups.no-piece", "{} pips", s.size)
                if p is not Power.EMPRESS and self.population(m.cell) + 1 > POPULATION_LIMIT:
                    v("cups.population", "{}", m.cell)
            return out
        if isinstance(s, MoveTo):
            assert m is not None
            dest = s.cell
            if p is Power.WANDS:
                if m.pose.upright:
                    v("wands.upright", "{}", m)
                elif dest != m.target():
                    v("wands.direction", "{} points to {}", m, m.target())
            elif p in (Power.CHARIOT, Power.HERMIT):
                if dest not in neighbours(m.cell):
                    v("move.adjacent", "{}", dest)
            elif p is Power.GATEWAY:
                if dest not in self.board or dest == m.cell:
                    v("gateway.target", "{}", dest)
            elif p is Power.GATE:
                here, there = self.top(m.cell), self.top(dest)
                # (a card face up that nobody could name has no suit the Gate can match)
                if (here is None or there is None or dest == m.cell or not here[1] or not there[1]
                        or UNKNOWN in (here[0], there[0])
                        or self._suit_of(here[0]) != self._suit_of(there[0])):
                    v("gate.target", "{}", dest)
            if not self.on_map(dest):
                v("wands.void", "{}", dest)
            if p is not Power.HERMIT and self.population(dest) >= POPULATION_LIMIT:
                v("wands.population", "{}", dest)
            return out
        if isinstance(s, Attack):
            assert m is not None
            spaces = self._attack_spaces(ctx)
            if s.cell not in spaces:
                rid = "catapult.range" if p is Power.CATAPULT else "swords.direction"
                v(rid, "{} cannot reach {}", m, s.cell)
                return out
            if s.target is not None:
                t = s.target
                if t.cell != s.cell:
                    v("swords.no-target", "{}", t)
                elif not self.has_minion(t):
                    v("swords.no-target", "no {}", t)
                elif t == m and self.count(t.cell, t.pyramid) < 2:
                    v("swords.self")
                elif (t.size > m.size and self._invincible(t) and not allow_invincible
                      # the 1996 Emperor attacks it all the same, to tax its owner; the
                      # Looney text names Death as the only exception
                      and not (p is Power.EMPEROR and ed is Edition.E1996)):
                    v("swords.invincible", "{}", t)
            else:
                if s.cell not in self.board:
                    v("swords.no-target", "no territory at {}", s.cell)
                    return out
                own = s.cell == m.cell
                if p is Power.TOWER:
                    if own and ed is Edition.E1996:
                        v("tower.own")
                elif self.population(s.cell) > 0:
                    v("swords.own-territory" if own else "swords.occupied-territory")
            if p is Power.EMPEROR and index == 0 and len(steps) == 2 and isinstance(steps[1], Tax):
                n = steps[1].count
                payer = s.target.color if s.target is not None else None
                room = self.settings.hand_limit - len(self.hand(ctx.actor))
                if payer is None or payer is ctx.actor:
                    v("emperor.tax", "only another player's pyramid pays tax")
                elif not 1 <= n <= min(3, room, len(self.hand(payer))):
                    v("emperor.tax", "{} cards", n)
            return out
        if isinstance(s, Tax):
            return out
        if isinstance(s, Convert):
            assert m is not None
            t = s.target
            if t.cell != m.target():
                v("swords.direction", "{} cannot reach {}", m, t.cell)
            elif not self.has_minion(t):
                v("swords.no-target", "no {}", t)
            elif t.color is ctx.actor:
                v("hierophant.own")
            if not 1 <= s.size <= t.size or self.stashes[ctx.actor][s.size - 1] <= 0:
                v("hierophant.size", "{} pips", s.size)
            return out
        if isinstance(s, Build):
            assert m is not None
            wasteland_ok = p is Power.TEMPERANCE and (ed is Edition.LOONEY or ctx.from_hand)
            if m.cell not in self.board and not wasteland_ok:
                v("pentacles.wasteland", "{}", m)
            want = m.target()
            if p is Power.ALCHEMIST and index == 1:
                first = steps[0]
                if not isinstance(first, Build) or first.cell != s.cell:
                    v("alchemist.stack")
            if s.cell != want:
                v("pentacles.target", "{} targets {}", m, want)
            elif not self.on_map(s.cell):
                v("pentacles.void", "{}", s.cell)
            if p is not Power.TEMPERANCE and any(q.color is not ctx.actor for q in self.pieces.get(s.cell, ())):
                v("pentacles.enemies", "{}", s.cell)
            if s.from_hand:
                if p is not Power.SUN or s.card is None or s.card == UNKNOWN:
                    v("sun.not-in-hand", "only the Sun builds from the hand")
                elif s.card in ctx.played or not self.could_hold(ctx.actor, (s.card,)):
                    # (the card played is in no hand, nor yet on the pile: a hand nobody
                    # sees could otherwise hold it still, and the Sun build itself)
                    v("sun.not-in-hand", s.card)
            else:
                if p is Power.SUN and ed is Edition.E1996:
                    v("sun.not-in-hand", "the 1996 Sun builds from the hand")
                if self.cards_available() == 0:
                    v("pentacles.no-card")
                elif s.card is not None and not (s.card == UNKNOWN and p is Power.WHEEL):
                    # (the Wheel builds face down, naming no card: from a known draw pile it
                    # is the top card, as the build does; from an unknown one a card nobody
                    # has seen yet, named later or when it is turned up)
                    probe = self.copy()
                    drawn = probe._draw_one()
                    if drawn != UNKNOWN and s.card != drawn:
                        v("pentacles.drawn", "the top card is not {}", s.card)
                    elif drawn == UNKNOWN and s.card not in probe.unseen_cards() and not (
                            s.card == UNKNOWN and covered_at_once(p, index, steps)):
                        v("pentacles.drawn", "{} cannot be in the draw pile", s.card)
            return out
        if isinstance(s, Place):
            if not self.is_wasteland(s.cell) or self.population(s.cell) > 0:
                v("lovers.wasteland", "{}", s.cell)
            if not 1 <= s.size <= 3 or self.stashes[ctx.actor][s.size - 1] <= 0:
                v("cups.no-piece", "{} pips", s.size)
            return out
        if isinstance(s, Trade):
            if s.other is ctx.actor or s.other not in self.players:
                v("justice.player", s.other.value)
            return out
        if isinstance(s, Sacrifice):
            assert m is not None
            if m.cell not in self.board:
                v("hanged.wasteland")
            return out
        if isinstance(s, DrawCards):
            room = self.settings.hand_limit - len(self.hand(ctx.actor))
            if p is Power.STAR:
                if s.count != min(4, self.cards_available()):
                    v("star.count", "{}", s.count)
            elif p is Power.HIGH_PRIESTESS:
                if not 0 <= s.count <= min(2, room, self.cards_available()):
                    v("priestess.count", "{}", s.count)
            elif not 0 <= s.count <= min(3, room, len(self.discard)):
                v("judgement.count", "{}", s.count)
            return out
        if isinstance(s, Transport):
            assert m is not None
            if m.cell not in self.board:
                v("moon.wasteland")
                return out
            d = s.cell
            lifted_leaves_gap = len(self.board[m.cell]) == 1
            if d == m.cell or self.population(d) > 0:
                v("moon.target", "{}", d)
            elif d not in self.board:
                near = [n for n in neighbours(d) if n in self.board and not (n == m.cell and lifted_leaves_gap)]
                if not near:
                    v("moon.target", "{}", d)
            return out
        if isinstance(s, Mark):
            assert m is not None
            if s.cell != m.target() or s.cell not in self.board:
                v("evil-eye.target", "{}", s.cell)
            return out
        if isinstance(s, DiscardCards):
            if not s.cards or not self.could_hold(ctx.actor, s.cards):
                v("miser.cards", "+".join(s.cards))
            return out
        v("step.shape", "{}", s)
        return out

    # =================================================================== perform ===
    def _perform(self, move: Move) -> Move:
        """Carry out a legal move on this (fresh) copy; returns the move as recorded."""
        if isinstance(move, Bid):
            self._do_bid(move)
            return move
        top = self.pending[-1] if self.pending else None
        if isinstance(top, TaxDue) and isinstance(move, Pay):
            self.pending = self.pending[:-1]
            self._hand_remove(top.payer, move.cards)
            self._hand_add(top.payee, move.cards)
            self._note(f"{top.payer.value} pays {len(move.cards)} card(s) of tax to {top.payee.value}")
            return move
        if isinstance(top, PlagueCull) and isinstance(move, Cull):
            self.pending = self.pending[:-1]
            self._kill(move.minion.cell, move.minion.pyramid, "dies of the Plague")
            self._cull_void()
            return move
        if isinstance(top, PlagueRaze) and isinstance(move, Raze):
            self.pending = self.pending[:-1]
            self._to_discard(self._remove_top(move.cell))
            self._cull_void()
            return move
        if isinstance(top, FoolDraw) and isinstance(move, Reveal):
            card = self._draw_one()
            assert card is not None
            self.pending = self.pending[:-1] + (FoolPlay(move.card, top.remaining - 1),)
            self.in_flight = (move.card,)
            return move
        if isinstance(top, (ExtraOption, GhostTurn)):
            self.pending = self.pending[:-1]
            if isinstance(top, GhostTurn):
                self.pending = self.pending + (GhostDone(),)
                self.acting_as = self.ghost
        who = self.actor
        if isinstance(move, Start):
            self._take(who, 1)
            self._add_piece(move.cell, Pyramid(who, 1, Pose.UP))
            self._note(f"{who.value} starts on {format_cell(move.cell)}")
        elif isinstance(move, Draw):
            self._draw_into(who, move.count)
        elif isinstance(move, Pass):
            self._note(f"{who.value} passes")
        elif isinstance(move, DeclareEnd):
            self.end_declared_by = who
            self.final_turns_left = len(self.players) + 1  # this turn's end takes one off
            self._note(f"{who.value} declares the end: every player has one more turn")
        elif isinstance(move, Reorient):
            for t in move.turns:
                self._remove_piece(t.minion.cell, t.minion.pyramid)
                self._add_piece(t.minion.cell, t.minion.pyramid.with_pose(t.pose))
        elif isinstance(move, Action):
            return self._do_action(move)
        return move

    def _draw_into(self, who: Color, n: int) -> None:
        got = []
        for _ in range(n):
            c = self._draw_one()
            if c is None:
                break
            got.append(c)
        self._hand_add(who, got)
        self._note(f"{who.value} draws {len(got)} card(s)")

    def _do_action(self, mv: Action) -> Action:
        fool_top = self.pending[-1] if self.pending else None
        ctx = self._ctx(mv)
        self._lift_card(mv)
        if mv.source is not Source.WILD:
            self.used = self.used | {mv.card}
        pushes: list[object] = []
        recorded_steps: list[Step] = []
        steps = mv.steps
        if mv.power is Power.DEATH and len(steps) == 2 and steps[0] == steps[1]:
            s0 = steps[0]
            if isinstance(s0, Attack) and s0.target is not None and self._death_combo(mv.minion, s0):
                self._kill(s0.target.cell, s0.target.pyramid, "is destroyed by Death")
                recorded_steps = list(steps)
                steps = ()
        for s in steps:
            recorded_steps.append(self._do_step(ctx, s, pushes))
            self._cull_void()
        if mv.power is Power.EMPEROR and len(mv.steps) == 2:
            hit, tax = mv.steps
            assert isinstance(hit, Attack) and hit.target is not None and isinstance(tax, Tax)
            pushes.append(TaxDue(hit.target.color, ctx.actor, tax.count))
        if mv.power is Power.FOOL:
            pushes.append(FoolDraw(2))
        elif mv.power is Power.HIGH_PRIESTESS:
            pushes.append(ExtraOption())
        elif mv.power is Power.PLAGUE:
            pushes.append(PlagueRaze(ctx.actor))
            order = self.players[self.current:] + self.players[:self.current]
            pushes.extend(PlagueCull(c) for c in reversed(order))
        elif mv.power is Power.GHOST and self.ghost is not None:
            pushes.append(GhostTurn())
        # the played card(s) go to the discard pile once the power has worked
        if mv.source in (Source.HAND, Source.WILD, Source.FOOL):
            for c in mv.cards:
                self._to_discard(c)
        if mv.source is Source.FOOL and isinstance(fool_top, FoolPlay):
            self.pending = self.pending[:-1]
            if fool_top.remaining > 0:
                self.pending = self.pending + (FoolDraw(fool_top.remaining),)
        self.pending = self.pending + tuple(pushes)  # type: ignore[arg-type]
        return replace(mv, steps=tuple(recorded_steps))

    def _do_step(self, ctx: _Ctx, s: Step, pushes: list[object] | None = None, *,
                 trial: bool = False) -> Step:
        """Change the state for one checked step; returns the step with outcomes filled in.

        ``trial``: a scratch step, carried out only to check the next one (the Alchemist's
        second build): a build from an unknown draw pile, its card not named, lays a card
        nobody has seen instead of asking for it, as no check of the next step asks which."""
        m = ctx.minion
        who = ctx.actor
        if isinstance(s, Grow):
            assert m is not None
            self._remove_piece(m.cell, m.pyramid)
            self._give_back(m.pyramid)
            self._take(who, m.size + 1)
            grown = m.pyramid.with_size(m.size + 1)
            self._add_piece(m.cell, grown)
            ctx.minion = Minion(m.cell, grown)
            self._note(f"{m.pyramid.describe()} at {format_cell(m.cell)} grows")
        elif isinstance(s, Clone):
            assert m is not None
            self._take(who, s.size)
            pose = m.pose if ctx.power is Power.HOLY_GRAIL else Pose.UP
            self._add_piece(m.cell, Pyramid(who, s.size, pose))
            self._note(f"{Pyramid(who, s.size, pose).describe()} cloned at {format_cell(m.cell)}")
        elif isinstance(s, MoveTo):
            assert m is not None
            self._remove_piece(m.cell, m.pyramid)
            moved = m.pyramid.with_pose(Pose.UP)
            self._add_piece(s.cell, moved)
            ctx.minion = Minion(s.cell, moved)
            self._note(f"{m.pyramid.describe()} moves from {format_cell(m.cell)} to {format_cell(s.cell)}")
        elif isinstance(s, Attack):
            assert m is not None
            if s.target is None:
                card = self._remove_top(s.cell)
                self._to_discard(card)
                self._note(f"{card} at {format_cell(s.cell)} is destroyed")
            else:
                t = s.target
                if t.size > m.size:
                    if not self._invincible(t):
                        self._remove_piece(t.cell, t.pyramid)
                        self._give_back(t.pyramid)
                        self._take(t.color, t.size - 1)
                        self._add_piece(t.cell, t.pyramid.with_size(t.size - 1))
                        self._note(f"{t.pyramid.describe()} at {format_cell(t.cell)} is reduced")
                else:
                    self._kill(t.cell, t.pyramid, "is destroyed")
        elif isinstance(s, Tax):
            pass  # the demand is queued by _do_action, which knows whom the attack hit
        elif isinstance(s, Convert):
            t = s.target
            self._kill(t.cell, t.pyramid, "is converted")
            self._take(who, s.size)
            self._add_piece(t.cell, Pyramid(who, s.size, Pose.UP))
        elif isinstance(s, Build):
            if s.from_hand:
                assert s.card is not None
                self._hand_remove(who, (s.card,))
                card = s.card
            else:
                drawn = self._draw_one()
                assert drawn is not None
                if drawn == UNKNOWN:
                    if s.card is not None:
                        drawn = s.card
                    elif not trial:
                        raise IncompleteMoveError(
                            f"say which card was built at {format_cell(s.cell)}: the draw pile is unknown")
                card = drawn
                s = Build(s.cell, card)
            self._put_card(s.cell, (card, ctx.power is not Power.WHEEL))
            self._note(f"new territory at {format_cell(s.cell)}")
        elif isinstance(s, Place):
            self._take(who, s.size)
            self._add_piece(s.cell, Pyramid(who, s.size, Pose.UP))
        elif isinstance(s, Trade):
            mine, theirs = self.hands[who], self.hands[s.other]
            self.hands[who], self.hands[s.other] = theirs, mine
        elif isinstance(s, Sacrifice):
            assert m is not None
            for p in self.pieces.get(m.cell, ()):
                self._kill(m.cell, p, "is sacrificed by the Hanged Man")
            self._to_discard(self._remove_top(m.cell))
        elif isinstance(s, Turn):
            self._remove_piece(s.minion.cell, s.minion.pyramid)
            self._add_piece(s.minion.cell, s.minion.pyramid.with_pose(s.pose))
        elif isinstance(s, DrawCards):
            if ctx.power is Power.JUDGEMENT:
                taken = tuple(reversed(self.discard[len(self.discard) - s.count:])) if s.count else ()
                self.discard = self.discard[:len(self.discard) - s.count]
                self._hand_add(who, taken)
            else:
                self._draw_into(who, s.count)
        elif isinstance(s, Transport):
            assert m is not None
            layer = self.board[m.cell][-1]
            marked = m.cell in self.marks
            self._remove_top(m.cell)
            movers = self.pieces.pop(m.cell, ())
            self._put_card(s.cell, layer)
            if marked:
                self.marks = self.marks | {s.cell}
            for p in movers:
                self._add_piece(s.cell, p.with_pose(Pose.UP))
            if m.pyramid in movers:
                ctx.minion = Minion(s.cell, m.pyramid.with_pose(Pose.UP))
        elif isinstance(s, Mark):
            self.marks = self.marks | {s.cell}
        elif isinstance(s, DiscardCards):
            self._hand_remove(who, s.cards)
            for c in s.cards:
                self._to_discard(c)
        return s

    # ================================================================= pending ===
    def _empty_territories(self) -> list[Cell]:
        return [c for c in sorted(self.board) if self.population(c) == 0]

    def _pay_moves(self, due: TaxDue) -> list[Move]:
        hand = self.hand(due.payer)
        combos = sorted({tuple(sorted(c)) for c in itertools.combinations(hand, due.count)})
        return [Pay(due.payer, c) for c in combos]

    def _pay_violations(self, move: Move, due: TaxDue) -> list[Violation]:
        ed = self.settings.edition
        if not isinstance(move, Pay):
            return [violation("turn.pending", ed, f"{due.payer.value} owes {due.count} card(s) of tax")]
        if len(move.cards) != due.count or not self.could_hold(due.payer, move.cards):
            return [violation("tax.pay", ed, f"{due.count} card(s) from {due.payer.value}'s hand")]
        return []

    def _settle(self) -> None:
        """Resolve what needs no decision; end the turn when nothing is owed."""
        while self.phase == "play":
            if not self.pending:
                self._end_turn()
                return
            top = self.pending[-1]
            if isinstance(top, GhostDone):
                self.acting_as = None
                self.pending = self.pending[:-1]
            elif isinstance(top, FoolDraw):
                if top.remaining <= 0 or self.cards_available() == 0:
                    self.pending = self.pending[:-1]
                    continue
                nxt = self.deck[-1] if self.deck else (UNKNOWN if self.hidden else "")
                if nxt == UNKNOWN:
                    return  # the table must tell us which card came up
                card = self._draw_one()
                assert card is not None
                self.in_flight = (card,)
                self.pending = self.pending[:-1] + (FoolPlay(card, top.remaining - 1),)
                self._note(f"the Fool draws {card}")
            elif isinstance(top, FoolPlay):
                if any(True for _ in self._card_actions(self.actor, Source.FOOL, (top.card,))):
                    return
                self.in_flight = ()
                self._to_discard(top.card)
                self._note(f"{top.card} drawn by the Fool cannot be played and is discarded")
                self.pending = self.pending[:-1]
                if top.remaining > 0:
                    self.pending = self.pending + (FoolDraw(top.remaining),)
            elif isinstance(top, TaxDue):
                owed = min(top.count, len(self.hand(top.payer)))
                if owed <= 0:
                    self.pending = self.pending[:-1]
                elif owed < top.count:  # nobody pays more cards than they hold
                    self.pending = self.pending[:-1] + (replace(top, count=owed),)
                else:
                    return
            elif isinstance(top, PlagueCull):
                if not self.has_pieces(top.player):
                    self.pending = self.pending[:-1]
                else:
                    return
            elif isinstance(top, PlagueRaze):
                if not self._empty_territories():
                    self.pending = self.pending[:-1]
                else:
                    return
            else:
                return

    def _end_turn(self) -> None:
        self.used = frozenset()
        self.acting_as = None
        if not self.board and self.settings.end_when_board_empty:
            # Neither text covers a world with no territory left: nothing can be started,
            # built or scored any more, so the game ends (docs/zarcana-rulings.md).
            self.phase = "over"
            self._note("the last territory is gone: the game is over")
            return
        if self.final_turns_left is not None:
            self.final_turns_left -= 1
            if self.final_turns_left <= 0:
                self.phase = "over"
                self._note("the game is over")
                return
        self.current = (self.current + 1) % len(self.players)
        self.turn_number += 1

    # ================================================================= bidding ===
    def _bid_moves(self) -> list[Move]:
        who = self.to_move
        assert who is not None and self.bidding is not None
        moves: list[Move] = [Bid(who, c) for c in self.hand_candidates(who)]
        if not self.bidding.mandatory or not self.hand(who):
            moves.append(Bid(who, None))
        return moves

    def _bid_violations(self, mv: Bid) -> list[Violation]:
        ed = self.settings.edition
        assert self.bidding is not None
        if mv.card is None:
            if self.bidding.mandatory and self.hand(mv.player):
                return [violation("bid.mandatory", ed)]
            return []
        if not self.could_hold(mv.player, (mv.card,)):
            return [violation("bid.card", ed, mv.card)]
        return []

    def _do_bid(self, mv: Bid) -> None:
        assert self.bidding is not None
        bids = self.bidding.bids + ((mv.player, mv.card),)
        self.bidding = replace(self.bidding, bids=bids)
        if len(bids) < len(self.bidding.eligible):
            return
        for who, card in bids:
            if card is not None:
                self._hand_remove(who, (card,))
                self._to_discard(card)
        offered = [(who, card) for who, card in bids if card is not None]
        if not offered:
            if all(not self.hand(c) for c in self.bidding.eligible):
                offered = self._bid_from_deck(self.bidding.eligible)
            else:
                self.bidding = Bidding(self.bidding.eligible, (), mandatory=True)
                self._note("everyone withdrew: bidding again, and this time everyone must bid")
                return
        values = {who: self.card_value(card) for who, card in offered}
        best = (max if self.settings.edition is Edition.LOONEY else min)(values.values())
        tied = tuple(c for c in self.bidding.eligible if values.get(c) == best)
        if len(tied) == 1:
            self._begin_play(self.players.index(tied[0]))
            return
        # the tied players must bid again (both texts): a withdrawal there handed the
        # first turn to the other tied player
        self.bidding = Bidding(tied, (), mandatory=True)
        self._note("tie: " + ", ".join(c.value for c in tied) + " must bid again")

    def _bid_from_deck(self, eligible: Sequence[Color]) -> list[tuple[Color, str]]:
        """1996: tied players with no cards each turn up the top card of the draw pile."""
        out = []
        for c in eligible:
            card = self._draw_one()
            if card is not None:
                self._to_discard(card)
                out.append((c, card))
        return out

    def _begin_play(self, first: int) -> None:
        self.phase = "play"
        self.bidding = None
        self.current = first
        self._note(f"{self.players[first].value} takes the first turn")

    # ========================================================= move enumeration ===
    def _card_actions(self, who: Color, source: Source, cards: tuple[str, ...],
                      only: Minion | None = None, own: list[Minion] | None = None,
                      found: _Found | None = None) -> Iterator[Action]:
        """``own``: :meth:`minions_of` ``who`` in this position, when the caller has it.
        ``found``: the legal steps of a suit power played from the hand (see _HAND_BLIND),
        kept across the calls of one listing of this position's moves (filled here)."""
        if source is Source.WILD:
            options: list[tuple[Power, str | None]] = [(p, None) for p in SUIT_POWERS]
        else:
            if cards[0] in self.used:
                return
            options = self.power_options(cards[0], source)
        # the position with the card(s) lifted is the same for every option: made once,
        # read by the step generation and the checks (which copy it before changing it)
        lifted: ZarcanaState | None = None
        for power, mimic in options:
            memo = (found if power in _HAND_BLIND and only is None
                    and source in (Source.HAND, Source.WILD) else None)
            known = memo.get(power) if memo is not None else None
            if known is not None:
                for m, steps in known:
                    yield Action(who, source, cards, power, m, steps, mimic)
                continue
            legal: list[tuple[Minion | None, tuple[Step, ...]]] = []
            if power in MINION_POWERS or source is Source.TERRITORY:
                if only is not None:
                    minions: list[Minion | None] = [only]
                else:
                    own = self.minions_of(who) if own is None else own
                    minions = list(own)
            else:
                minions = [None]
            for m in minions:
                if m is not None and not self._minion_can(power, m):
                    continue
                base = Action(who, source, cards, power, m, (), mimic)
                if lifted is None:
                    lifted = self.copy()
                    lifted._lift_card(base)
                for steps in self._candidate_steps(base, lifted):
                    mv = Action(who, source, cards, power, m, steps, mimic)
                    if not self._steps_flags(mv, lifted):
                        legal.append((m, steps))
                        yield mv
            if memo is not None:
                memo[power] = legal

    def _minion_can(self, power: Power, m: Minion) -> bool:
        """Cheap pre-filter before generating steps (the checks still decide)."""
        if power in (Power.CUPS, Power.EMPRESS, Power.STRENGTH) and not m.pose.upright:
            return False
        if power is Power.WANDS and m.pose.upright:
            return False
        return True

    def _candidate_steps(self, mv: Action, scratch: ZarcanaState
                         ) -> Iterator[tuple[Step, ...]]:
        """``scratch``: this position with ``mv``'s card(s) lifted (:meth:`_lift_card`), only read."""
        p = mv.power
        if p in _NO_STEPS:
            yield ()
            return
        ctx = scratch._ctx(mv)
        firsts = list(scratch._first_steps(ctx))
        if p is Power.DEVIL:
            m = mv.minion
            assert m is not None
            items = []
            for cell in [m.cell, *neighbours(m.cell)]:
                for q in scratch.pieces.get(cell, ()):
                    items.append((Minion(cell, q), [x for x in Pose if x is not q.pose]))
            for turns in _turn_sets(items):
                yield turns
            return
        for s in firsts:
            if p is not Power.ALCHEMIST:
                yield (s,)
            if p is Power.EMPEROR and isinstance(s, Attack) and s.target is not None:
                for n in range(1, 4):
                    yield (s, Tax(n))
            if p is Power.DEATH and isinstance(s, Attack) and scratch._death_combo(ctx.minion, s):
                yield (s, s)
        if p in _TWICE:
            for s in firsts:
                if scratch._check_step(replace(ctx), s):
                    continue
                st2 = scratch.copy()
                ctx2 = replace(ctx)
                st2._do_step(ctx2, s, trial=True)
                for s2 in st2._first_steps(ctx2):
                    if p is Power.ALCHEMIST and (not isinstance(s, Build) or not isinstance(s2, Build)
                                                 or s2.cell != s.cell):
                        continue
                    yield (s, s2)

    def _first_steps(self, ctx: _Ctx) -> Iterator[Step]:
        p = ctx.power
        m = ctx.minion
        who = ctx.actor
        if p in _CUPS_LIKE:
            assert m is not None
            yield Grow()
            for k in range(1, m.size + 1):
                yield Clone(k)
        elif p is Power.WANDS:
            assert m is not None
            yield MoveTo(m.target())
        elif p in (Power.CHARIOT, Power.HERMIT):
            assert m is not None
            for n in neighbours(m.cell):
                yield MoveTo(n)
        elif p in (Power.GATEWAY, Power.GATE):
            for c in sorted(self.board):
                yield MoveTo(c)
        elif p in _SWORD_LIKE:
            for cell in self._attack_spaces(ctx):
                for q in sorted(set(self.pieces.get(cell, ()))):
                    yield Attack(cell, Minion(cell, q))
                if cell in self.board:
                    yield Attack(cell)
        elif p is Power.HIEROPHANT:
            assert m is not None
            cell = m.target()
            for q in sorted(set(self.pieces.get(cell, ()))):
                for k in range(1, q.size + 1):
                    yield Convert(Minion(cell, q), k)
        elif p in _BUILD_LIKE:
            assert m is not None
            if p is Power.SUN:
                for card in self.hand_candidates(who):
                    yield Build(m.target(), card, from_hand=True)
                if self.settings.edition is Edition.LOONEY:
                    yield Build(m.target())
            else:
                yield Build(m.target())
        elif p is Power.LOVERS:
            for cell in self.wasteland_cells():
                if self.population(cell) == 0:
                    for k in (1, 2, 3):
                        yield Place(cell, k)
        elif p is Power.JUSTICE:
            for other in self.players:
                if other is not who:
                    yield Trade(other)
        elif p is Power.HANGED_MAN:
            yield Sacrifice()
        elif p in _DRAW_LIKE:
            for count in range(0, 5):
                yield DrawCards(count)
        elif p is Power.MOON:
            assert m is not None
            for c in sorted(set(self.board) | set(self.wasteland_cells()) | {
                    n for c0 in self.wasteland_cells() for n in neighbours(c0)}):
                yield Transport(c)
        elif p is Power.EVIL_EYE:
            assert m is not None
            yield Mark(m.target())
        elif p is Power.MISER:
            hand = sorted(self.hand(who))
            seen: set[tuple[str, ...]] = set()
            for r in range(1, len(hand) + 1):
                for combo in itertools.combinations(hand, r):
                    if combo not in seen:
                        seen.add(combo)
                        yield DiscardCards(combo)

    def table(self) -> "TableView":
        """What an overhead camera sees of this position (top cards, pyramids, discard top)."""
        from companion.games.zarcana.table import TableView

        return TableView.of(self)

    # ================================================================= scoring ===
    def score_details(self) -> dict[Color, list[tuple[Cell, str, int]]]:
        """Per colour: (cell, top card, points) for each territory it occupies alone."""
        out: dict[Color, list[tuple[Cell, str, int]]] = {c: [] for c in self.all_colors}
        for cell in sorted(self.board):
            ps = self.pieces.get(cell, ())
            owners = {p.color for p in ps}
            if len(owners) != 1:
                continue
            owner = next(iter(owners))
            card, face_up = self.board[cell][-1]
            if not face_up and not self.is_over:
                value = 0  # a hidden Wheel of Fortune territory is turned up only at the end
            else:
                value = -2 if cell in self.marks else self.card_value(card)
            out.setdefault(owner, []).append((cell, card, value))
        return out

    def scores(self) -> dict[Color, int]:
        """Points per player now (the invisible player's go to whoever holds the Ghost)."""
        details = self.score_details()
        totals = {c: sum(v for _, _, v in details.get(c, [])) for c in self.all_colors}
        if self.ghost is not None:
            holder = self._ghost_holder()
            ghost_points = totals.pop(self.ghost)
            if holder is not None:
                totals[holder] += ghost_points
            else:
                totals[self.ghost] = ghost_points
        return totals

    def _ghost_holder(self) -> Color | None:
        ghost_cards = [c for c, n in self.settings.optional_trumps if n == "ghost"]
        for cell, stack in self.board.items():
            if stack[-1][0] in ghost_cards and stack[-1][1]:
                owners = {p.color for p in self.pieces.get(cell, ())}
                if len(owners) == 1 and next(iter(owners)) in self.players:
                    return next(iter(owners))
        for c in self.players:
            if any(g in self.hand(c) for g in ghost_cards):
                return c
        return None

    def winners(self) -> list[Color]:
        s = self.scores()
        best = max(s.values())
        return [c for c, v in s.items() if v == best]


#: (the board's stacks, the hands, the other zones): :meth:`ZarcanaState._places`
_Places = tuple[tuple[tuple[Layer, ...], ...], tuple[tuple[str, ...], ...],
                tuple[tuple[str, ...], ...]]


def covered_at_once(power: Power, index: int, steps: Sequence[Step]) -> bool:
    """Build ``index`` of ``steps`` is the Alchemist's first, covered by its second (the only
    power that builds twice): no camera sees its card, so from an unknown draw pile it may
    be left unnamed (``=?``)."""
    if power is not Power.ALCHEMIST or index != 0 or len(steps) != 2:
        return False
    first, second = steps
    return isinstance(first, Build) and isinstance(second, Build) and first.cell == second.cell


@functools.lru_cache(maxsize=None)
def _suit_of(card: str) -> Suit:
    """The card's suit, the trumps (and extra cards) counting as one: what makes a wild pair
    and a Gate (kept by card: move generation asks it of every pair a hand could hold)."""
    info = card_info(card)
    return info.suit if info.suit.is_minor else Suit.MAJOR


def _cards_in(places: _Places) -> Iterator[str]:
    """Every card id of ``places`` (:meth:`ZarcanaState._places`), once for each time it
    lies there."""
    stacks, hands, zones = places
    for stack in stacks:
        yield from (c for c, _ in stack)
    for cards in hands + zones:
        yield from cards


@functools.lru_cache(maxsize=256)
def _unseen(deck: tuple[str, ...], places: _Places) -> frozenset[str]:
    """The cards of ``deck`` lying in none of ``places`` (:meth:`ZarcanaState.unseen_cards`),
    kept by those cards: a hidden game's move generation asks it of one position for every
    card and pair of cards the hand could hold."""
    seen = set(_cards_in(places))
    return frozenset(c for c in deck if c not in seen)


def _turn_sets(items: list[tuple[Minion, list[Pose]]]) -> Iterator[tuple[Turn, ...]]:
    """All reorientation sets when few, else one-pyramid changes (see the cap above)."""
    if not items:
        return
    total = 1
    for _, poses in items:
        total *= len(poses) + 1
        if total > REORIENT_COMBINATION_CAP + 1:
            break
    if total - 1 <= REORIENT_COMBINATION_CAP:
        choices = [[None, *(Turn(m, q) for q in poses)] for m, poses in items]
        keys = [m.key for m, _ in items]
        if all(a < b for a, b in zip(keys, keys[1:])):
            # each pyramid once, in the order turns sort in: every pick is sorted already
            # and no two are alike (the usual case, spared the sorts and the set below)
            for pick in itertools.product(*choices):
                turns = tuple(t for t in pick if t is not None)
                if turns:
                    yield turns
            return
        seen: set[tuple[Turn, ...]] = set()
        for pick in itertools.product(*choices):
            turns = tuple(sorted(t for t in pick if t is not None))
            if turns and turns not in seen:
                seen.add(turns)
                yield turns
        return
    seen1: set[Turn] = set()
    for m, poses in items:
        for q in poses:
            t = Turn(m, q)
            if t not in seen1:
                seen1.add(t)
                yield (t,)


# ======================================================================== setup ===

def _colors(players: Sequence[Color | str] | int) -> tuple[Color, ...]:
    defaults = (Color.RED, Color.BLUE, Color.GREEN, Color.YELLOW, Color.PURPLE, Color.ORANGE)
    if isinstance(players, int):
        if not 2 <= players <= 6:
            raise ValueError(f"Zarcana is for 2 to 6 players, not {players}")
        return defaults[:players]
    cols = tuple(c if isinstance(c, Color) else Color.parse(c) for c in players)
    if not 2 <= len(cols) <= 6:
        raise ValueError(f"Zarcana is for 2 to 6 players, not {len(cols)}")
    if len(set(cols)) != len(cols):
        raise ValueError("each player needs a colour of their own")
    return cols


def _settings(edition: Edition | str | None, settings: Settings | None,
              overrides: dict[str, object]) -> Settings:
    """Settings from an explicit edition (which wins), a Settings object and overrides."""
    base = settings if settings is not None else Settings()
    if edition is not None:
        ed = edition if isinstance(edition, Edition) else Edition.parse(str(edition))
        base = replace(base, edition=ed)
    if overrides:
        try:
            base = replace(base, **overrides)  # type: ignore[arg-type]
        except TypeError as exc:
            raise ValueError(f"unknown Zarcana setting: {exc}") from None
    return base


def new_game(players: Sequence[Color | str] | int = 3, *, edition: Edition | str | None = None,
             seed: int = 0, settings: Settings | None = None, **overrides: object) -> ZarcanaState:
    """Shuffle (seeded), box, lay out the board, deal hands and stashes.

    The edition is ``edition`` if given, else that of ``settings``, else the Looney one.
    """
    cols = _colors(players)
    base = _settings(edition, settings, overrides)
    ed = base.edition
    base.check_deal(len(cols))
    ghost: Color | None = None
    if any(name == "ghost" for _, name in base.optional_trumps):
        ghost = Color.parse(base.ghost_color)
        if ghost in cols:
            raise ValueError(f"the invisible player's colour {ghost.value} is a player's colour")
    st = ZarcanaState(settings=base, players=cols, seed=seed, ghost=ghost)
    deck = list(st.full_deck())
    random.Random(seed).shuffle(deck)
    st.deck = tuple(deck)
    colors = st.all_colors
    n = base.pieces_per_size
    st.stashes = {c: (n, n, n) for c in colors}
    st.hands = {c: () for c in colors}

    def deal_board() -> None:
        for cell in _layout_cells(base.layout_for(len(cols))):
            card = st._draw_one()
            assert card is not None
            st.board[cell] = ((card, True),)

    def deal_hands() -> None:
        for _ in range(base.hand_size):
            for c in colors:
                card = st._draw_one()
                assert card is not None
                st.hands[c] = st.hands[c] + (card,)

    if ed is Edition.LOONEY:
        st.box = st.deck[len(st.deck) - base.box_amount:] if base.box_amount else ()
        st.deck = st.deck[:len(st.deck) - base.box_amount]
        deal_board()
        deal_hands()
    else:
        st.box = st.deck[len(st.deck) - base.box_amount:] if base.box_amount else ()
        st.deck = st.deck[:len(st.deck) - base.box_amount]
        deal_hands()
        deal_board()
    if base.first_player == "bid":
        st.phase = "bid"
        # 1996: every player chooses a card (no withdrawing); Looney: a bid may be withdrawn
        st.bidding = Bidding(cols, mandatory=ed is Edition.E1996)
    else:
        first = int(base.first_player)
        if not 0 <= first < len(cols):
            raise ValueError(f"first_player {first} is not a seat of {len(cols)} players")
        st.current = first
    st.events = ()
    return st




# ============================================================ positions and saves ===

def _parse_pieces(text: str, cell: Cell) -> tuple[Pyramid, ...]:
    from companion.core.pieces import parse_pyramid

    return tuple(sorted(parse_pyramid(t) for t in text.split()))


def position(players: Sequence[Color | str] | int = 3, *, edition: Edition | str | None = None,
             board: dict[str, str | Sequence[str]] | None = None,
             pieces: dict[str, str] | None = None,
             hands: dict[str, Sequence[str]] | None = None,
             deck: Sequence[str] | None = None, discard: Sequence[str] = (),
             box: Sequence[str] = (), current: int | str = 0, reshuffles: int = 0,
             seed: int = 0, settings: Settings | None = None,
             **overrides: object) -> ZarcanaState:
    """A position set up by hand, for tests, puzzles and the companion's table view.

    ``board`` maps "i,j" to a card id or a bottom-to-top list (prefix ``~`` for a face-down
    card); ``pieces`` maps "i,j" to pyramids such as ``"red2U blue1E"``. Stashes hold what
    is not on the board. Cards not placed anywhere go to the ``deck`` unless one is given.
    Unknown cards may be written ``"?"``.
    """
    from companion.core.pieces import parse_cell

    cols = _colors(players)
    base = _settings(edition, settings, overrides)
    base.validate(len(cols))
    ghost = None
    if any(name == "ghost" for _, name in base.optional_trumps):
        ghost = Color.parse(base.ghost_color)
    st = ZarcanaState(settings=base, players=cols, seed=seed, ghost=ghost)
    for key, cards in (board or {}).items():
        stack = [cards] if isinstance(cards, str) else list(cards)
        layers: list[Layer] = []
        for c in stack:
            face_up = not c.startswith("~")
            cid = c.lstrip("~")
            if cid != UNKNOWN:
                card_info(cid)
            layers.append((cid, face_up))
        st.board[parse_cell(key)] = tuple(layers)
    for key, text in (pieces or {}).items():
        cell = parse_cell(key)
        ps = _parse_pieces(text, cell)
        if ps:
            st.pieces[cell] = ps
    n = base.pieces_per_size
    for color in st.all_colors:
        on_board = Counter(p.size for _, p in st.pieces_of(color))
        stash = tuple(n - on_board[s] for s in (1, 2, 3))
        if min(stash) < 0:
            raise ValueError(f"{color.value} has more pyramids on the board than a stash of {n} per size")
        st.stashes[color] = (stash[0], stash[1], stash[2])
    st.hands = {color: () for color in st.all_colors}
    for name, cards in (hands or {}).items():
        st.hands[Color.parse(name)] = tuple(cards)
    st.discard = tuple(discard)
    st.box = tuple(box)
    if deck is None:
        placed = st.card_count()  # the deck is still empty here
        rest = [c for c in st.full_deck() if not placed[c]]
        unknown = placed[UNKNOWN]
        random.Random(seed).shuffle(rest)
        st.deck = tuple(rest[unknown:]) if unknown else tuple(rest)
    else:
        st.deck = tuple(deck)
    st.current = cols.index(Color.parse(current)) if isinstance(current, str) else current
    st.reshuffles = reshuffles
    for color in cols:
        for held in st.hands[color]:
            if held != UNKNOWN:
                card_info(held)
    return st


SAVE_VERSION = 1


def _pending_to_json(p: object) -> dict[str, object]:
    if isinstance(p, ExtraOption):
        return {"kind": "extra-option"}
    if isinstance(p, FoolDraw):
        return {"kind": "fool-draw", "remaining": p.remaining}
    if isinstance(p, FoolPlay):
        return {"kind": "fool-play", "card": p.card, "remaining": p.remaining}
    if isinstance(p, TaxDue):
        return {"kind": "tax", "payer": p.payer.value, "payee": p.payee.value, "count": p.count}
    if isinstance(p, PlagueCull):
        return {"kind": "plague-cull", "player": p.player.value}
    if isinstance(p, PlagueRaze):
        return {"kind": "plague-raze", "player": p.player.value}
    if isinstance(p, GhostTurn):
        return {"kind": "ghost-turn"}
    if isinstance(p, GhostDone):
        return {"kind": "ghost-done"}
    raise TypeError(p)


def _pending_from_json(d: dict[str, object]) -> object:
    k = d["kind"]
    if k == "extra-option":
        return ExtraOption()
    if k == "fool-draw":
        return FoolDraw(int(d["remaining"]))  # type: ignore[call-overload]
    if k == "fool-play":
        return FoolPlay(str(d["card"]), int(d["remaining"]))  # type: ignore[call-overload]
    if k == "tax":
        return TaxDue(Color(d["payer"]), Color(d["payee"]), int(d["count"]))  # type: ignore[call-overload]
    if k == "plague-cull":
        return PlagueCull(Color(d["player"]))
    if k == "plague-raze":
        return PlagueRaze(Color(d["player"]))
    if k == "ghost-turn":
        return GhostTurn()
    if k == "ghost-done":
        return GhostDone()
    raise ValueError(f"unknown pending decision {k!r}")


def _marks_to_json(st: ZarcanaState) -> list[str]:
    """The Evil Eye marks as saved: the marked card's id, as files always held them, and
    for a card nobody could name ("?", which would say every such card) the cell it lies
    on ("2,1")."""
    out = []
    for cell in st.marks:
        card = st.board[cell][-1][0] if cell in st.board else UNKNOWN
        out.append(format_cell(cell) if card == UNKNOWN else card)
    return sorted(out)


def _marks_from_json(st: ZarcanaState, saved: object) -> frozenset[Cell]:
    """:func:`_marks_to_json` read back into the territories marked (``st``'s board read
    already). A card id marks the territory it tops (an id on no top card marks nothing:
    the old engine's mark had no effect there either). A bare "?", which a file saved
    before marks were kept by place holds, marked every unnamed card on top then: it marks
    them all now, so that the position scores as it was saved."""
    from companion.core.pieces import parse_cell

    if not isinstance(saved, list):
        raise ValueError("expected a list of marked cards")
    tops: dict[str, list[Cell]] = {}
    for cell, stack in st.board.items():
        tops.setdefault(stack[-1][0], []).append(cell)
    out: set[Cell] = set()
    for entry in saved:
        text = str(entry)
        if text[:1].isdigit() or text[:1] == "-":
            cell = parse_cell(text)
            if cell not in st.board:
                raise ValueError(f"a mark at {text}, where no territory lies")
            out.add(cell)
        else:
            out.update(tops.get(text, ()))
    return frozenset(out)


def to_dict(st: ZarcanaState) -> dict[str, object]:
    """A JSON-ready snapshot of everything in the state."""
    return {
        "game": "zarcana", "version": SAVE_VERSION,
        "settings": st.settings.to_dict(),
        "players": [c.value for c in st.players],
        "seed": st.seed,
        "board": [[format_cell(c), [[card, up] for card, up in st.board[c]]] for c in sorted(st.board)],
        "pieces": [[format_cell(c), [str(p) for p in st.pieces[c]]] for c in sorted(st.pieces)],
        "stashes": {c.value: list(v) for c, v in st.stashes.items()},
        "hands": {c.value: list(v) for c, v in st.hands.items()},
        "deck": list(st.deck), "discard": list(st.discard), "box": list(st.box),
        "marks": _marks_to_json(st),
        "phase": st.phase, "current": st.current, "turn_number": st.turn_number,
        "reshuffles": st.reshuffles,
        "end_declared_by": st.end_declared_by.value if st.end_declared_by else None,
        "final_turns_left": st.final_turns_left,
        "used": sorted(st.used),
        "pending": [_pending_to_json(p) for p in st.pending],
        "in_flight": list(st.in_flight),
        "bidding": None if st.bidding is None else {
            "eligible": [c.value for c in st.bidding.eligible],
            "bids": [[c.value, card] for c, card in st.bidding.bids],
            "mandatory": st.bidding.mandatory},
        "ghost": st.ghost.value if st.ghost else None,
        "acting_as": st.acting_as.value if st.acting_as else None,
        "history": list(st.history),
    }


def from_dict(data: object, *, name: str = "saved game") -> ZarcanaState:
    """Rebuild a state from :func:`to_dict` output; SavedGameError names what is wrong."""
    from companion.core.errors import SavedGameError
    from companion.core.pieces import parse_cell, parse_pyramid

    if not isinstance(data, dict):
        raise SavedGameError(f"{name}: expected a JSON object, got {type(data).__name__}")
    if data.get("game") != "zarcana":
        raise SavedGameError(f"{name}: not a Zarcana game (game={data.get('game')!r})")
    if data.get("version") != SAVE_VERSION:
        raise SavedGameError(f"{name}: unsupported save version {data.get('version')!r}")
    field_name = "?"
    try:
        field_name = "settings"
        settings = Settings.from_dict(data["settings"])
        field_name = "players"
        players = tuple(Color(c) for c in data["players"])
        field_name = "seed"
        st = ZarcanaState(settings=settings, players=players, seed=int(data["seed"]))
        field_name = "board"
        for key, stack in data["board"]:
            layers = []
            for card, up in stack:
                if card != UNKNOWN:
                    card_info(card)
                layers.append((str(card), bool(up)))
            if not layers:
                raise ValueError("empty stack")
            st.board[parse_cell(key)] = tuple(layers)
        field_name = "pieces"
        for key, ps in data["pieces"]:
            st.pieces[parse_cell(key)] = tuple(sorted(parse_pyramid(p) for p in ps))
        field_name = "stashes"
        st.stashes = {Color(c): (int(v[0]), int(v[1]), int(v[2])) for c, v in data["stashes"].items()}
        field_name = "hands"
        st.hands = {Color(c): tuple(str(x) for x in v) for c, v in data["hands"].items()}
        for f in ("deck", "discard", "box", "in_flight"):
            field_name = f
            setattr(st, f, tuple(str(x) for x in data[f]))
        field_name = "marks"
        st.marks = _marks_from_json(st, data["marks"])
        field_name = "phase"
        if data["phase"] not in ("bid", "play", "over"):
            raise ValueError(f"unknown phase {data['phase']!r}")
        st.phase = data["phase"]
        field_name = "current"
        st.current = int(data["current"])
        if not 0 <= st.current < len(players):
            raise ValueError(f"seat {st.current} of {len(players)}")
        field_name = "turn_number"
        st.turn_number = int(data["turn_number"])
        field_name = "reshuffles"
        st.reshuffles = int(data["reshuffles"])
        field_name = "end_declared_by"
        st.end_declared_by = Color(data["end_declared_by"]) if data["end_declared_by"] else None
        field_name = "final_turns_left"
        ftl = data["final_turns_left"]
        st.final_turns_left = None if ftl is None else int(ftl)
        field_name = "used"
        st.used = frozenset(str(x) for x in data["used"])
        field_name = "pending"
        st.pending = tuple(_pending_from_json(p) for p in data["pending"])  # type: ignore[misc]
        field_name = "bidding"
        b = data["bidding"]
        st.bidding = None if b is None else Bidding(
            tuple(Color(c) for c in b["eligible"]),
            tuple((Color(c), card) for c, card in b["bids"]), bool(b["mandatory"]))
        field_name = "ghost"
        st.ghost = Color(data["ghost"]) if data["ghost"] else None
        field_name = "acting_as"
        st.acting_as = Color(data["acting_as"]) if data["acting_as"] else None
        field_name = "history"
        st.history = tuple(str(h) for h in data["history"])
    except SavedGameError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        detail = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
        raise SavedGameError(f"{name}: bad or missing field {field_name!r}: {detail}") from None
    problems = invariant_errors(st)
    if problems:
        raise SavedGameError(f"{name}: inconsistent position: " + "; ".join(problems[:5]))
    return st


def dumps(st: ZarcanaState) -> str:
    import json

    return json.dumps(to_dict(st), sort_keys=True)


def loads(text: str, *, name: str = "saved game") -> ZarcanaState:
    import json

    from companion.core.errors import SavedGameError

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SavedGameError(f"{name}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    return from_dict(data, name=name)


def pending_text(st: ZarcanaState) -> str | None:
    """The decision a power left open this turn, in words (None on a plain turn): what the
    text table and the window both show the players."""
    if st.phase == "bid":
        return "bidding for the first turn"
    if not st.pending:
        return None
    top = st.pending[-1]
    if isinstance(top, TaxDue):
        return f"{top.payer.value} owes {top.payee.value} {top.count} card(s) of tax"
    if isinstance(top, FoolPlay):
        return f"the Fool drew {card_words(top.card)}: it must be played if possible"
    if isinstance(top, FoolDraw):
        return "the Fool draws a card"
    if isinstance(top, ExtraOption):
        return "the High Priestess gives another turn option"
    if isinstance(top, GhostTurn):
        ghost = st.ghost.value if st.ghost else "?"
        return (f"{st.current_player.value} takes a turn option for the invisible player "
                f"({ghost})")
    if isinstance(top, PlagueCull):
        return f"Plague: {top.player.value} destroys one of their own pyramids"
    if isinstance(top, PlagueRaze):
        return f"Plague: {top.player.value} discards an empty territory"
    return None


def invariant_errors(st: ZarcanaState) -> list[str]:
    """What is wrong with a position: lost or duplicated cards, pyramids, pieces in the void."""
    out: list[str] = []
    zones = st.card_count()
    full = Counter(st.full_deck())
    unknown = zones.pop(UNKNOWN, 0)
    extra = zones - full
    if extra:
        out.append("cards that are not in the deck or appear twice: " + ", ".join(sorted(extra)))
    missing = sum((full - zones).values())
    if missing != unknown:
        out.append(f"{missing} cards unaccounted for but {unknown} unknown cards in play")
    n = st.settings.pieces_per_size
    for c in st.all_colors:
        if c not in st.stashes:
            out.append(f"no stash for {c.value}")
            continue
        on_board = Counter(p.size for _, p in st.pieces_of(c))
        for size in (1, 2, 3):
            if st.stashes[c][size - 1] + on_board[size] != n:
                out.append(f"{c.value} has {st.stashes[c][size - 1]} size-{size} in stash and "
                           f"{on_board[size]} on the board, not {n}")
    for cell, ps in st.pieces.items():
        if not ps:
            out.append(f"empty piece list at {format_cell(cell)}")
        if not st.on_map(cell):
            out.append(f"pyramids in the void at {format_cell(cell)}")
        for p in ps:
            if p.color not in st.all_colors:
                out.append(f"pyramid of a colour not in the game at {format_cell(cell)}")
    for c in st.hands:
        if c not in st.all_colors:
            out.append(f"hand for {c.value}, who is not playing")
    for cell in sorted(st.marks):
        if cell not in st.board:
            out.append(f"an Evil Eye mark at {format_cell(cell)}, where no territory lies")
    return out
