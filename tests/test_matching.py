"""Matching: every entry's own signatures find it; unrelated errors find nothing confident."""

from __future__ import annotations

import re

import pytest

from gptoss_doctor import kb
from gptoss_doctor.explain import match as matching
from gptoss_doctor.explain import explain_text

ENTRIES = kb.load()
HEADLINE = "openai_harmony.HarmonyError: Unexpected token 12606 while expecting start token 200006"


def _ids(matches):
    return [m.entry.id for m in matches]


def test_headline_ranks_stale_generation_config_first(vocab_dir):
    ex = explain_text(HEADLINE, vocab=str(vocab_dir))
    top = ex.matches[0]
    assert top.entry.id == "stale-generation-config-call-token" and top.confidence == "high"
    assert any("200012" in f for f in top.entry.fix_lines())
    assert {t.id: t.text for t in ex.tokens} == {12606: "comment", 200006: "<|start|>"}
    assert ex.origin == "server" and "Harmony parser" in ex.origin_detail


@pytest.mark.parametrize("text", [
    "ModuleNotFoundError: No module named 'pandas'",
    "OSError: [Errno 28] No space left on device: '/var/lib/docker/overlay2'",
    "KeyboardInterrupt",
    "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='example.com', port=443): Max retries exceeded",
    "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
    "the weather is nice today and I like apples",
    "PermissionError: [Errno 13] Permission denied: '/etc/shadow'",
])
def test_unrelated_errors_get_no_high_or_medium_match(text):
    found = matching.match_text(text)
    assert not [m for m in found if m.confidence in ("high", "medium")], [(m.entry.id, m.score) for m in found]


@pytest.mark.parametrize("query,expected", [
    ("the model never sees the code interpreter output when streaming the responses api",
     "vllm-responses-streaming-code-interpreter-output-lost"),
    ("streamed tool call arguments are duplicated with lmdeploy", "lmdeploy-streaming-tool-args-duplicated"),
    ("air-gapped server cannot download the vocab file", "harmony-vocab-not-loadable"),
])
def test_free_text_symptoms_find_their_entry(query, expected):
    found = matching.match_text(query)
    assert found and found[0].entry.id == expected, [(m.entry.id, round(m.score, 2)) for m in found]
    # a description that never names gpt-oss is a lead (shown first) but not a confident diagnosis: real
    # reports of other models' bugs use the same words (bench/cases negatives)
    assert found[0].confidence in ("low", "medium")
    found = matching.match_text(query + " (gpt-oss-20b)")
    assert found[0].entry.id == expected
    # named gpt-oss, it is a diagnosis when the entry leads the next one clearly (WORDS_LEAD); a close second
    # keeps it a lead, and then it says so
    lead = found[0].score - (found[1].score if len(found) > 1 else 0.0)
    if lead >= matching.WORDS_LEAD:
        assert found[0].confidence in ("high", "medium")
    else:
        assert found[0].confidence == "low" and any("a lead to compare" in ev for ev in found[0].evidence)


def test_description_without_gptoss_is_a_lead_not_a_diagnosis():
    # llama-cpp-python#1805, a real report about another model that shares an entry's words
    found = matching.match_text("Assistant message with tool_calls and without content raises an error")
    assert not [m for m in found if m.confidence in ("high", "medium")], [(m.entry.id, m.score) for m in found]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.id)
