"""The move generation shares one scratch position (the played card lifted) among all the
options of a card: what it lists must be what a fresh position gives, whatever came before."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings, strategies

from companion.core.pieces import Color, Minion, Pose, Pyramid, parse_pyramid
from companion.games.zarcana import Edition, engine, new_game
from companion.games.zarcana.engine import (
    REORIENT_COMBINATION_CAP,
    IncompleteMoveError,
    ZarcanaState,
    _turn_sets,
    covered_at_once,
    dumps,
    invariant_errors,
    loads,
)
from companion.games.zarcana.moves import UNKNOWN, Action, Build, DeclareEnd, Move, Source, Turn
from companion.games.zarcana.rules import MINION_POWERS, SUIT_POWERS, Power
from companion.games.zarcana.table import TableView, explain
from companion.games.zarcana.state import FoolPlay


def _positions(edition: Edition, players: int, seed: int, count: int) -> list[ZarcanaState]:
    """The first ``count`` positions of a seeded random game (fewer if it ends)."""
    rng = random.Random(seed)
    st = new_game(players, edition=edition, seed=seed, first_player="bid",
                  wild_doubles="suits+majors")
    out = [st]
    while len(out) < count and not st.is_over:
        st = st.apply(rng.choice(st.legal_moves()))
        out.append(st)
    return out


@pytest.mark.parametrize("edition", [Edition.LOONEY, Edition.E1996], ids=["looney", "1996"])
def test_each_option_is_checked_as_on_a_fresh_position(edition: Edition) -> None:
    """Every step sequence the enumerator tries gets the verdict it gets on a position of
    its own (the card lifted afresh): no check or two-step trial leaves its mark on the
    shared one. Two-step powers (the Chariot, Strength, the Alchemist) are among them."""
    tried = two_steps = 0
    for seed in range(3):
        for st in _positions(edition, 4, seed, 80):
            if st.phase != "play" or st.pending:
                continue
            who = st.to_move
            assert who is not None
            for card in st.hand_candidates(who):
                options = st.power_options(card, Source.HAND)
                lifted: ZarcanaState | None = None
                for power, mimic in options:
                    actors: list[Minion | None] = (
                        [*st.minions_of(who)] if power in MINION_POWERS else [None])
                    for m in actors:
                        base = Action(who, Source.HAND, (card,), power, m, (), mimic)
                        if lifted is None:
                            lifted = st.copy()
                            lifted._lift_card(base)
                        for steps in list(st._candidate_steps(base, lifted)):
                            mv = Action(who, Source.HAND, (card,), power, m, steps, mimic)
                            shared = st._steps_violations(mv, lifted)
                            assert shared == st._steps_violations(mv), str(mv)
                            tried += 1
                            two_steps += len(steps) == 2
    assert tried > 1000 and two_steps > 50, (tried, two_steps)


@pytest.mark.parametrize("edition", [Edition.LOONEY, Edition.E1996], ids=["looney", "1996"])
def test_legal_moves_are_those_of_a_fresh_load(edition: Edition) -> None:
    """The same position reached two ways (played to, and loaded from its save) lists the
    same legal moves, and asking again, or after a copy of it was changed, gives them again."""
    for st in _positions(edition, 3, 7, 60)[::3]:
        first = [str(m) for m in st.legal_moves()]
        fresh = loads(dumps(st))
        assert sorted(first) == sorted(str(m) for m in fresh.legal_moves())
        if first:
            st.apply(st.legal_moves()[-1])
        assert [str(m) for m in st.legal_moves()] == first


def _hidden(st: ZarcanaState) -> ZarcanaState:
    """``st`` as the companion following a table knows it: hands and draw pile unknown."""
    out = st.copy()
    out.hands = {c: (UNKNOWN,) * len(h) for c, h in st.hands.items()}
    out.deck = (UNKNOWN,) * len(st.deck)
    return out


def test_unseen_cards_follow_every_change() -> None:
    """The unseen cards (kept between calls) are those of the position as it is now: after a
    move, after a copy is changed in place, and unchanged in the position they came from."""
    def counted(st: ZarcanaState) -> set[str]:
        seen = st.card_count()
        return {c for c in st.full_deck() if c not in seen}

    for known in _positions(Edition.LOONEY, 3, 11, 40)[5::5]:
        st = _hidden(known)
        before = st.unseen_cards()
        assert before == counted(st) and before
        who = st.players[0]
        card = sorted(before)[0]
        changed = st.copy()
        assert changed.unseen_cards() == before
        changed.hands[who] = changed.hands[who] + (card,)   # the camera named a card
        assert changed.unseen_cards() == before - {card} == counted(changed)
        changed.discard = changed.discard + (sorted(before)[1],)
        assert changed.unseen_cards() == counted(changed)
        assert st.unseen_cards() == before
        moves = st.legal_moves()
        assert sorted(map(str, moves)) == sorted(map(str, loads(dumps(st)).legal_moves()))
        for mv in moves[:: max(1, len(moves) // 5)]:
            try:
                after = st.apply(mv)
            except IncompleteMoveError:     # a card the camera must name first
                continue
            assert after.unseen_cards() == counted(after)


# --------------------------------------------------------------------------------------
# Move generation asks the step checks only "any broken rule?" and leaves the words of the
# rules it breaks unwritten (a fast path); ``check`` writes them. Both must rule alike.

_OPTIONAL = (("major-01", "alchemist"), ("major-07", "catapult"), ("major-09", "assassin"),
             ("major-14", "holy-grail"), ("major-16", "evil-eye"), ("major-12", "miser"),
             ("major-05", "gate"))


def _playout(edition: Edition, seed: int, moves: int, optional: bool) -> ZarcanaState:
    """The position after ``moves`` seeded random moves (fewer if the game ends)."""
    rng = random.Random(f"fast-path:{seed}")
    extra: dict[str, object] = {"optional_trumps": _OPTIONAL} if optional else {}
    st = new_game(3 + seed % 2, edition=edition, seed=seed, wild_doubles="suits+majors",
                  **extra)
    for _ in range(moves):
        if st.is_over:
            break
        st = st.apply(rng.choice(st.legal_moves()))
    return st


def _candidates(st: ZarcanaState) -> list[Action]:
    """Every card action the enumerator tries now, before any check rejects it."""
    who = st.to_move
    assert who is not None
    plays: list[tuple[Source, tuple[str, ...], Minion | None]] = []
    top = st.pending[-1] if st.pending else None
    if isinstance(top, FoolPlay):
        plays.append((Source.FOOL, (top.card,), None))
    elif not st.pending:
        plays += [(Source.HAND, (card,), None) for card in st.hand_candidates(who)]
        for m in st.minions_of(who):
            layer = st.top(m.cell)
            if layer is not None and layer[1]:
                plays.append((Source.TERRITORY, (layer[0],), m))
        for a, b in itertools.combinations(st.hand_candidates(who), 2):
            if st._pair_ok(a, b) and st.could_hold(who, (a, b)):
                plays.append((Source.WILD, (a, b), None))
    out: list[Action] = []
    for source, cards, only in plays:
        options = ([(p, None) for p in SUIT_POWERS] if source is Source.WILD
                   else st.power_options(cards[0], source))
        lifted: ZarcanaState | None = None
        for power, mimic in options:
            actors: list[Minion | None] = (
                [only] if only is not None else
                [*st.minions_of(who)] if power in MINION_POWERS else [None])
            for m in actors:
                base = Action(who, source, cards, power, m, (), mimic)
                if lifted is None:
                    lifted = st.copy()
                    lifted._lift_card(base)
                out += [Action(who, source, cards, power, m, steps, mimic)
                        for steps in st._candidate_steps(base, lifted)]
    return out


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(edition=strategies.sampled_from([Edition.LOONEY, Edition.E1996]),
       seed=strategies.integers(0, 10_000), moves=strategies.integers(0, 120),
       optional=strategies.booleans(), hidden=strategies.booleans())
def test_move_generation_and_check_rule_alike(edition: Edition, seed: int, moves: int,
                                              optional: bool, hidden: bool) -> None:
    """On positions of seeded random games (and the same as the companion sees them, hands
    and draw pile unknown), a candidate action (or declaring the end) is listed by
    ``legal_moves`` exactly when ``check`` finds it legal; every listed move is legal; and a
    refused one is told in words."""
    st = _playout(edition, seed, moves, optional)
    if hidden:
        st = _hidden(st)
    listed = st.legal_moves()
    assert all(st.check(mv).legal for mv in listed), [str(mv) for mv in listed
                                                     if not st.check(mv).legal]
    names = {str(mv) for mv in listed}
    candidates: list[Move] = [*_candidates(st)]
    if st.phase == "play" and not st.pending and st.to_move is not None:
        candidates.append(DeclareEnd(st.to_move))
    for mv in candidates:
        verdict = st.check(mv)
        assert (str(mv) in names) == verdict.legal, (str(mv), verdict.violations)
        for v in verdict.violations:
            assert v.reason and "<function" not in v.reason and "lambda" not in v.reason, v


def _minions_as_listed_before(st: ZarcanaState, color: Color) -> list[Minion]:
    """minions_of as first written (cells sorted, each cell's pyramids deduplicated and
    sorted): the order the golden records and the bots' seeded playouts depend on."""
    return [Minion(cell, p) for cell in sorted(st.pieces) for p in sorted(set(st.pieces[cell]))
            if p.color is color]


