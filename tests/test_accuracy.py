"""The accuracy benchmark as a test: explain must not fall below the figures it reached (bench/bench_accuracy.py).

The floors are the scores measured when they were set (README, "Accuracy"); a change that loses accuracy fails here.
Raise them when the matcher or the knowledge base gets better.
"""

from __future__ import annotations

import pytest

import bench_accuracy as B

INDEPENDENT_NEGATIVES_CONFIDENT_WRONG = 2
FLOORS = {  # split: (top-1 rate, top-3 rate) the matcher reached
    # top-3 372 -> 369 with phrase terms (rank 3 and 4 swapped on three texts; top-1 353 as before)
    "dev": (0.92, 0.96),
    # 78/93 and 88/93 after entries sharing one cause were merged (303 -> 248 entries, 2026-11-25); it was 80/93
    # before: the merge lost two held-back cases (docs/sweep/merge-2026-11-25.md), recorded here so that it cannot
    # fall further unnoticed
    # 80/93 and 88/93 since phrase terms (rank.py)
    "holdout": (0.86, 0.94),
    # 38/65, 51/65 after the merge (34/65, 43/65 with 303 entries, 37/65 and 46/65 with 256): fewer, wider entries
    # compete less for texts no entry was written from
    # 41/65, 51/65 with phrase terms
    "independent": (0.63, 0.78),
    # the second independent set (collected 2026-11-25 before the matcher changed, never tuned on): 10/24, 14/24;
    # 12/24, 16/24 with phrase terms
    # 17/24, 21/24 since the thirteenth set is tuned on (structured-output and Ollama-context wordings); 18/24, 20/24
    # since the twentieth was collected (the setting's names halved: a third-placed answer moved to fourth)
    "independent-2": (0.7, 0.83),
    # the third (collected 2026-11-28 by sessions that never ran the matcher): 8/23 and 12/23 on the landed matcher
    # and after that afternoon's changes alike; tuned on since that evening: 12/23 and 14/23
    "independent-3": (0.52, 0.6),
    # the fourth (collected 2026-11-28 evening by four sessions that never ran the matcher): 6/20 and 8/20 on the
    # matcher before and after the third set was tuned on alike; tuned on since late that day: 10/20 and 11/20
    # 12/20, 15/20 since the thirteenth set is tuned on
    "independent-4": (0.6, 0.75),
    # the fifth (collected late on 2026-11-28 by eight sessions that never ran the matcher): 7/13 and 12/13 before and
    # after the fourth set was tuned on alike; tuned on since the night of 2026-11-28/29: the same
    # 9/13, 13/13 since the thirteenth set is tuned on; 9/13, 12/13 since the seventeenth is (a report's wording added to
    # the empty-answer entry moved it third on lmcache#1371's text, fourth the runtime entry it names; kept: it made
    # the seventeenth's forge-relay report right first)
    "independent-5": (0.69, 0.92),
    # the sixth (collected that night by five sessions that never ran the matcher): 14/20 and 16/20 before and after
    # the fifth set was tuned on alike; tuned on since 2026-11-29
    "independent-6": (0.7, 0.8),
    # the seventh (collected 2026-11-29 by seven sessions that never ran the matcher): 4/7 and 6/7 before and after
    # the sixth set was tuned on alike; tuned on since the day after: 5/7 and 7/7
    "independent-7": (0.71, 1.0),
    # the eighth (collected 2026-11-29, day, by ten sessions that never ran the matcher, never tuned on): 9/14 and
    # 10/14 on the matcher of that morning, 10/14 and 11/14 after the seventh set was tuned on
    # 11/14 and 11/14 since the thirteenth set is tuned on
    "independent-8": (0.78, 0.78),
    # the ninth (collected 2026-11-29 by ten sessions in two rounds that never ran the matcher): 22/31 and 28/31 on
    # the matcher of that morning (74b5c7f); tuned on since the tenth was collected: the same
    # 25/31, 29/31 since the thirteenth set is tuned on
    "independent-9": (0.8, 0.93),
    # the tenth (collected 2026-11-29 by eight sessions that never ran the matcher, never tuned on): 15/24 and 19/24
    # on the session's start commit (02d6090) and after the ninth set was tuned on alike; tuned on since the eleventh
    # was collected: the same
    "independent-10": (0.62, 0.79),
    # the eleventh (collected 2026-11-29 by ten sessions that never ran the matcher): 11/18 and 14/18 on the session's
    # start commit (d5403d7) and after the tenth set was tuned on alike; tuned on since the twelfth was collected:
    # 12/18 and 14/18 (a TemplateError beside channel markup is client-channel-tags-in-content's pattern); 13/18 and
    # 16/18 since the thirteenth was collected (Transformers' "MXFP4 … requires a GPU" is an entry's message)
    "independent-11": (0.72, 0.88),
    # the twelfth (collected 2026-11-29 by ten sessions that never ran the matcher): 14/25 and 17/25 on the session's
    # start commit (861e4d9) and after the eleventh set was tuned on alike; tuned on since the thirteenth was
    # collected: 19/25 and 20/25 (entries widened with its evaluation / GRPO budget, Unsloth and Ollama wordings)
    "independent-12": (0.76, 0.8),
    # the thirteenth (collected 2026-11-30 by eleven sessions that never ran the matcher): 13/32 and 19/32 on the
    # session's start commit (7961ccc); 16/32 and 22/32 after the twelfth set was tuned on; tuned on since the
    # fourteenth was collected: 27/33 and 31/33 (one uncovered case relabelled to the entry written from it)
    "independent-13": (0.81, 0.93),
    # the fourteenth (collected 2026-11-30 by ten sessions that never ran the matcher): 14/27 and 19/27 on the
    # session's start commit (7aca30b); 16/27 and 20/27 after the thirteenth set was tuned on; tuned on since the
    # fifteenth was collected: 21/27 and 23/27 (entries widened with its reporters' wordings and messages)
    "independent-14": (0.77, 0.85),
    # the fifteenth (collected 2026-11-30 by ten sessions that never ran the matcher; 12 of its 63 real problems
    # covered): 10/12 and 11/12 on the session's start commit (acd4df7) and after the fourteenth set was tuned on
    # alike; tuned on since the sixteenth was collected: the same; 9/12 and 12/12 since the twentieth was collected (the
    # empty-answer entry's new wordings took a text about think=false ignored, labelled the reasoning-effort entry)
    "independent-15": (0.75, 0.91),
    # the sixteenth (collected 2026-11-30 by eleven sessions that never ran the matcher; 23 of its 60 real problems
    # covered): 13/23 and 16/23 on the session's start commit (ea9a460) and after the fifteenth set was tuned on
    # alike; tuned on since the seventeenth was collected: 15/23 and 18/23 (the empty-answer entry's wordings)
    "independent-16": (0.65, 0.78),
    # the seventeenth (collected 2026-11-30 by ten sessions that never ran the matcher; 26 of its 65 real problems
    # covered): 14/26 and 22/26 on the session's start commit (d5b8c2e); 16/26 and 22/26 after the sixteenth set was
    # tuned on; tuned on since the eighteenth was collected: 21/26 and 25/26; since the twenty-first was collected
    # 23/26 and 24/26 (the budget entry's empty-answer-at-length pattern outranks the structured-output entry on one text)
    "independent-17": (0.8, 0.92),
    # the eighteenth (collected 2026-11-30 by nine sessions that never ran the matcher; 38 of its 71 real problems
    # covered): 25/38 and 32/38 on the session's start commit (ee2bfcf) and after the seventeenth set was tuned on;
    # tuned on since the nineteenth was collected: 30/38 and 33/38 (a quoted message outranks shared words; the budget,
    # structured-output and Groq reasoning-field entries' wordings); 33/38 and 34/38 since the twentieth was collected
    # (the setting's names halved, the empty-answer entry's wordings)
    "independent-18": (0.86, 0.89),
    # the nineteenth (collected 2026-11-30 by seven sessions that never ran the matcher, never tuned on; 28 of its 62
    # real problems covered): 11/28 and 20/28 on the session's start commit (d974239) and after the eighteenth set was
    # tuned on; tuned on since the twentieth was collected: 16/28 and 22/28; 15/28 and 22/28 since the twenty-first was
    # collected (a text that reports think: false beside an empty answer gets the no-off-switch entry, labelled budget)
    "independent-19": (0.53, 0.78),
    # the twentieth (collected 2026-12-01 by nine sessions that never ran the matcher, never tuned on; 30 of its 61
    # real problems covered): 18/30 and 25/30 on the session's start commit (e87d60c); 20/30 and 26/30 after the
    # nineteenth set was tuned on; tuned on since the twenty-first was collected: 28/30 and 28/30 (the no-off-switch and
    # empty-answer entries' patterns, Groq's refusal of a built-in tool call)
    "independent-20": (0.93, 0.93),
    # the twenty-first (collected 2026-12-01 by ten sessions that never ran the matcher, never tuned on; 28 of its 66
    # real problems covered): 20/28 and 24/28 on the session's start commit (247ec9c); 21/28 and 25/28 after the
    # twentieth set was tuned on
    "independent-21": (0.75, 0.89),
}
# right & confident: top-1 right with high or medium confidence. Measured when issue 17's calibration landed (dev
# 287/383, held back 61/93, independent 27/65, independent-2 9/24): the words-alone rule (bench/bench_calibration.py)
# traded 29 dev answers' confidence for 65 fewer confident wrong ones on dev problems without their entry; it must not
# buy fewer confident wrong answers by calling everything low
# A description matched by words alone then needed a 0.2 lead instead of 0.15 (dev 274/383, held back 59/93): 11 dev
# answers' confidence for 12 fewer confident wrong ones without their entry (40 -> 26, bench_calibration.py) and
# none of the fresh tune split's uncovered problems answered confidently (2 -> 0)
# With phrase terms and a 0.23 lead: dev 276/383, held back 60/93, independent-2 10/24 (confident wrong without
# their entry 26 -> 23); the tune split's user wordings added to ten entries' symptoms: dev 275, held back 61;
# the Chinese glossary: dev 274, held back 60
# A provider's, proxy's or client's own error matched by a pattern in a text with no sign of gpt-oss is a lead:
# dev 273/383
RIGHT_CONFIDENT_FLOORS = {"dev": 0.71, "holdout": 0.64, "independent": 0.41, "independent-2": 0.41,
                          "independent-3": 0.21, "independent-4": 0.54, "independent-5": 0.23, "independent-6": 0.35,
                          "independent-8": 0.71, "independent-9": 0.38, "independent-10": 0.37,
                          "independent-11": 0.5, "independent-12": 0.44, "independent-13": 0.42,
                          "independent-14": 0.37, "independent-15": 0.16, "independent-16": 0.21,
                          "independent-17": 0.46, "independent-18": 0.31,
                          "independent-19": 0.1, "independent-20": 0.56,
                          "independent-21": 0.14}