def test_every_message_signature_finds_its_entry(entry):
    for msg in entry.messages:
        found = matching.match_text(msg, limit=5)
        # a message other causes print too (signatures.context), quoted without a sign of this issue's setting, is a
        # lead that says so: it may rank below entries whose words resemble it, all of them leads
        alone = entry.context and not any(re.search(p, " ".join(msg.lower().split()), re.I) for p in entry.context)
        top = _ids(found[:5] if alone else found[:3])
        assert entry.id in top, f"{msg!r} -> {[(m.entry.id, round(m.score, 2)) for m in found]}"
        mine = next(m for m in found if m.entry.id == entry.id)
        if alone:
            assert mine.confidence == "low" and any("other causes print" in ev for ev in mine.evidence), msg
            # ... and nothing is confident on words: only an issue that quotes or matches the same message itself
            # (the common cause of a message this one shares: an old runtime's "invalid ggml type 39")
            assert not [m for m in found if m.confidence in ("high", "medium")
                        and not any(ev.startswith(("the text quotes the known message", "the text matches this issue's "
                                                   "pattern", "the text has the known message")) for ev in m.evidence)], msg
        else:
            assert mine.confidence in ("high", "medium")


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.patterns], ids=lambda e: e.id)
def test_every_pattern_signature_matches_a_real_example(entry):
    examples = entry.messages + entry.examples
    for pat in entry.patterns:
        rx = re.compile(pat, re.I)
        assert any(rx.search(x) for x in examples), f"pattern {pat!r} of {entry.id} matches none of its quoted messages"


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.examples], ids=lambda e: e.id)
def test_every_example_finds_its_entry(entry):
    for text in entry.examples:
        found = matching.match_text(text, limit=5)
        assert entry.id in _ids(found[:3]), f"{text[:80]!r} -> {[(m.entry.id, round(m.score, 2)) for m in found]}"


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.symptoms], ids=lambda e: e.id)
def test_every_entry_is_found_by_one_of_its_symptoms(entry):
    best = []
    for s in entry.symptoms:
        found = matching.match_text(s, limit=5)
        if entry.id in _ids(found[:3]):
            return
        best.append((s, _ids(found[:3])))
    pytest.fail(f"no symptom of {entry.id} finds it: {best}")


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.token_ids], ids=lambda e: e.id)
def test_token_signatures_are_real_ids(entry):
    from gptoss_doctor.harmony.tokens import VOCAB_SIZE

    assert all(0 <= t < VOCAB_SIZE for t in entry.token_ids)


def test_engine_hint_breaks_ties_between_engines():
    text = "(APIServer pid=1) ERROR 08-07 12:00:01 [serving_chat.py:1001] openai_harmony.HarmonyError: unexpected tokens remaining in message header: Some(\"to=functions.web-browsing\")"
    found = matching.match_text(text)
    assert found[0].confidence == "high"
    assert "vllm" in found[0].entry.engines


def test_ignore_eos_variant_is_not_the_stale_config():
    found = matching.match_text("vllm bench serve --ignore-eos: openai_harmony.HarmonyError: Unexpected token 200002 "
                                "while expecting start token 200006")
    assert found[0].entry.id == "ignore-eos-return-token-200002" and found[0].confidence in ("high", "medium")


def test_findings_map_to_entries():
    for fid in ("probe.harmony_error", "probe.harmony_leak", "probe.tools.stream_duplicated", "probe.tools.no_parser"):
        assert kb.by_finding(fid), fid


@pytest.mark.parametrize("text, cls", [
    ("用vllm跑gpt-oss-20b，显存不足，怎么办", "oom"),             # "not enough VRAM"
    ("gpt-oss-20b 输出乱码", "garbage-output"),                    # "outputs garbled text"
    ("ollama 的 gpt-oss 没有解析思考过程", "empty-or-reasoning-only"),  # "did not parse the thinking process"
])
def test_chinese_failure_words_are_read(text, cls):
    # reports on Chinese-language trackers name the failure in Chinese: the glossary gives the triage its English
    got = explain_text(text, allow_download=False)
    assert got.triage and got.triage[0].cls.id == cls, [h.cls.id for h in got.triage]


