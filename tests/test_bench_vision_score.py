"""bench/vision.py's scoring of one record against its truth: a card whose art looks the
same both ways up (six Decktet cards) counts its art direction at either end."""

from __future__ import annotations

from bench.vision import (WHERE_MM, blur_attribute_split, blur_called_split, blur_split,
                          frame_blurred, score, summarise, where_lost)


def _table(angle_read: float) -> tuple[dict, dict]:
    truth = {"cards": [{"id": "decktet-8-mill", "center_mm": [100.0, 100.0], "angle_deg": 270.0},
                       {"id": "decktet-2-author", "center_mm": [300.0, 100.0],
                        "angle_deg": 90.0}],
             "pyramids": []}
    record = {"calibrated": True, "pyramids": [],
              "cards": [{"id": "decktet-8-mill", "center_mm": [101.0, 100.0],
                         "angle_deg": angle_read},
                        {"id": "decktet-2-author", "center_mm": [300.0, 101.0],
                         "angle_deg": 92.0}]}
    return record, truth


def test_a_symmetric_card_read_the_other_way_up_is_right_only_when_symmetric() -> None:
    record, truth = _table(90.0)        # the Mill's long axis, its other end
    plain = score(record, truth)
    assert plain["cards_dir_n"] == 2 and plain["cards_dir_ok"] == 1 and not plain["exact"]
    sym = score(record, truth, frozenset({"decktet-8-mill"}))
    assert sym["cards_dir_ok"] == 2 and sym["exact"]


def test_a_face_down_card_counts_its_direction_only_where_the_back_has_a_top() -> None:
    truth = {"cards": [{"id": "back", "center_mm": [100.0, 100.0], "angle_deg": 270.0}],
             "pyramids": []}
    record = {"calibrated": True, "pyramids": [],
              "cards": [{"id": "back", "center_mm": [100.0, 101.0], "angle_deg": 90.0}]}
    plain = score(record, truth)          # the tarot's backs: drawn alike both ways up
    assert plain["backs_dir_n"] == 0 and plain["exact"]
    top = score(record, truth, back_top=True)
    assert top["backs_dir_n"] == 1 and top["backs_dir_ok"] == 0 and not top["exact"]
    record["cards"][0]["angle_deg"] = 268.0
    assert score(record, truth, back_top=True)["exact"]


def test_a_symmetric_card_across_its_axis_is_still_wrong() -> None:
    record, truth = _table(0.0)         # a quarter turn off: wrong at either end
    sym = score(record, truth, frozenset({"decktet-8-mill"}))
    assert sym["cards_dir_ok"] == 1 and not sym["exact"]
    # an asymmetric card read the other way up stays wrong with the set given
    record["cards"][1]["angle_deg"] = 272.0
    record["cards"][0]["angle_deg"] = 270.0
    sym = score(record, truth, frozenset({"decktet-8-mill"}))
    assert sym["cards_dir_ok"] == 1


def test_a_frame_is_blurred_by_a_defocus_over_the_renderers_usual_or_any_motion() -> None:
    assert not frame_blurred({"blur_sigma": 0.5, "motion_blur_px": 0.0})
    assert frame_blurred({"blur_sigma": 1.2, "motion_blur_px": 0.0})
    assert frame_blurred({"blur_sigma": 0.1, "motion_blur_px": 6.0})
    assert not frame_blurred({})


def test_the_whole_table_share_is_split_into_sharp_and_blurred_frames() -> None:
    record, truth = _table(272.0)
    row = score(record, truth)
    assert row["exact"]
    rows = [dict(row, group="g", blurred=False), dict(row, group="g", blurred=False),
            dict(row, group="g", blurred=True), dict(row, group="g", blurred=True, exact=False),
            dict(row, group="g", blurred=True, mat_in_view=False)]
    sums = {"g": summarise(rows, "g")}
    assert (sums["g"]["images"], sums["g"]["blurred"], sums["g"]["exact_blurred"]) == (4, 2, 1)
    assert blur_split(sums) == "g 100.0% of 2 sharp, 50.0% of 2 blurred"


def test_the_records_own_blurred_word_is_counted_against_the_truths() -> None:
    record, truth = _table(272.0)
    row = score(record, truth)
    rows = [dict(row, group="g", blurred=False, called_blurred=False),
            dict(row, group="g", blurred=False, called_blurred=True),
            dict(row, group="g", blurred=False),               # no word: not called blurred
            dict(row, group="g", blurred=True, called_blurred=True),
            dict(row, group="g", blurred=True, called_blurred=False),
            dict(row, group="g", blurred=True, called_blurred=True, mat_in_view=False)]
    sums = {"g": summarise(rows, "g")}
    assert blur_called_split(sums) == "g 1 of 2 blurred (50.0%), 1 of 3 sharp (33.3%)"