# (independent-3: 5/23; independent-4: 6/20, 8/20 since it is tuned on; independent-5: 3/13; independent-6: 7/20;
# independent-8: 8/14 before and after the seventh set was tuned on; independent-9: 12/31 on 74b5c7f and since;
# independent-10: 6/24 on 02d6090 and after the ninth set was tuned on, and since; independent-11: 7/18 on d5403d7
# and after the tenth set was tuned on, 8/18 since it is tuned on, 9/18 since the thirteenth was collected;
# independent-12: 10/25 on 861e4d9 and after the eleventh set was tuned on, 12/25 since it is tuned on;
# independent-13: 8/32 on 7961ccc and after the twelfth set was tuned on, 13/33 since it is tuned on, 14/33 since the
# fifteenth was collected; independent-14: 7/27 on 7aca30b and after the thirteenth set was tuned on, 10/27 since it
# is tuned on; independent-15: 2/12 on acd4df7 and after the fourteenth set was tuned on, and since it is tuned on;
# independent-16: 5/23 on ea9a460 and after the fifteenth set was tuned on, and since it is tuned on; independent-17:
# 9/26 on d5b8c2e and after the sixteenth set was tuned on, 12/26 since it is tuned on; independent-18: 10/38 on ee2bfcf
# and after the seventeenth set was tuned on, and since it is tuned on, 12/38 since the twentieth was collected;
# independent-19: 2/28 on d974239 and after the eighteenth set was tuned on, 3/28 since it is tuned on;
# independent-20: 6/30 on e87d60c and after the nineteenth set was tuned on, 17/30 since it is tuned on (its
# texts' think: false, an empty answer at a length stop, Groq's refusal of a built-in tool: patterns now);
# independent-21: 3/28 on 247ec9c, 4/28 after the twentieth set was tuned on. Since the twentieth was collected an
# answer resting on an artifact alone needs a clear lead: independent-12 12 -> 11 (a raw-Harmony answer on an MLX
# server's text), dev 275 -> 273 (an OpenRouter text's lead was the provider's name; a SQL agent's leak). An entry's
# hardware is what
# its id or title names since the fifteenth was collected (a vendor its summary mentions no longer drops it on other
# hardware): independent-4 9 -> 11, independent-8 9 -> 10, dev 274 -> 275; a wording of the fourteenth set made one
# of the tenth's answers confident, 8 -> 9)
# uncovered cases (real gpt-oss problems no entry describes) that still get a high or medium answer: independent 19
# of 44 before issue 17, 6, then 3 (5 with a first form of phrase terms that also joined an identifier's parts);
# independent-2 24 of 61 on the landed matcher of 2026-11-23, 5, then 3, then 2; tune 1 of 95 (the tune-2 cases, as
# collected); independent-3 1 of 50; independent-4 0 of 49; independent-5 0 of 33; independent-6 3 of 40 (before and
# after the fifth set was tuned on; all three rest on an entry's signature pattern); independent-7 1 of 34 (before and
# after the sixth set was tuned on; 0 since a message shape several issues share is no evidence); independent-8 4 of
# 52 (before and after the seventh set was tuned on); independent-9 7 of 43 (on 74b5c7f, before it was read; 3 since
# a message other causes print is a lead without its issue's own setting); independent-10 4 of 57 (on 02d6090 and
# after the ninth set was tuned on; 2 since it is tuned on: a setting's name or a healthy run's notice alone is a
# lead); independent-11 3 of 56 (on d5403d7 and after the tenth set was tuned on; tuned on since the twelfth was
# collected: the same); independent-12 5 of 55 (on 861e4d9 and after the eleventh set was tuned on; tuned on since
# the thirteenth was collected: the same); independent-13 2 of 34 (on 7961ccc and after the twelfth was tuned on;
# 2 of 33 since it is tuned on); independent-14 1 of 49 (on 7aca30b and after the thirteenth was tuned on, never
# read; tuned on since the fifteenth was collected: the same); independent-15 0 of 51 (on acd4df7 and after the
# fourteenth was tuned on; tuned on since the sixteenth was collected: the same); independent-16 2 of 37 (on ea9a460
# and after the fifteenth was tuned on; tuned on since the seventeenth was collected: the same); independent-17 2 of
# 39 (on d5b8c2e and after the sixteenth was tuned on; 1 since it is tuned on: empty default fields of a pasted answer
# make no text about tools); independent-18 0 of 33 (on ee2bfcf and after the seventeenth was tuned on; tuned on since
# the nineteenth was collected: the same); independent-19 2 of 34 (on d974239 and after the eighteenth was tuned on,
# never read; tuned on since the twentieth was collected: the same); independent-20 2 of 31 (3 on e87d60c; 2 after
# the nineteenth was tuned on, never read; tuned on since the twenty-first was collected: the same); independent-21 1 of
# 38 (on 247ec9c and after the twentieth was tuned on, never read). Since the twentieth was collected an answer resting on raw Harmony alone
# (the artifact, or a pattern matching only markup) needs a clear lead: independent 4 -> 2, independent-2 2 -> 1,
# independent-8 4 -> 3, independent-10 2 -> 1, independent-12 5 -> 3, independent-16 2 -> 1, independent-17 1 -> 0.
# The first set's rose from 3 to 4 when the thirteenth was tuned on: wordings added to the structured-output
# entry changed which entry is second on one uncovered text, and the margin rules then left its first answer
# (raw-harmony-in-content-no-parser) medium; reported, not tuned away (it is a set nobody may tune on). Since the
# twenty-first was collected an empty answer beside a length stop is the budget entry's pattern: independent-14 1 -> 2
# (vLLM #29641, whose three words of reasoning did not spend the budget; no entry describes it)
UNCOVERED_CONFIDENT_WRONG = {"independent": 2, "independent-2": 1, "tune": 1, "independent-3": 1, "independent-4": 0,
                             "independent-5": 0, "independent-6": 3, "independent-7": 0, "independent-8": 3,
                             "independent-9": 2, "independent-10": 1,
                             "independent-11": 3, "independent-12": 3, "independent-13": 2, "independent-14": 2,
                             "independent-15": 0, "independent-16": 1, "independent-17": 0,
                             "independent-18": 0, "independent-19": 2, "independent-20": 2,
                             "independent-21": 1}