@pytest.mark.parametrize("text, cls", [
    ("gpt-oss-20b в vLLM: не хватает памяти при загрузке", "oom"),                    # Russian
    ("gpt-oss-20b qua Ollama trả về phản hồi trống", "empty-or-reasoning-only"),      # Vietnamese
    ("gpt-oss-20b con llama-server devuelve caracteres extraños", "garbage-output"),  # Spanish
    ("gpt-oss-20b in LM Studio: Endlosschleife nach dem ersten Turn", "looping-slow"),  # German
])
def test_other_languages_failure_words_are_read(text, cls):
    got = explain_text(text, allow_download=False)
    assert got.triage and got.triage[0].cls.id == cls, [h.cls.id for h in got.triage]


@pytest.mark.parametrize("text, english", [
    ("el servidor es muy lento", "slow"),
    ("un ataque violento", ""),                 # "lento" inside another word is no word of its own
    ("это зависит от версии", ""),              # "depends on", not "hangs" (зависает)
    ("сервер падает и выдаёт мусорный текст", "crash; garbage gibberish output"),  # Russian stems take endings
    ("显存不足", "out of memory"),
])
def test_glossary_words_are_whole_words_outside_cjk(text, english):
    from gptoss_doctor.explain.parse import gloss
    assert gloss(text) == english


@pytest.mark.parametrize("text, cls", [
    # a refused parameter: the reasoning field it names is what was refused, not a missing answer (litellm#14163)
    ("litellm.exceptions.UnsupportedParamsError: litellm.UnsupportedParamsError: groq does not support parameters: "
     "['reasoning_effort'], for model=openai/gpt-oss-120b.", "request-rejected"),
    ("'messages.1' : for 'role:assistant' the following must be satisfied[('messages.1' : property "
     "'reasoning_content' is unsupported)]", "request-rejected"),
    ('ValueError("Harmony does not support reasoning_effort=\'none\'")', "request-rejected"),
    # a chat template that fails on the request's tools, behind a bare 500 (zed#35694)
    ('Ollama Error: template: :108:130: executing "" at <index $prop.Type 0>: error calling index: reflect: slice '
     "index out of range (status code: 500)", "request-rejected"),
    ('{"error":{"message":"Unsupported model type: gpt_oss","type":"internal_error"}}', "load-failure"),
    ("v0.13.2: thinking loops with gpt-oss:20b in Open WebUI", "looping-slow"),
    ("Performance degradation with -ctk / -ctv q8_0 using GPT OSS 20B", "looping-slow"),
    # brave-browser#51761: LM Studio logs a request to a path it does not serve, on a line with no "error" word
    ("Leo fails with LMstudio and gpt-oss\n2026-01-05 10:04:22 [ERROR]\n Unexpected endpoint or method. (POST /). "
     "Returning 200 anyway", "route-missing"),
    ("An unexpected error occurred while generating the content: No generation chunks were returned",
     "empty-or-reasoning-only"),
    ("Sometimes the model returns stammered responses, tested in gpt-oss-20b, MLX", "garbage-output"),
    ("The quality of the output is terrible. The output degrades past the first paragraph.", "garbage-output"),
    # a Latin word written against Chinese characters is still a word: "会oom" says out of memory
    ("gpt-oss 20B lora 微调，在A100上占用大概为50，但是为什么4*3090 24G会oom", "oom"),
    # foundry-local#207, sglang#17839: output no healthy model writes, said in other words
    ("I'm able to download and start gpt-oss-20b in Foundry Local, but when prompted with a simple Hello it just "
     "returns random chars, spaces and words back for several minutes.", "garbage-output"),
    ("enabling piecewise cuda graph would degrade the accuracy of gpt-oss-120b", "garbage-output"),
    # NaN logits sample token 0 ("!") inside a Harmony frame: the output is garbage, the markup only its frame
    # (TensorRT-LLM #8713's EAGLE3 "<|channel|>!!!…" loop is labelled garbage-output)
    ('"content": "<|channel|>!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"', "garbage-output"),
    # LM Studio's loader refusing a model that does not fit
    ("[error] Error: Model loading aborted due to insufficient system resources. gpt-oss-120b", "oom"),
    # ollama#13751: a model that falls back to the CPU is slow, not broken
    ("Ollama switches to CPU usage in Codex-CLI 0.86.0 after 10K input token is reached with gpt-oss:120b",
     "looping-slow"),
    # langchain-aws#571: LangChain's structured-output helper named
    ("The 'with_structured_output' method (ChatBedrockConverse) is not working for gpt-oss-20b", "structured-output"),
    # a request or a server that stops answering with no error: a hang
    ("I run gpt-oss-120b with vllm on 2x RTX 3090 and after about 20 requests the server just hangs, no error in "
     "the log", "looping-slow"),
    ("ollama run gpt-oss:20b freezes after the second question and never returns", "looping-slow"),
])
def test_the_failure_the_text_states_picks_the_class(text, cls):
    got = explain_text(text, allow_download=False)
    assert got.triage and got.triage[0].cls.id == cls, [h.cls.id for h in got.triage]