def test_minions_are_listed_in_the_same_order() -> None:
    """Each player's pyramids come in the order they always came in: along seeded games, and
    where one cell holds several pyramids, alike ones among them, in any order."""
    seen = several = 0
    for edition in (Edition.LOONEY, Edition.E1996):
        for st in _positions(edition, 4, 5, 150):
            for color in st.all_colors:
                mine = st.minions_of(color)
                assert mine == _minions_as_listed_before(st, color)
                seen += len(mine)
                several += sum(1 for ps in st.pieces.values()
                               if sum(p.color is color for p in ps) > 1)
    st = _positions(Edition.LOONEY, 3, 5, 1)[0].copy()
    st.pieces = {(1, 1): tuple(parse_pyramid(t) for t in "red2N blue1U red1U red2N red1U".split()),
                 (0, 1): (parse_pyramid("blue3E"),), (2, -1): (parse_pyramid("red3W"),)}
    for color in (Color.RED, Color.BLUE, Color.GREEN):
        assert st.minions_of(color) == _minions_as_listed_before(st, color)
    assert [str(m) for m in st.minions_of(Color.RED)] == [
        "red1U@1,1", "red2N@1,1", "red3W@2,-1"]
    assert seen > 500 and several > 20, (seen, several)


def _turn_sets_as_before(items: list[tuple[Minion, list[Pose]]]) -> list[tuple[Turn, ...]]:
    """The reorientation sets as first listed: when few, every pick of the product, its
    turns sorted, the first of alike ones kept; else each one-pyramid change once."""
    total = 1
    for _, poses in items:
        total *= len(poses) + 1
    out = []
    if total - 1 <= REORIENT_COMBINATION_CAP:
        seen: set[tuple[Turn, ...]] = set()
        for pick in itertools.product(*[[None, *poses] for _, poses in items]):
            turns = tuple(sorted(Turn(m, q) for (m, _), q in zip(items, pick) if q is not None))
            if turns and turns not in seen:
                seen.add(turns)
                out.append(turns)
        return out
    for m, poses in items:
        for q in poses:
            if (Turn(m, q),) not in out:
                out.append((Turn(m, q),))
    return out