# leave-one-out on the dev split: each case matched without its own entries (every confident answer is wrong)
# 23 -> 22 with the Chinese glossary, 21 since shared message shapes, 20 since signatures.context, 17 since a
# quoted message of another engine's issue drops and entries sharing a message each need their own setting; 18 since
# the thirteenth set was tuned on (the budget entry's new wording moved a runner-up: one dev text left without its
# own entries now gets raw-harmony-in-content-no-parser medium on its token ids); 15 since the twentieth was collected
# (an answer resting on raw Harmony alone needs a clear lead)
DEV_LEAVE_ONE_OUT_CONFIDENT_WRONG = 15
# the triage's first class fits the labels (knowledge/classes ids) of problems explain does not know: the dev and
# tune splits explained without their own entries (bench_calibration.py --triage: 275/383 and 122/150), the uncovered
# cases of the second independent set (34/61 when the triage landed, 38/61 before the 'rejected' failure kind and the
# widened class patterns, 39/61 then, 38/61 at its last reading as a test set; 51/61 since it is tuned on, 2026-11-28)
# and of the third (27/50 on the landed matcher of 2026-11-27, 28/50 at its last reading as a test set; 36/50 since
# it is tuned on, the evening of 2026-11-28) and of the fourth (27/49 before and after the third was; 35/49 since
# it is tuned on, late on 2026-11-28; 37/49 since the fifth was) and of the fifth (22/33 before and after the fourth
# was; 27/33 since it is tuned on, the night of 2026-11-28/29) and of the sixth, never tuned on (26/40 before the fifth
# was tuned on, 25/40 after; 29/40 since it is tuned on, 2026-11-29); leave-one-out dev 280/383 and tune 125/150 since
# the 'setup' patterns, dev 281/383 since routine log lines are blanked; and of the seventh (25/34 before and after
# the sixth was tuned on; 27/34 since it is tuned on, 2026-11-29) and of the eighth, never tuned on (37/52 before and
# after the seventh was tuned on; 46/52 since it is tuned on, the ninth's day) and of the ninth (32/42 on 74b5c7f and
# after the eighth was tuned on; 37/42 since it is tuned on, the tenth's day) and of the tenth, never tuned on (39/53
# on 02d6090, 38/53 after the ninth was tuned on; 42/53 since it is tuned on) and of the eleventh (37/49 on d5403d7
# and after the tenth was tuned on; the same since it is tuned on) and of the twelfth (37/53 on 861e4d9 and after
# the eleventh was tuned on; 40/53 since it is tuned on: an HTTP status said in words and a quoted rate-limit answer
# are the text's status; 41/53 since the thirteenth is tuned on) and of the thirteenth (21/32 on 7961ccc and after
# the twelfth was tuned on; 22/31 since it is tuned on: llama-server's example_format start-up line is no leak) and of
# the fourteenth (37/46 on 7aca30b and after the thirteenth was tuned on; 40/46 since it is tuned on) and of the
# fifteenth (32/49 on acd4df7 and after the fourteenth was tuned on; 39/49 since it is tuned on: a failure the text
# rules out is not its failure, a perf issue and falling draft acceptance or cache hits are slowness, an engine's
# config refused at start is a load failure) and of the sixteenth (23/35 on ea9a460 and after the fifteenth was tuned
# on; 29/35 since it is tuned on: vLLM's cache-block memory check is out of memory, empty tokens, nothing returned,
# running forever and a perf drop are failure kinds, a loop of tool calls is a tool-call failure, a process id is no
# HTTP status and logged launch settings state no failure) and of the
# seventeenth (25/38 on d5b8c2e and after the sixteenth was tuned on; 27/38 since it is tuned on: "run out of CUDA
# memory" is out of memory, "structured-output" and "schema-valid JSON" name structured output) and of the eighteenth
# (24/31 on ee2bfcf and after the seventeenth was tuned on; 25/31 since it is tuned on: a model that "kept writing"
# or "did not answer in four minutes" is looping or slow, Japanese words for slow and never finishing) and of the
# nineteenth (23/32 on d974239 and after the eighteenth was tuned on; 26/32 since it is tuned on: a turn that ended
# inside the reasoning, gpt-oss's citation marks, llama.cpp's wrong-array-length loader error) and of the twentieth,
# never tuned on then (21/31 on e87d60c and after the nineteenth was tuned on; 25/31 since it is tuned on: a schema
# validator's refusal and a failed JSON parse are structured output, 410 Gone is a route, a tally of none is no crash,
# a tool's name with "freeze" in it no hang), and of the twenty-first, never tuned on (29/37 on 247ec9c and after the
# twentieth was tuned on; one of its 38 uncovered problems fits no class). Since the twentieth was collected the third's
# rose to 38/50, the sixteenth's to 30/35, the eighteenth's to 26/31. Since the fifteenth was
# collected: a speed named without a judgement (latency, tok/s in an eval log) is no slow failure (the third's 36 ->
# 37, the fourth's 40 -> 41, the twelfth's 41 -> 43, the thirteenth's 22 -> 23), Harmony markup in a tool call is a
# tool-call problem first (the tenth's 42 -> 43, the thirteenth's 23 -> 24, leave-one-out dev 288 -> 289, tune 126 ->
# 127), 'the inference result … is incorrect' is garbage (the third's 35 -> 36). The second's fell from 51
# to 50 when the thirteenth was tuned on (a near-tie of the neighbours' vote on a text that names no failure).
# Garbage called garbage beside Harmony markup is garbage first since the thirteenth was collected (the fourth's
# 39 -> 40, the eighth's 45 -> 46, the eleventh's 37 -> 38). The third's fell to 35/50 when a class the text says came before
# one the neighbours guessed and "fails to start" became a load failure (from 36). In the eleventh set's session the
# eighth's fell to 45/52 (an Unsloth tutorial's "pip install --upgrade" in its set-up was its install-build answer;
# set-up steps no longer name the phase) and the fourth's rose to 39/49
TRIAGE_LEAVE_ONE_OUT_FLOORS = {"dev": 0.72, "tune": 0.82}
TRIAGE_FITS_FLOORS = {"independent-2": 50, "independent-3": 38, "independent-4": 41, "independent-5": 27,
                      "independent-6": 29, "independent-7": 27, "independent-8": 46, "independent-9": 37,
                      "independent-10": 43, "independent-11": 38, "independent-12": 43, "independent-13": 24,
                      "independent-14": 40, "independent-15": 39, "independent-16": 30,
                      "independent-17": 27, "independent-18": 26, "independent-19": 26, "independent-20": 25,
                      "independent-21": 29}


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