@pytest.mark.parametrize("text", [
    "gpt-oss-120 tinygemm2_cuda.cu 64 - invalid argument",      # a CUDA error, not a refused request
    "vllm: error: unrecognized arguments: --tool-server demo",   # a command line's flag, not a request's
])
def test_argument_errors_that_are_no_refused_request(text):
    got = explain_text(text, allow_download=False)
    assert "rejected" not in got.facets.failure
    assert not got.triage or got.triage[0].cls.id != "request-rejected", [h.cls.id for h in got.triage]


def test_a_quoted_field_refused_by_name_is_a_rejected_request():
    # req-llm#772: Groq refuses the reasoning field a client sends back on the next turn
    got = explain_text("follow-up messages are rejected with an error indicating that `reasoning_content` is "
                       "unsupported", allow_download=False)
    assert "rejected" in got.facets.failure
    assert got.triage[0].cls.id == "request-rejected", [h.cls.id for h in got.triage]


def test_markdown_escapes_copied_from_an_issue_are_read_without_them():
    # GitHub's editor writes reasoning\_content and \<reasoning\>: the words are the same as without the escapes
    plain = explain_text("'messages.1' : property 'reasoning_content' is unsupported", allow_download=False)
    escaped = explain_text("'messages.1' : property 'reasoning\\_content' is unsupported", allow_download=False)
    assert "rejected" in escaped.facets.failure
    assert [m.entry.id for m in escaped.matches] == [m.entry.id for m in plain.matches]
    assert [h.cls.id for h in escaped.triage] == [h.cls.id for h in plain.triage]


def test_markdown_escapes_in_a_file_or_a_pipe_are_read_without_them():
    # `pbpaste | gptoss-doctor explain` reads a stream, not a text argument: the escapes go the same way
    import io

    from gptoss_doctor.explain import explain_stream

    got = explain_stream(io.BytesIO("follow-up turns fail: property 'reasoning\\_content' is unsupported\n".encode()),
                         allow_download=False)
    assert "rejected" in got.facets.failure
    assert got.triage[0].cls.id == "request-rejected", [h.cls.id for h in got.triage]


def test_the_glossary_states_the_failure():
    # lmdeploy#4147: "over the token (limit) makes the server restart", said in Chinese
    got = explain_text("[Bug] gpt-oss-120b 超过token 导致服务器重启", allow_download=False)
    assert {"context-length", "engine-not-ready"} <= {h.cls.id for h in got.triage}, [h.cls.id for h in got.triage]


@pytest.mark.parametrize("text, hang", [
    ("after about 20 requests the vLLM server just hangs", True),
    ("the request gets stuck at 'prefill' forever", True),
    ("gpt-oss-20b stops responding after a few turns", True),
    ("hang on, gpt-oss-20b answers fine on ollama", False),
    ("I am stuck with llamaindex and bedrock", False),
])
def test_a_hang_is_a_failure_kind_of_its_own(text, hang):
    got = explain_text(text, allow_download=False)
    assert ("hang" in got.facets.failure) is hang, got.facets.failure