def test_pyramid_recall_pips_and_pointing_are_split_into_sharp_and_blurred_frames() -> None:
    record, truth = _table(272.0)
    base = score(record, truth)

    def row(blurred: bool, found: int, pips_ok: int, pointed: int, in_view: bool = True
            ) -> dict:
        # four pyramids a table, two of them lying
        return dict(base, group="g", blurred=blurred, mat_in_view=in_view, pyr_truth=4,
                    pyr_pred=found, pyr_tp=found, pyr_color_ok=found, pyr_pips_ok=pips_ok,
                    pyr_upright_ok=found, pyr_point_n=2, pyr_point_ok=pointed)
    rows = [row(False, 4, 4, 2), row(False, 4, 3, 2), row(True, 2, 1, 1), row(True, 3, 3, 0),
            row(True, 0, 0, 0, in_view=False)]
    sums = {"g": summarise(rows, "g")}
    assert blur_attribute_split(sums) == \
        "g recall 100.0% / 62.5%, pips 87.5% / 80.0%, pointing 100.0% / 25.0%"


def test_the_card_thread_counts_its_stages_after_the_sharpness_reading() -> None:
    from bench.vision import _threads

    # the sharpness reading comes before both threads (the pyramid finder waits for it)
    timings = {"calibrate": 2.0, "sharpness": 1.0, "undistort": 3.0, "cards": 20.0,
               "fit": 4.0, "identify": 15.0, "pyramids": 60.0, "total": 70.0}
    assert _threads(timings) == (42.0, 60.0)
    # an uncalibrated frame runs neither thread
    assert _threads({"calibrate": 9.0, "total": 9.0}) is None


def test_the_second_core_note_says_when_the_run_had_two_cores_of_its_own() -> None:
    from bench.vision import SECOND_CORE_GAIN, second_core_note

    full = second_core_note(1.78)
    assert "1.78 times" in full and "full speed" in full and "flatter" not in full
    shared = second_core_note(1.27)
    assert "only 1.27 times" in shared and "flatter the pipeline" in shared
    assert "flatter" not in second_core_note(SECOND_CORE_GAIN)
    assert second_core_note(float("nan")) == ""


def test_the_speed_table_shows_the_plain_detector_on_one_thread_and_its_gain() -> None:
    from pathlib import Path

    from bench.vision import speed_text

    t = {"n": 3, "total": [90.0, 100.0, 110.0], "stages": {}, "next": [70.0, 72.0, 74.0],
         "ref": [46.0, 48.0, 50.0], "ref_one_thread": [80.0, 84.0, 88.0]}
    text = speed_text(t, Path("yolo11n-obb-640.onnx"), "")
    assert "| plain YOLO11n-OBB 640 on one thread | 84 |" in text
    assert "| the plain detector's two threads against its one | 1.75 | |" in text
    assert "| ratio pipeline / plain detector, next frame | 1.50 | |" in text
    assert "full speed" in text
    t["ref_one_thread"] = []
    text = speed_text(t, Path("yolo11n-obb-640.onnx"), "")
    assert "one thread" not in text and "full speed" not in text


def test_a_missed_pyramid_is_lost_where_the_finders_nearest_candidate_was() -> None:
    """The score names each missed pyramid; where_lost gives the fate of the nearest traced
    candidate within WHERE_MM, "no candidate" past it, "found elsewhere" for a find the
    scoring did not pair with it."""
    from vision.pyramids.find import CandidateFate

    truth = {"cards": [], "pyramids": [
        {"color": "clear", "pips": 1, "upright": True, "base_center_mm": [100.0, 100.0]},
        {"color": "red", "pips": 2, "upright": True, "base_center_mm": [300.0, 100.0]},
        {"color": "white", "pips": 3, "upright": True, "base_center_mm": [500.0, 100.0]}]}
    record = {"calibrated": True, "cards": [], "pyramids": []}
    s = score(record, truth)
    assert s["pyr_missed_at"] == [("clear", [100.0, 100.0]), ("red", [300.0, 100.0]),
                                  ("white", [500.0, 100.0])]

    def fate(x: float, y: float, what: str) -> CandidateFate:
        return CandidateFate((x, y), "heat", 0.3, float("nan"), what)

    trace = [fate(103.0, 100.0, "second opinion"), fate(100.0, 96.0, "not read"),
             fate(300.0, 100.0 + WHERE_MM + 0.5, "thresholds"),
             fate(500.0, 105.0, "found")]
    assert where_lost(s["pyr_missed_at"], trace) == ["second opinion", "no candidate",
                                                     "found elsewhere"]