@pytest.mark.parametrize("split", sorted(UNCOVERED_CONFIDENT_WRONG))
def test_unknown_problems_get_no_confident_answer_more_often(summary, split):
    assert summary[split]["uncovered_confident_wrong"] <= UNCOVERED_CONFIDENT_WRONG[split], summary[split]


# look-alikes answered with high or medium confidence: none on the second to the eighth set; 1 of 22 on the ninth as
# collected (74b5c7f, before it was read), 0 since Harmony-like markup under another family's name is no sign of
# gpt-oss; none of the tenth's 27 (02d6090 and after); 1 of the eleventh's 27 (d5403d7 and after, and since it is
# tuned on); none of the twelfth's 33 (861e4d9 and after); none of the thirteenth's 20 (7961ccc and after); none of
# the fourteenth's 20 (7aca30b and after, and since it is tuned on); none of the fifteenth's 20 (acd4df7 and after,
# and since it is tuned on); none of the sixteenth's 20 (ea9a460 and after, and since it is tuned on); none of the
# seventeenth's 20 (d5b8c2e and after, and since it is tuned on); none of the eighteenth's 20 (ee2bfcf and after,
# and since it is tuned on); none of the nineteenth's 20 (d974239 and after, and since it is tuned on); none of the
# twentieth's 18 (e87d60c and after, and since it is tuned on); none of the twenty-first's 18 (247ec9c and after,
# never read)
LOOK_ALIKES_CONFIDENT_WRONG = {"independent-2": 0, "independent-3": 0, "independent-4": 0, "independent-5": 0,
                               "independent-6": 0, "independent-7": 0, "independent-8": 0, "independent-9": 0,
                               "independent-10": 0, "independent-11": 1, "independent-12": 0, "independent-13": 0,
                               "independent-14": 0, "independent-15": 0, "independent-16": 0,
                               "independent-17": 0, "independent-18": 0, "independent-19": 0, "independent-20": 0,
                               "independent-21": 0}


