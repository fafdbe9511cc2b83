"""The accuracy benchmark as a test: explain must not fall below the figures it reached (bench/bench_accuracy.py).

The floors are the scores measured when they were set (README, "Accuracy"); a change that loses accuracy fails here.
Raise them when the matcher or the knowledge base gets better.
"""

from __future__ import annotations

import pytest

import bench_accuracy as B

INDEPENDENT_NEGATIVES_CONFIDENT_WRONG = 2
FLOORS = {  # split: (top-1 rate, top-3 rate) the matcher reached
    "dev": (0.92, 0.97),
    "holdout": (0.86, 0.94),  # 80/93 and 88/93 after the fourth sweep (303 entries, new held-back cases)
    # 34/65, 43/65: this set fell as entries were added (37/65 and 46/65 with 256 entries): more entries compete
    # for texts no entry was written from; the floor records it so that it cannot fall further unnoticed
    "independent": (0.52, 0.66),
}
# right & confident: top-1 right with high or medium confidence (measured when the calibration of issue 17 landed:
# dev 317/383, held back 68/93, independent 30/65): calibration must not buy fewer confident wrong answers by calling
# everything low
RIGHT_CONFIDENT_FLOORS = {"dev": 0.82, "holdout": 0.73, "independent": 0.46}
# independent uncovered cases (real gpt-oss problems no entry describes) that still get a high or medium answer:
# 19 of 44 before issue 17's calibration, 17 after; it must not rise again
INDEPENDENT_UNCOVERED_CONFIDENT_WRONG = 17


@pytest.fixture(scope="module")
def summary():
    return B.summary(B.run(B.load_cases()))


@pytest.mark.parametrize("split", sorted(FLOORS))
def test_top1_and_top3_do_not_fall(summary, split):
    got = summary[split]
    if not got["cases"]:
        pytest.fail(f"no {split} cases: bench/cases is incomplete")
    top1, top3 = FLOORS[split]
    assert got["top1_rate"] >= top1, got
    assert got["top3_rate"] >= top3, got


@pytest.mark.parametrize("split", sorted(RIGHT_CONFIDENT_FLOORS))
def test_right_answers_keep_their_confidence(summary, split):
    assert summary[split]["right_confident_rate"] >= RIGHT_CONFIDENT_FLOORS[split], summary[split]


def test_unknown_problems_get_no_confident_answer_more_often(summary):
    assert summary["independent"]["uncovered_confident_wrong"] <= INDEPENDENT_UNCOVERED_CONFIDENT_WRONG, \
        summary["independent"]


def test_no_confident_answer_on_negatives(summary):
    assert summary["dev"]["negatives"] + summary["holdout"]["negatives"] >= 20
    assert summary["dev"]["negatives_confident_wrong"] == 0, summary["dev"]
    assert summary["holdout"]["negatives_confident_wrong"] == 0, summary["holdout"]
    # the independent negatives were never tuned on; this is the count measured when the set was added (README)
    assert summary["independent"]["negatives_confident_wrong"] <= INDEPENDENT_NEGATIVES_CONFIDENT_WRONG, \
        summary["independent"]


def test_the_benchmark_is_large_enough(summary):
    assert summary["all"]["cases"] >= 150
