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
    # 78/93 and 88/93 after entries sharing one cause were merged (303 -> 248 entries, 2026-11-25); it was 80/93
    # before: the merge lost two held-back cases (docs/sweep/merge-2026-11-25.md), recorded here so that it cannot
    # fall further unnoticed
    "holdout": (0.83, 0.94),
    # 38/65, 51/65 after the merge (34/65, 43/65 with 303 entries, 37/65 and 46/65 with 256): fewer, wider entries
    # compete less for texts no entry was written from
    "independent": (0.58, 0.78),
}


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


def test_no_confident_answer_on_negatives(summary):
    assert summary["dev"]["negatives"] + summary["holdout"]["negatives"] >= 20
    assert summary["dev"]["negatives_confident_wrong"] == 0, summary["dev"]
    assert summary["holdout"]["negatives_confident_wrong"] == 0, summary["holdout"]
    # the independent negatives were never tuned on; this is the count measured when the set was added (README)
    assert summary["independent"]["negatives_confident_wrong"] <= INDEPENDENT_NEGATIVES_CONFIDENT_WRONG, \
        summary["independent"]


def test_the_benchmark_is_large_enough(summary):
    assert summary["all"]["cases"] >= 150


def test_a_label_naming_a_merged_entry_scores_the_wider_entry():
    # bench/cases keep the ids they were labelled with; an id merged into a wider entry ('replaces') counts as it
    case = B.Case("merged-alias", "", "error", "Harmony parsing fell back to raw text decoding",
                  ["trtllm-raw-harmony-in-content"], False, "test")
    (result,) = B.run([case])
    assert case.expect == ["raw-harmony-in-content-no-parser"] and result.top1
