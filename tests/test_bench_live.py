"""bench/live.py's latency part runs the sample game through the live loop as the demo does
(the truth records standing in for the pipeline here): it keeps working when the pieces it
borrows from the demo change."""

from __future__ import annotations


def test_the_live_bench_plays_the_sample_game_to_the_true_scores() -> None:
    from bench.live import verdict_latency

    times, which, right = verdict_latency(1, "truth")
    assert which.startswith("truth") and right
    assert len(times) >= 20 and all(t >= 0 for t in times)