def test_a_description_that_says_error_is_no_log_line():
    # "no error in the log" is the user's prose: no line was logged, and nothing says which component failed
    got = explain_text("I run gpt-oss-120b on 2x RTX 3090 with vllm 0.11 and after about 20 requests the server "
                       "just hangs, GPU utilisation 100%, no error in the log", allow_download=False)
    assert got.parsed.errors == []
    assert got.origin == "unknown" and "names vLLM" in got.origin_detail and "logged" not in got.origin_detail
    # a real log line of the engine still is one
    logged = explain_text("(APIServer pid=1) ERROR 10-28 03:12:55 [serving_chat.py:1145] Error in chat completion "
                          "stream generator.\nvllm serve openai/gpt-oss-20b", allow_download=False)
    assert logged.parsed.errors and logged.origin_detail == "vLLM logged it"


def test_harmony_quoted_by_a_parser_error_is_a_parse_failure():
    # lmstudio-js#493: the parser's error quotes the Harmony it could not read; nothing leaked into an answer
    text = ('Failed to regenerate message\nFailed to parse tool call: Expected "<|message|>", but got "to=function" '
            "at index 89.")
    got = explain_text(text, allow_download=False)
    assert not got.artifacts and "leak" not in got.facets.failure
    assert "harmony-parse" in [h.cls.id for h in got.triage]
    assert got.matches[0].entry.id == "lmstudio-tool-call-parse-expected-message"
    assert got.matches[0].confidence == "high"
    # without its entry, the other fault of the same parser (a tool name with a space: 'but got "Search <|co"') is
    # no diagnosis: its quoted Harmony differs, so neither its message's shape nor its pattern matches
    rest = [e for e in kb.load() if e.id != "lmstudio-tool-call-parse-expected-message"]
    alone = explain_text(text, allow_download=False, entries=rest)
    assert not alone.matches or alone.matches[0].confidence == "low", \
        [(m.entry.id, m.confidence) for m in alone.matches[:2]]
    # a leak a user reports in words, with "expected" nearby, is still a leak
    leak = explain_text("Instead, thinking content is embedded within the main response body using channel tags like "
                        "<|channel|>analysis<|message|>, mixed with the final output. This breaks the expected "
                        "streaming workflow.", allow_download=False)
    assert [a.kind for a in leak.artifacts] == ["harmony-leak"]


@pytest.mark.parametrize("text, cls", [
    # a provider's rate limit is the provider's own answer: the layer is the class (status 429, also in Chinese)
    ("Error: OpenAI: gpt-oss-120b (free) - 429 Provider returned error", "proxy-wrapped"),
    ("用 openrouter 调 gpt-oss-120b:free，中文提示词总是返回 429 状态码", "proxy-wrapped"),
    ("RuntimeError: CUDA error: device-side assert triggered while running gpt-oss-20b generate()", "kernel-hardware"),
    ("llama-server with gpt-oss-20b: srv operator(): http client error: Failed to read connection", "unreachable"),
    ("Ich habe viele Probleme mit dem StructuredOutput Feature beim GPT-OSS Modell", "structured-output"),
    ("langchain-ollama error for strict parameter with gpt-oss:20b", "request-rejected"),
    ("Response API streaming with gpt-oss-20b doesn't stop when the request is cancelled", "responses-api"),
    ("after fine-tuning, gpt-oss-20b gives irrelevant responses to simple questions", "garbage-output"),
    # a whole machine that freezes while a model loads has run out of memory; it is not a stuck request
    ("reloading gpt-oss-20b with the max context in LM Studio freezes the whole Mac", "oom"),
    ("the bundled ollama 0.9 is not capable to run newer models like gpt-oss", "load-failure"),
])
def test_what_unseen_reports_show_picks_the_class(text, cls):
    got = explain_text(text, allow_download=False)
    assert got.triage and got.triage[0].cls.id == cls, [h.cls.id for h in got.triage]


