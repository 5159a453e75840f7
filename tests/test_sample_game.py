"""The scripted sample game behind sample_images/ replays exactly as written."""

from __future__ import annotations

import json
from pathlib import Path

from companion.games.zarcana import new_game

GAME = Path(__file__).resolve().parent.parent / "sample_images" / "zarcana" / "game.json"


def test_sample_game_script_is_legal_flags_its_illegal_move_and_scores() -> None:
    script = json.loads(GAME.read_text())
    st = new_game(script["players"], edition=script["edition"], seed=script["seed"],
                  **script["settings"])
    illegal = 0
    for entry in script["moves"]:
        verdict = st.check(entry["move"])
        if "illegal" in entry:
            assert list(verdict.rules) == entry["illegal"], verdict.explain()
            illegal += 1
            continue
        assert verdict.legal, verdict.explain()
        st = st.apply(entry["move"])
        # the recorded move reads back as written (builds also name the card drawn)
        assert st.history[-1].startswith(entry["move"])
    assert illegal == 1
    assert st.is_over
    assert {c.value: s for c, s in st.scores().items()} == script["final_scores"]
    assert len(script["moves"]) >= 15
