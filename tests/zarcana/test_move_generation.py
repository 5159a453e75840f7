"""The move generation shares one scratch position (the played card lifted) among all the
options of a card: what it lists must be what a fresh position gives, whatever came before."""

from __future__ import annotations

import random

import pytest

from companion.core.pieces import Minion
from companion.games.zarcana import Edition, new_game
from companion.games.zarcana.engine import IncompleteMoveError, ZarcanaState, dumps, loads
from companion.core.pieces import Minion
from companion.games.zarcana.moves import UNKNOWN, Action, Source
from companion.games.zarcana.rules import MINION_POWERS


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