def test_a_crash_is_a_kernel_or_hardware_fault_only_where_the_text_names_one():
    # of 17 labelled crashes that name no GPU, kernel or driver, one was a kernel or hardware fault
    plain = explain_text("BrowserOS keeps crashing when I use gpt-oss:20b in agent mode", allow_download=False)
    assert "crash" in plain.facets.failure
    assert all(h.cls.id != "kernel-hardware" or "failure: crash" not in h.why for h in plain.triage), \
        [(h.cls.id, h.why) for h in plain.triage]
    gpu = explain_text("vLLM crashes with CUDA illegal memory access on gpt-oss-120b", allow_download=False)
    assert gpu.triage[0].cls.id == "kernel-hardware"
    fa = explain_text("With OLLAMA_FLASH_ATTENTION=1 the server crashes on gpt-oss:20b", allow_download=False)
    assert fa.triage[0].cls.id == "kernel-hardware", [h.cls.id for h in fa.triage]


def test_one_harmony_token_named_in_a_sentence_is_no_leak():
    # pocketpal-ai#735's shape: the user writes about <|end|>; no Harmony reached an answer
    got = explain_text("GPT-OSS-20B: the text after <|end|> is not shown, only the reasoning. <|end|> only ends the "
                       "reasoning part", allow_download=False)
    assert "leak" not in got.facets.failure and not any(e.kind == "harmony-leak" for e in got.parsed.errors)
    assert got.triage[0].cls.id == "empty-or-reasoning-only", [h.cls.id for h in got.triage]
    leaked = explain_text('"content": "<|channel|>analysis<|message|>We need to answer.<|end|>"', allow_download=False)
    assert "leak" in leaked.facets.failure


def test_the_transcript_of_a_local_generate_call_is_no_leak():
    # transformers' generate() with a TextStreamer prints the Harmony transcript by design (no server, no parser)
    text = ("_ = model.generate(**inputs, max_new_tokens=64, streamer=TextStreamer(tokenizer))\n"
            "Output: <|start|>assistant<|channel|>analysis<|message|>The user asks how are you.<|end|>\n"
            "after fine-tuning, gpt-oss gives irrelevant responses")
    got = explain_text(text, allow_download=False)
    assert not got.artifacts and "leak" not in got.facets.failure
    assert got.triage[0].cls.id == "garbage-output", [h.cls.id for h in got.triage]
    # the same transcript returned by a server is a leak
    served = explain_text('{"choices":[{"message":{"content":"<|channel|>analysis<|message|>The user asks.<|end|>'
                          '<|start|>assistant<|channel|>final<|message|>Hi"}}]}', allow_download=False)
    assert [a.kind for a in served.artifacts] == ["harmony-leak"]


def test_an_entry_its_id_places_on_amd_drops_for_an_nvidia_text():
    # vllm #25456 (a V100 log): the ROCm entry's summary says "CUDA-graph capture", which made it look like an NVIDIA
    # issue too, and it came second, high, on shared words; what its id names (ROCm) decides its hardware
    text = ("[Bug]: v100 support for gpt-oss: torch.AcceleratorError: CUDA error: no kernel image is available for "
            "execution on the device\nvllm serve openai/gpt-oss-20b --tensor-parallel-size 8\n(Worker_TP3 pid=2541127) "
            "ERROR [multiproc_executor.py:597] torch.AcceleratorError: CUDA error: no kernel image is available for "
            "execution on the device")
    found = {m.entry.id: m for m in matching.match_text(text, limit=300, min_score=0.0)}
    assert found["cuda-kernels-missing-for-gpu-arch"].confidence == "high"
    rocm = found["vllm-rocm-gptoss-kernel-errors"]
    assert rocm.confidence == "low"
    assert any("amd hardware and the text shows nvidia" in ev for ev in rocm.evidence)