_pyramids = strategies.builds(Pyramid, strategies.sampled_from([Color.RED, Color.BLUE]),
                              strategies.integers(1, 3), strategies.sampled_from(list(Pose)))
_minions = strategies.builds(Minion, strategies.tuples(strategies.integers(0, 2),
                                                       strategies.integers(0, 1)), _pyramids)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(minions=strategies.lists(_minions, min_size=1, max_size=4), sort=strategies.booleans())
def test_reorientations_are_listed_in_the_same_order(minions: list[Minion], sort: bool) -> None:
    """Reorientations (of a player's pyramids, or the Devil's round one) come in the order
    they always came in: pyramids given in order or not, alike ones among them."""
    if sort:
        minions.sort()
    items = [(m, [q for q in Pose if q is not m.pose]) for m in minions]
    assert list(_turn_sets(items)) == _turn_sets_as_before(items)


@pytest.mark.parametrize("edition", [Edition.LOONEY, Edition.E1996], ids=["looney", "1996"])
def test_suit_steps_found_once_are_those_of_each_card(edition: Edition,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A suit power's legal steps by a pyramid are found once per position and given to
    every card that grants the power (cards of the suit, royalty cards, the Magician, wild
    pairs): the moves listed, in their order, are those found card by card."""
    shared = []
    for seed in range(3):
        for st in _positions(edition, 3 + seed % 2, seed, 90)[::2]:
            shared.append((st, [str(m) for m in st.legal_moves()]))
            hidden = _hidden(st)
            shared.append((hidden, [str(m) for m in hidden.legal_moves()]))
    monkeypatch.setattr(engine, "_HAND_BLIND", frozenset())
    for st, listed in shared:
        assert [str(m) for m in st.legal_moves()] == listed
    assert sum(len(listed) for _, listed in shared) > 3000


def _could_hold_as_before(st: ZarcanaState, color: Color, cards: tuple[str, ...]) -> bool:
    """could_hold as first written (on a copy of the unseen cards)."""
    hand = list(st.hand(color))
    unseen: set[str] | None = None
    for card in cards:
        if card in hand:
            hand.remove(card)
        elif UNKNOWN in hand and card != UNKNOWN:
            if unseen is None:
                unseen = st.unseen_cards()
            if card not in unseen:
                return False
            hand.remove(UNKNOWN)
            unseen.discard(card)
        else:
            return False
    return True


def test_could_hold_answers_as_before() -> None:
    """Whether a hand could hold some cards (a card twice, a known card and an unseen one,
    one the table shows elsewhere) is answered as before, hands known, unknown or partly
    known, and asking leaves the unseen cards as they were."""
    asked = yes = 0
    for known in _positions(Edition.LOONEY, 3, 3, 60)[10::10]:
        for st in (known, _hidden(known)):
            partly = _hidden(known)
            partly.hands = {c: h[:1] + (UNKNOWN,) * (len(h) - 1) for c, h in known.hands.items()}
            for pos in (st, partly):
                before = pos.unseen_cards()
                shown = [layers[-1][0] for layers in pos.board.values()][:3]
                for color in pos.players:
                    cards = pos.hand_candidates(color)[:12] + shown + [UNKNOWN]
                    for pair in itertools.product(cards, repeat=2):
                        got = pos.could_hold(color, pair)
                        assert got == _could_hold_as_before(pos, color, pair), pair
                        asked += 1
                        yes += got
                assert pos.unseen_cards() == before
    assert asked > 5000 and 0 < yes < asked, (asked, yes)


# --------------------------------------------------------------------------------------
# The Alchemist's first card, built from a draw pile nobody sees and covered at once by its
# second, is left unnamed ("?"); a later move taking the card above it away leaves "?" face
# up where the picture could not name it.

def _named_as_seen(st: ZarcanaState, mv: Move, rng: random.Random) -> Move:
    """``mv`` with each card it builds from the unknown draw pile named, as the camera names
    them (a card nobody has seen yet); the Alchemist's first, covered at once, and the Wheel
    of Fortune's, face down, unnamed."""
    if not isinstance(mv, Action):
        return mv
    free = sorted(st.unseen_cards() - set(mv.cards))
    steps = []
    for i, s in enumerate(mv.steps):
        if isinstance(s, Build) and not s.from_hand and s.card is None:
            hidden = mv.power is Power.WHEEL or covered_at_once(mv.power, i, mv.steps)
            s = replace(s, card=UNKNOWN if hidden else free.pop(rng.randrange(len(free))))
        steps.append(s)
    return replace(mv, steps=tuple(steps))


def _unnamed_face_up(st: ZarcanaState) -> int:
    return sum(s[-1] == (UNKNOWN, True) for s in st.board.values())


def _unnamed_covered(st: ZarcanaState) -> int:
    return sum(layer == (UNKNOWN, True) for s in st.board.values() for layer in s[:-1])


@pytest.mark.parametrize("seed", range(4))
def test_a_card_the_alchemist_covered_unnamed_and_uncovered_breaks_no_listing(seed: int) -> None:
    """Seeded games as the camera follows them (hands and draw pile unknown from the deal),
    the Alchemist, the Gate and the Evil Eye in play, choosing the Alchemist's builds and the
    moves that take the card off an unnamed covered one (attacks, the Moon, the Hanged Man)
    most often: ``legal_moves`` lists only moves ``check`` finds legal, ``apply`` makes each
    (its builds named as seen) into a consistent position, and the referee's ``explain``
    finds the move made from what the table shows after it. Listing the moves with "?" face
    up raised NotationError (the World and the Gate asked what card it is)."""
    rng = random.Random(f"alchemist-uncovered:{seed}")
    edition = (Edition.E1996, Edition.LOONEY)[seed % 2]
    st = _hidden(new_game(2 + seed % 3, edition=edition, seed=seed,
                          wild_doubles="suits+majors", optional_trumps=_OPTIONAL))
    # (and three such cards from the start, as the Alchemist leaves them: each drawn from
    # the pile onto a territory, under the card now on top)
    for cell in rng.sample(sorted(st.board), 3):
        st.board[cell] = st.board[cell][:-1] + ((UNKNOWN, True),) + st.board[cell][-1:]
        st.deck = st.deck[1:]
    assert invariant_errors(st) == []
    face_up = 0
    for _ in range(50):
        if st.is_over:
            break
        listed = st.legal_moves()
        face_up += _unnamed_face_up(st) > 0
        watched = _unnamed_face_up(st) or _unnamed_covered(st)
        tried = listed if watched else rng.sample(listed, min(len(listed), 12))
        made: list[tuple[Move, ZarcanaState]] = []
        for mv in tried:
            assert st.check(mv).legal, st.check(mv).explain()
            mv = _named_as_seen(st, mv, rng)
            after = st.apply(mv)
            assert invariant_errors(after) == [], (str(mv), invariant_errors(after))
            after.scores()
            made.append((mv, after))

        def weight(made: tuple[Move, ZarcanaState]) -> int:
            mv, after = made
            if isinstance(mv, Action) and mv.power is Power.ALCHEMIST:
                return 30
            return 60 if _unnamed_covered(after) < _unnamed_covered(st) else 1

        mv, after = rng.choices(made, weights=[weight(m) for m in made])[0]
        if watched and isinstance(mv, Action):
            found = explain(st, TableView.of(after))
            assert found.unchanged or str(mv) in {str(m) for m in found.moves}, (
                str(mv), found.describe())
        st = after
    assert face_up >= 3, face_up