@pytest.mark.parametrize("split", sorted(LOOK_ALIKES_CONFIDENT_WRONG))
def test_look_alikes_of_the_newer_independent_sets_get_no_confident_answer(summary, split):
    got = summary[split]
    assert got["negatives"] >= 15 and got["negatives_confident_wrong"] <= LOOK_ALIKES_CONFIDENT_WRONG[split], got


@pytest.mark.parametrize("split", sorted(TRIAGE_LEAVE_ONE_OUT_FLOORS))
def test_the_triage_names_the_kind_of_an_unknown_problem(split):
    import bench_calibration

    fits, n, _, _ = bench_calibration.triage_loo(split)
    assert n >= 60 and fits / n >= TRIAGE_LEAVE_ONE_OUT_FLOORS[split], (fits, n)


@pytest.mark.parametrize("split", sorted(TRIAGE_FITS_FLOORS))
def test_the_triage_fits_uncovered_independent_problems(summary, split):
    got = summary[split]
    assert got["triage_fits"] >= TRIAGE_FITS_FLOORS[split], got


def test_problems_without_their_entry_get_few_confident_answers():
    import bench_calibration

    wrong, _ = bench_calibration.leave_one_out()
    assert wrong <= DEV_LEAVE_ONE_OUT_CONFIDENT_WRONG


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
