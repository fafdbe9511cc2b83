"""explain's reasoning on texts nobody wrote an entry from (issue 17): what a text shows decides the class and the
confidence. Each text is a real thread's, quoted from the thread named beside it (trimmed, never reworded).
"""

from __future__ import annotations

import json

import pytest

from gptoss_doctor.explain import explain_text
from gptoss_doctor.explain.artifacts import doubled_fragments, recognise
from gptoss_doctor.explain.parse import parse_text

# https://github.com/vllm-project/vllm/issues/17676 (a gpt-oss-120b report in it)
STARTUP_HANG = """[Bug]: vLLM hangs forever on waiting engine process to start

Same issue when running: "openai/gpt-oss-120b" on "v0.10.2" as in the docs

Running on 8xA100 - p4d.24xlarge
"""

# https://github.com/continuedev/continue/issues/10150
LMSTUDIO_400_LOAD = """**Error Details**

Model: LM Studio
Provider: openai
Status Code: 400

**Error Output**
```
400 Failed to load model "gpt-oss-20b". Error: Error loading model.
```
"""

# https://github.com/anomalyco/opencode/issues/38059
GROQ_TOO_LARGE = """Groq requests exceed TPM limit even in an empty directory
Provider: Groq
For `openai/gpt-oss-20b`:
Request too large for model `openai/gpt-oss-20b`
Limit 8000 TPM
Requested 38369
"""

# https://github.com/princeton-ddss/blackfish/issues/162 (it links vllm-project/vllm#22525)
LINKS_A_CITED_THREAD = """Support openai/gpt-oss models

These models appear to depend on additional resources that are not downloaded by `huggingface_hub`. See https://github.com/vllm-project/vllm/issues/22525.

(EngineCore_DP0 pid=932411) INFO 12-17 12:56:09 [kv_cache_utils.py:1028] GPU KV cache size: 1,043,264 tokens
"""

# https://github.com/musistudio/claude-code-router/issues/493 (the reporter's redacted config)
REDACTED_CONFIG = """I tried configuring the claude-code-router with the vllm served openai/gpt-oss-120b model. And it does not work.
{
  "Providers": [
    {
      "name": "gptoss",
      "api_base_url": "https://xxxxxxxxxx",
      "api_key": "sk-xxxxxxxxxxxx",
      "models": [
        "gpt-oss-120b"
      ],
    }
  ]
}
And when start Claude Code, nothing get prints out after a prompt (tokens been used but nothing seems happened)
"""

# https://github.com/BerriAI/litellm/issues/14225: a provider's error that names no model
BEDROCK_NO_MODEL = ('BadRequestError: BedrockException - {"message":"The model returned the following errors: Failed to '
                    'deserialize the JSON body into the target type: thinking: unknown field `thinking`, expected one of '
                    '`messages`, `model`, `store`, `reasoning_effort`, `metadata` at line 1 column 212"}')

# https://github.com/vllm-project/vllm/issues/26582
TRITON_KERNELS = ("No matter which version I try, I always get an error `Failed to import Triton kernels. Please make sure "
                  "your triton version is compatible.`")

# https://github.com/sgl-project/sglang/issues/13061
SGLANG_LOG = """When running gpt-oss-20b on 5090, I got the following error
[2025-11-11 15:55:06] INFO server_args.py:938: Enable FlashInfer AllReduce Fusion on sm100 for GptOssForCausalLM
[2025-11-11 15:55:06] WARNING server_args.py:949: Detected SM100 and MXFP4 quantization format for GPT-OSS model, enabling FlashInfer MXFP4 MOE kernel.
"""


def explain_json(cli, text: str, tmp_path) -> dict:
    """What `explain --offline --json --file PASTE` prints for ``text``, parsed (exit 0 required)."""
    f = tmp_path / "paste.txt"
    f.write_text(text, encoding="utf-8")
    res = cli("explain", "--offline", "--json", "--file", str(f))
    assert res.code == 0, res.stderr
    return json.loads(res.stdout)


def first_class(text: str) -> tuple[str, str]:
    hits = explain_text(text, allow_download=False).triage
    assert hits, "no triage class"
    return hits[0].cls.id, hits[0].basis


def test_a_hang_at_start_up_is_an_engine_that_never_became_ready():
    cid, _ = first_class(STARTUP_HANG)
    assert cid == "engine-not-ready"
    # a hang while generating is still the slow / looping class
    cid, _ = first_class("gpt-oss-20b on vLLM: the request hangs forever in the middle of the answer, no error")
    assert cid == "looping-slow"


def test_a_400_that_says_the_model_failed_to_load_is_a_load_failure_not_a_refused_request():
    cid, basis = first_class(LMSTUDIO_400_LOAD)
    assert (cid, basis) == ("load-failure", "shown")
    # the same status with a refused parameter stays a refused request
    cid, _ = first_class("Error code: 400 - {'error': {'message': \"Unrecognized request argument supplied: foo\"}}")
    assert cid == "request-rejected"


def test_a_request_over_a_provider_s_token_limit_is_a_refused_request():
    cid, _ = first_class(GROQ_TOO_LARGE)
    assert cid == "request-rejected"


def test_a_linked_thread_that_an_entry_cites_ranks_it_as_a_lead():
    r = explain_text(LINKS_A_CITED_THREAD, allow_download=False)
    top = r.matches[0]
    assert top.entry.id == "harmony-vocab-not-loadable"
    assert top.confidence == "low"  # a link is a pointer, not a diagnosis
    assert any("vllm-project/vllm#22525" in ev for ev in top.evidence)
    # and nothing else is confident beside it on shared words
    assert all(m.confidence == "low" for m in r.matches)


def test_a_redacted_key_is_no_duplicated_stream_fragment():
    assert doubled_fragments(REDACTED_CONFIG) == []
    arts, _ = recognise(REDACTED_CONFIG)
    assert "duplicated-fragments" not in {a.kind for a in arts}
    r = explain_text(REDACTED_CONFIG, allow_download=False)
    assert all(m.confidence == "low" for m in r.matches)
    # real doubled deltas still are
    assert doubled_fragments('{"city": "ParisParis", "unitunit": "celsius"}') == ["ParisParis", "unitunit"]


def test_a_provider_error_without_a_sign_of_gpt_oss_is_a_lead():
    r = explain_text(BEDROCK_NO_MODEL, allow_download=False)
    assert r.matches[0].entry.id == "hosted-bedrock-gptoss-reasoning-parameter-rejected"
    assert r.matches[0].confidence == "low"
    # with gpt-oss named, the same error is a diagnosis
    r = explain_text(BEDROCK_NO_MODEL + "\nmodel: bedrock/openai.gpt-oss-120b-1:0", allow_download=False)
    assert r.matches[0].entry.id == "hosted-bedrock-gptoss-reasoning-parameter-rejected"
    assert r.matches[0].confidence in ("high", "medium")


def test_vllm_s_triton_kernels_import_message_is_quoted_by_its_entry():
    r = explain_text(TRITON_KERNELS, allow_download=False)
    assert r.matches[0].entry.id == "gpu-triton-kernels-version-mismatch"
    assert r.matches[0].confidence == "high"


@pytest.mark.parametrize("line", [
    "[2025-11-03 18:48:34 TP7] Scheduler hit an exception: Traceback (most recent call last):",
    "[2025-11-11 15:55:06] WARNING server_args.py:949: Detected SM100 and MXFP4 quantization format",
])
def test_sglang_s_log_lines_name_sglang(line):
    assert "sglang" in parse_text("a report\n" + line + "\n").engines


def test_an_sglang_log_is_understood_as_sglang_in_json(cli, tmp_path):
    doc = explain_json(cli, SGLANG_LOG, tmp_path)
    assert doc["facets"]["engine"]["name"] == "sglang"
    # and an SGLang log does not rank vLLM-only issues first
    assert not doc["matches"] or "vllm" not in doc["matches"][0]["id"].split("-")[:1]


def test_a_link_is_no_words_of_the_words_search():
    r = explain_text(LINKS_A_CITED_THREAD.split("\n\n(")[0], allow_download=False)
    assert r.words and r.words.startswith("gpt-oss ")
    assert not any(w in r.words for w in ("github", "https", "vllm-project", "issues", "22525")), r.words


# https://github.com/musistudio/claude-code-router/issues/493: the launch command the reporter pasted
CCR_LAUNCH = """I tried configuring the claude-code-router with the vllm served openai/gpt-oss-120b model. And it does not work.
Here is the vllm command I used for the serving:
```
docker run --rm --runtime nvidia --ipc=host -p 8000:8000 \\
  vllm/vllm-openai:gptoss \\
  --model openai/gpt-oss-120b \\
  --tensor-parallel-size 2 \\
  --host 0.0.0.0 \\
  --port 8000
```
And when start Claude Code, nothing get prints out after a prompt (tokens been used but nothing seems happened)
"""


def test_a_pasted_launch_without_the_tool_flags_is_evidence_when_the_text_is_about_tools():
    r = explain_text(CCR_LAUNCH, allow_download=False)
    top = r.matches[0]
    assert top.entry.id == "gptoss-server-tool-parser-not-enabled"
    assert top.confidence == "medium"
    assert any("vllm.tool_flags_missing" in ev for ev in top.evidence)
    # the same launch in a text about something else (a slow answer) says nothing of the tool parser
    slow = CCR_LAUNCH.replace("claude-code-router", "benchmark").replace(
        "And when start Claude Code, nothing get prints out after a prompt (tokens been used but nothing seems happened)",
        "The answers come back at 3 tokens/s on two H100s.")
    r = explain_text(slow, allow_download=False)
    assert not any(any("vllm.tool_flags_missing" in ev for ev in m.evidence) for m in r.matches)
    # and a launch with the flags set shows nothing to fix
    fixed = CCR_LAUNCH.replace("--port 8000", "--port 8000 --enable-auto-tool-choice --tool-call-parser openai")
    r = explain_text(fixed, allow_download=False)
    assert not any(any("vllm.tool_" in ev for ev in m.evidence) for m in r.matches)


def test_a_client_s_status_line_is_an_error_the_server_answered(cli, tmp_path):
    doc = explain_json(cli, LMSTUDIO_400_LOAD, tmp_path)
    (err,) = doc["errors"]
    assert err["status"] == 400 and err["message"].startswith("Failed to load model")
    assert doc["origin"] == "server" and "answered the request" in doc["origin_detail"]
    # searched as one phrase: the model name's quotes do not end it early
    assert doc["search"]["phrase"] and '"' not in doc["search"]["query"]
    # a line that only starts with a number is no status line
    doc = explain_text("500 tokens generated in 3 s\n", allow_download=False)
    assert not doc.parsed.errors


def test_a_hostile_flag_value_in_a_pasted_launch_reaches_no_terminal_or_json_raw(cli, tmp_path):
    text = ("my agent's tool calls fail with gpt-oss\n"
            "vllm serve openai/gpt-oss-20b --enable-auto-tool-choice --tool-call-parser 'he\x1b[31mrmes\u202e<b>'\n")
    doc = explain_json(cli, text, tmp_path)
    ev = [e for m in doc["matches"] for e in m["evidence"] if "vllm.wrong_tool_parser" in e]
    assert ev and "\x1b" in ev[0]  # the same string once parsed ...
    f = tmp_path / "paste.txt"
    for args in (["--json"], []):
        res = cli("explain", "--offline", *args, "--file", str(f))
        assert res.code == 0, res.stderr
        assert "\x1b" not in res.stdout and "\u202e" not in res.stdout  # ... but never raw on stdout


# https://github.com/openvinotoolkit/openvino.genai/issues/2984
OPENVINO_BANGS = """int4 quantized gpt-oss model not working with LLMPipeline
I'm trying to generate chat completions using LLMPipeline and int4 quantized gpt-oss-20b, but the token array result is all zeros.
Just yields "!!!!!!!!!!!!!!!.." or an array of 0s for tokens. Any ideas what might be going on? GPU: A770
"""

# https://github.com/vllm-project/vllm/issues/29539
VLLM_BANGS = """[Bug]: FULL_AND_PIECEWISE cudagraph mode leading to !!! in generated text
We observed !!! in generated text, indicating there are NaNs in logits. After some debugging, we found it's related to FULL_AND_PIECEWISE cudagraph mode.
"""


@pytest.mark.parametrize("text", [OPENVINO_BANGS, VLLM_BANGS])
def test_a_run_of_exclamation_marks_in_the_output_is_garbage(text):
    # NaN logits sample token 0, which is "!" in o200k: the output, not the reporter's emphasis
    ex = explain_text(text, allow_download=False)
    assert "garbage" in ex.facets.failure
    assert ex.triage[0].cls.id == "garbage-output"


@pytest.mark.parametrize("text", ["It does not work!!! please help with gpt-oss-20b",
                                  "ROCm build for gpt-oss failed !!!!!!"])
def test_a_user_s_own_exclamation_marks_are_no_garbage(text):
    assert "garbage" not in explain_text(text, allow_download=False).facets.failure


def test_an_arc_a770_is_intel_not_nvidia():
    assert explain_text(OPENVINO_BANGS, allow_download=False).facets.hardware["vendor"] == "intel"
    assert explain_text("gpt-oss-20b on an A100 80GB", allow_download=False).facets.hardware["vendor"] == "nvidia"


# https://github.com/kaito-project/kaito/issues/1567
KAITO_PROBE = """gpt-oss-120b workspace pod launch
**Describe the bug**
When deploying gpt-oss-120b workspace, the pod takes two restarts to become ready. Seems like readiness probe timeout needs to be increased to add a startup probe.
"""


def test_a_pod_its_probes_restart_is_an_engine_not_ready_yet():
    assert first_class(KAITO_PROBE)[0] == "engine-not-ready"


# https://github.com/ollama/ollama/issues/11779 (the message as the reporter typed it: no space in "template::3:")
OLLAMA_TEMPLATE = """gpt-oss:20b function currentDate is not defined
I am trying to run gpt-oss 20b on top of ollama. i have a streamlit app which is sending user requests to ollama. i am getting **template::3: function "currentDate" not defined** error when i try to send a request.
"""


def test_a_known_message_spaced_differently_is_still_quoted():
    top = explain_text(OLLAMA_TEMPLATE, allow_download=False).matches[0]
    assert top.entry.id == "gptoss-runtime-predates-gpt-oss-support"
    assert top.confidence == "high" and "spaced differently" in top.evidence[0]


def test_a_spaced_differently_message_of_another_model_is_no_quote():
    # the same generic message about another model: the spaces are no evidence that it is this issue
    text = "llama3.3 70b: model runner has unexpectedly stopped, this may be due to resource limitations or an " \
           "internal error, check ollama server logs for details"
    assert all(m.confidence == "low" for m in explain_text(text, allow_download=False).matches)


# https://github.com/CherryHQ/cherry-studio/issues/8889
CHERRY_THINKING = """[错误]: vLLM部署的gpt-oss-120b思考无法正常显示和停止
### 重现步骤
使用docker vllm部署的gpt-oss-120b 在cherry studio中选择ollama和对应端口号 能够正常回答问题，但是无法显示思考过程，而且一直显示“思考中”和计时
"""


def test_chinese_words_for_the_reasoning_are_read():
    ex = explain_text(CHERRY_THINKING, allow_download=False)
    assert "reasoning" in ex.facets.features
    assert ex.triage[0].cls.id == "empty-or-reasoning-only"


# https://github.com/ggml-org/llama.cpp/issues/16263: "standard arguments" are the command line's
LLAMACPP_DROPPED = """Eval bug: Official gpt-oss-120b model output has dropped/missing tokens, can't count to 100
When I run llama-server with standard arguments, tokens are dropped from the output, severely affecting coding problems:
./build/bin/llama-server --model models/gpt-oss-120b-mxfp4-00001-of-00003.gguf -c 32768 -ngl 99 --jinja
"""


def test_dropped_tokens_are_garbage_and_command_line_arguments_no_tool_call():
    ex = explain_text(LLAMACPP_DROPPED, allow_download=False)
    assert ex.triage[0].cls.id == "garbage-output"
    assert "tool-calls" not in [h.cls.id for h in ex.triage]


# https://github.com/snowflakedb/ArcticInference/issues/190: "#L78" is a line of the linked file
ARCTIC_LINK = """Error using Speculator with vllm=0.10.0 for gpt-oss
However, using release-gpt-oss branch with vllm==0.10.0 is giving error in this line https://github.com/snowflakedb/ArcticInference/blob/4ffc1e318ff9de5fe945aabe08ae274a48156efb/arctic_inference/vllm/config.py#L78
"""


@pytest.mark.parametrize("text, gpu, vendor", [
    (ARCTIC_LINK, None, None),
    ("Getting openai/gpt-oss-20b to work on 2 x B60 Cards", "B60", "intel"),
    ("gpt-oss-120b on a DGX Spark GB10", "DGX Spark", "nvidia"),
    ("vllm serve openai/gpt-oss-120b on the GB10 fails", "GB10", "nvidia"),
    ("gpt-oss-120b on 8xH200 with vllm", "H200", "nvidia"),
])
def test_gpu_names_are_the_ones_that_exist(text, gpu, vendor):
    hw = explain_text(text, allow_download=False).facets.hardware
    assert (hw or {}).get("gpu") == gpu and (hw or {}).get("vendor") == vendor


# https://github.com/usestrix/strix/issues/1204
GROQ_SCHEMA = """Groq models fail with "invalid JSON schema for tool view_agent_graph"
Models tried: groq/openai/gpt-oss-120b, groq/openai/gpt-oss-20b
The exact error: invalid JSON schema for tool view_agent_graph, tools[24].function.parameters: 'required' present but 'properties' is missing.
"""


def test_a_schema_the_provider_calls_invalid_is_a_refused_request():
    assert first_class(GROQ_SCHEMA)[0] == "request-rejected"


# https://github.com/kaito-project/kaito/issues/1610
KAITO_PRESET = """Unable to deploy GPT-OSS-120B model
Error from server (BadRequest): error when creating "GPT-OSS-120B.yaml": admission webhook "validation.workspace.kaito.sh" denied the request: validation failed: invalid value: Unsupported inference preset name gpt-oss-120b: inference.presetName
"""

# https://github.com/sgomez/ollama-ai-provider/issues/48: the client library's own version, for every model
AISDK_VERSION = ('UnsupportedModelVersionError [AI_UnsupportedModelVersionError]: Unsupported model version v1 for '
                 'provider "ollama.chat" and model "gpt-oss:20b". AI SDK 5 only supports models that implement '
                 'specification version "v2".')


def test_a_component_that_lists_gpt_oss_as_unsupported_predates_it():
    top = explain_text(KAITO_PRESET, allow_download=False).matches[0]
    assert top.entry.id == "gptoss-runtime-predates-gpt-oss-support" and top.confidence in ("high", "medium")
    other = explain_text(AISDK_VERSION, allow_download=False).matches
    assert not any(m.entry.id == "gptoss-runtime-predates-gpt-oss-support" and m.confidence != "low" for m in other)


# https://github.com/vllm-project/vllm/issues/24062
TURING_SINKS = """20-series GPUs do not support the `sinks` parameter; attempting to access it directly raises an error. Could you fix this
PS C:\\Users\\y> docker run --runtime nvidia --gpus all -p 8000:8000 --ipc=host vllm/vllm-openai:latest --model unsloth/gpt-oss-20b-unsloth-bnb-4bit
"""


def test_a_gpu_that_does_not_support_the_sinks_is_the_sinks_entry():
    top = explain_text(TURING_SINKS, allow_download=False).matches[0]
    assert top.entry.id == "gptoss-attention-sinks-backend-unsupported" and top.confidence in ("high", "medium")


# https://blog.peddals.com/2025/09 (a Japanese report: kanji, hiragana, katakana and Latin in one sentence)
JAPANESE_REPORT = """gpt-oss の Reasoning レベル変更を MLX-LM でもできるようにする魔改造
gpt-oss が出てからというもの、MLX-LM サーバの改造を続けていますが、今回は Dify や Open WebUI で Reasoning レベル (High、Middle、Low) の指定ができるようにしました。だってシステムプロンプトに入れようが Open WebUI のカスタムパラメータとして指定しようが全然反映されなかったので。
"""


def test_japanese_is_one_writing_system_not_garbage():
    # check's probes read a model's answer with the same function: an answer in Japanese is language
    from gptoss_doctor.explain.artifacts import garbled

    assert garbled(JAPANESE_REPORT) is None
    ex = explain_text(JAPANESE_REPORT, allow_download=False)
    assert "garbage" not in ex.facets.failure and all(a.kind != "garbage-output" for a in ex.artifacts)
    # random weights still write many systems at once
    assert garbled("nahi Event vendedorម្� hammock Привет مرحبا नमस्ते")


# https://github.com/tenstorrent/vllm/issues/375
TT_METAL_ZERO_LENGTH = """[Bug]: gpt-oss-120b producing 0-length outputs
In both Models CI and the tt-metal vLLM nightly the benchmark runs are not failing but are receiving 0 output tokens:
"""


# https://github.com/ggml-org/llama.cpp/issues/15105
ALLOCATION_FAILURE = """Eval bug: Memory allocation failure if any layer is on my second GPU (AMD official drivers)
"""


# https://github.com/ollama/ollama/issues/14325
RTX_ON_AN_AMD_HOST = """consistent SIGBUS when running gpt-oss:20b via Vulkan+Nouvau on RTX3090
I wanted to test the perf when using Vulkan+Nouveau comparing to CUDA, so I ran llm_benchmark, which loads and prompts various models and measures the output. When `gpt-oss:20b` was loaded and prompt `Summarize the key differences between classical and operant conditioning in psychology` issued, the runner crashed due to SIGBUS. I retried 2 times and it happens consistently. It works ok via CUDA. Also when using Vulkan + Nouveau + gpt-oss:20b and issuing the same prompt manually, it works fine, so it must be a very specific chain of events that triggers the bug.
OS: Debian-13
kernel: `6.18.5+deb13-amd64`
firmware-nvidia-graphics: `20251021-1~bpo13+1` (contains GSP 570.144)
Host: TUXEDO InfinityBook Pro 14 - Gen10 - AMD (HX370 APU), 128GB RAM
GPU: RTX 3090
server cmd: `OLLAMA_VULKAN=1 GGML_VK_VISIBLE_DEVICES=0 ollama serve`
llm_benchmark cmd: `llm_benchmark run`
"""


# https://github.com/ggml-org/llama.cpp/issues/15272
GTX_1050TI_VULKAN = """Eval bug: GGGGGGGG... or garbled works
### Name and Version

load_backend: loaded RPC backend from /mnt/10a35c9a-e885-401a-b71a-38f856f9bf0a/ai/llama.cpp_ggerganov/build/bin/libggml-rpc.so
ggml_vulkan: Found 1 Vulkan devices:
ggml_vulkan: 0 = NVIDIA GeForce GTX 1050 Ti (NVIDIA) | uma: 0 | fp16: 0 | bf16: 0 | warp size: 32 | shared memory: 49152 | int dot: 1 | matrix cores: none
load_backend: loaded Vulkan backend from /mnt/10a35c9a-e885-401a-b71a-38f856f9bf0a/ai/llama.cpp_ggerganov/build/bin/libggml-vulkan.so
load_backend: loaded CPU backend from /mnt/10a35c9a-e885-401a-b71a-38f856f9bf0a/ai/llama.cpp_ggerganov/build/bin/libggml-cpu-haswell.so
version: 6106 (5fd160bb)
built with cc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0 for x86_64-linux-gnu

### Operating systems

Linux

### GGML backends

Vulkan

main: loading model
srv    load_model: loading model '../../../llm/gpt/gpt-oss-20b-F16/gpt-oss-20b-F16.gguf'
llama_model_load_from_file_impl: using device Vulkan0 (NVIDIA GeForce GTX 1050 Ti) - 4096 MiB free
llama_model_loader: - kv   0:                       general.architecture str              = gpt-oss
"""


# https://github.com/CherryHQ/cherry-studio/issues/9469
NEWAPI_GATEWAY = """[错误]：newapi代理的英伟达gptoss模型无法正常输出
如果直接切换英伟达渠道是正常的，newapi渠道1.5.7版本之前是正常的
重新测了一遍好像英伟达那边只有gpt-oss模型有这个问题，其他都正常的。可能是英伟达的问题吧
"""


# https://github.com/lreuss07/secintel-ai/issues/1
N_KEEP_400 = """Errors about truncate prompt when using OpenAI gpt-oss-20B model
```
2026-02-08 19:34:27,006 - trackers.microsoft_products.summarizer - ERROR - Error generating security product summary: Error code: 400 - {'error': 'Cannot truncate prompt with n_keep (14169) >= n_ctx (4096)'}
```
"""


# https://github.com/cloudflare/workerd/issues/5080
TYPESCRIPT_TYPES = """Types missing for new AI models `gpt-oss-120b`, `gpt-oss-20b`
This model is missing from the input types:
await env.AI.run('@cf/openai/gpt-oss-120b', {
	instructions: 'some prompt'
	input: 'some input',
	max_tokens: 10240,
})
`Argument of type '"@cf/openai/gpt-oss-120b"' is not assignable to parameter of type 'keyof AiModels'.ts(2345)`
And I've not found any output type that matches the output correctly either. It's very different from `AiTextGenerationOutput`. This isn't helped when https://developers.cloudflare.com/workers-ai/models/gpt-oss-120b/ doesn't document this type either.
It seems like an update here landed as per https://github.com/cloudflare/workerd/pull/5111, but as per my comment at https://github.com/cloudflare/workerd/pull/5111#issuecomment-3304247714, the output types for these models are not quite accurate and now throw errors like this:
const response = await context.env.AI.run('@cf/openai/gpt-oss-120b', {
	instructions: 'some prompt',
	input: 'some input',
	max_tokens: 10240,
});

const results = response?.output?.find?.(item => item.type === 'message');
Property 'output' does not exist on type 'Ai_Cf_Openai_Gpt_Oss_120B_Output'.
  Property 'output' does not exist on type '{}'.
"""


# https://github.com/NousResearch/hermes-agent/issues/59345
STRAY_TEXT = """Stray text appears when using openai/gpt-oss:20b
When running Hermes Agent with the model **openai/gpt-oss:20b**, random fragments of text occasionally appear in the output that do not belong to the prompt or response. Typical examples include strings such as `commentre?the?…?` or other seemingly unrelated characters.
This issue does **not** occur when using other models (e.g., anthropic/claude), indicating a model‑specific decoding or tokenization problem.
1. Start the agent with `model=openai/gpt-oss:20b`.
2. Send a normal prompt.
3. Observe that the response contains stray text fragments like `commentre?the?…?`.
"""


# https://github.com/spark-arena/sparkrun/issues/280
MISSING_PACKAGE_FILE = """RuntimeError: Engine core initialization failed when running sparkrun run @eugr/openai-gpt-oss-120b
During initialization:
(EngineCore_DP0 pid=481) Process EngineCore_DP0:
(EngineCore_DP0 pid=481) Traceback (most recent call last):
(EngineCore_DP0 pid=481)   File "/usr/lib/python3.12/pathlib.py", line 1313, in mkdir
(EngineCore_DP0 pid=481)     os.mkdir(self, mode)
(EngineCore_DP0 pid=481) FileNotFoundError: [Errno 2] No such file or directory: '/usr/local/lib/python3.12/dist-packages/flashinfer/data/csrc/nv_internal/tensorrt_llm/cutlass_instantiations/120_mxfp4min'
To Reproduce
sparkrun run @eugr/openai-gpt-oss-120b --port 9000 --served-model-name gpt-oss
Running locally on dgx spark
Even with identical recipe, spark-vllm-docker run-recipe.sh can make it start successfully.
./run-recipe.sh recipes/openai-gpt-oss-120b.yaml
sparkrun, version 0.3.6
built from source vllm-node-mxfp4
"""


def test_tenstorrent_tt_metal_is_no_apple_metal_and_zero_length_output_is_empty():
    ex = explain_text(TT_METAL_ZERO_LENGTH, allow_download=False)
    assert not ex.facets.hardware or ex.facets.hardware.get("vendor") != "apple"
    assert "empty" in ex.facets.failure
    assert ex.triage[0].cls.id == "empty-or-reasoning-only"


def test_the_allocators_own_words_are_out_of_memory():
    assert "oom" in explain_text(ALLOCATION_FAILURE, allow_download=False).facets.failure


def test_a_named_gpu_decides_the_vendor_over_the_hosts_amd_cpu():
    hw = explain_text(RTX_ON_AN_AMD_HOST, allow_download=False).facets.hardware
    assert hw["gpu"] == "RTX3090" and hw["vendor"] == "nvidia"


def test_a_gtx_card_is_a_gpu():
    hw = explain_text(GTX_1050TI_VULKAN, allow_download=False).facets.hardware
    assert hw["gpu"] == "GeForce GTX 1050 Ti" and hw["vendor"] == "nvidia"


def test_a_new_api_gateway_is_a_proxy_and_its_chinese_words_are_read():
    ex = explain_text(NEWAPI_GATEWAY, allow_download=False)
    assert ex.facets.proxy["name"] == "new-api"
    assert "proxy-wrapped" in [h.cls.id for h in ex.triage]


def test_a_400_that_says_the_prompt_does_not_fit_is_the_context_class():
    ex = explain_text(N_KEEP_400, allow_download=False)
    assert ex.facets.http_status == 400
    assert ex.triage[0].cls.id == "context-length" and ex.triage[0].basis == "shown"


def test_typescript_type_errors_are_a_build_matter():
    ex = explain_text(TYPESCRIPT_TYPES, allow_download=False)
    assert ex.triage[0].cls.id == "install-build"


def test_stray_text_in_the_answer_is_a_leak():
    assert explain_text(STRAY_TEXT, allow_download=False).triage[0].cls.id == "harmony-leak"


def test_a_file_missing_inside_an_installed_package_is_an_install_matter():
    ids = [h.cls.id for h in explain_text(MISSING_PACKAGE_FILE, allow_download=False).triage]
    assert "install-build" in ids


# https://github.com/ollama/ollama/issues/12069: the VRAM and the KV cache are the set-up; the hang is the failure
OLLAMA_HANG_24GB = """1h54m41s runnint time!
I'm using RAGFlow to connect to a local Ollama gpt-oss:20b model on an NVIDIA 3090 with 24GB of VRAM. After running for a long time, the process suddenly hangs. I have to manually run ollama stop gpt-oss:20b before Ollama will start working normally again.
When it hangs, there are no error logs. ollama ps shows that the model is still in memory and everything appears normal, but there's absolutely no output.
8月 25 18:28:48 djjx ollama[1096449]: time=2025-08-25T18:28:48.944+08:00 level=WARN source=server.go:219 msg="kv cache type not supported by model" type=""
"""

# https://github.com/sgl-project/sglang/issues/19431: a feature the engine lacks for gpt-oss is no refused request
NOT_DETERMINISTIC = """[Bug] Deterministic inference is not supported for GPT-OSS 120B
I launched the GPT-OSS 120B model and tested the same prompts under different concurrency levels (BS=6 vs. BS=10). I observed that the outputs differ significantly when the batch size crosses the threshold of 8, even with the --enable-deterministic-inference argument enabled.
"""


def test_words_of_the_set_up_weigh_less_than_the_failure():
    ex = explain_text(OLLAMA_HANG_24GB, allow_download=False)
    assert ex.triage[0].cls.id == "looping-slow"
    oom = next((h for h in ex.triage if h.cls.id == "oom"), None)
    # named only by the set-up, the class is no more than a guess
    assert oom is None or (any(w.startswith("the set-up named") for w in oom.why) and oom.basis == "guess")


def test_a_feature_the_engine_lacks_is_no_refused_request():
    assert explain_text(NOT_DETERMINISTIC, allow_download=False).triage[0].cls.id == "kernel-hardware"


# lines a healthy vLLM prints (recorded from vLLM 0.32.0 on a CPU and 0.26.0 on an H100: see tests/recorded/README.md
# for the recordings; these lines are copied from their server logs unchanged): its metrics, a compile warning and its
# normal shutdown
HEALTHY_VLLM_LINES = """(APIServer pid=8225) INFO 11-25 13:40:39 [loggers.py:335] Engine 000: Avg prompt throughput: 53.2 tokens/s, Avg generation throughput: 91.2 tokens/s, Running: 0 reqs, Waiting: 0 reqs, CPU KV cache usage: 0.0%, Prefix cache hit rate: 49.0%
(EngineCore pid=855) WARNING 11-23 00:13:15 [jit_monitor.py:135] Triton kernel JIT compilation during inference: fused_moe_kernel. This causes a latency spike; consider extending warmup to cover this shape/config.
(APIServer pid=591) INFO:     127.0.0.1:58398 - "POST /v1/completions HTTP/1.1" 200 OK
(EngineCore pid=8963) INFO 11-25 13:41:45 [core.py:1635] [shutdown] EngineCore: start mode=abort timeout=0s
"""

# https://github.com/ollama/ollama/issues/12447: Ollama's offload report names 'repeating layers' in every load
OLLAMA_OFFLOAD_REPORT = """Embedding models don't seem to be working.
Whenever I try to use embedding ,it seems to come back with an erorr:
This is happening with gpt-oss-20b and a ton of other models I have tried (which I have used and had no problem until after the recent upgrade of ollama).
time=2025-09-29T13:17:58.711-06:00 level=INFO source=ggml.go:487 msg="offloading 10 repeating layers to GPU"
time=2025-09-29T13:17:58.711-06:00 level=INFO source=ggml.go:491 msg="offloading output layer to CPU"
time=2025-09-29T13:17:58.711-06:00 level=INFO source=ggml.go:498 msg="offloaded 10/25 layers to GPU"
"""

# https://github.com/ollama/ollama/issues/12334: Windows' words for a connection reset (WSAECONNRESET), through Go
WINDOWS_RESET = """Error An existing connection was forcibly closed by the remote host
Getting this error when running gpt-oss 20b, it was working fine before the update but now getting this error after while running result stuck at the end and this error come .
an error was encountered while running the model: read tcp 127.0.0.1:58428->127.0.0.1:58426: wsarecv: An existing connection was forcibly closed by the remote host
"""

# https://github.com/p-e-w/heretic/issues/8: the shell's 'Killed' after the loading bar is the kernel's OOM killer
KILLED_WHILE_LOADING = """gpt-oss-120b "killed" before it loads
Unfortunately it doesn't seem to work, the process gets killed when loading reaches 20%:
GPU type: NVIDIA A100 80GB PCIe

Loading model models/unsloth-gpt-oss-120b/...
Loading checkpoint shards:  20%|███████▌                              | 3/15 [00:34<02:05, 10.50s/it]Killed
"""


# lines a healthy llama-server prints at load and after each request (recorded from llama-server built from llama.cpp
# b1-0c1e570, tests/recorded/README.md; copied unchanged): its context size, and a summary saying nothing was truncated
HEALTHY_LLAMA_SERVER_LINES = """0.02.384.565 I srv    load_model: initializing, n_slots = 4, n_ctx_slot = 131072, kv_unified = 'true'
0.02.390.919 I srv  llama_server: model loaded
0.04.139.092 I slot print_timing: id  3 | task 0 |       total time =      56.78 ms /    79 tokens
0.04.139.191 I slot      release: id  3 | task 0 | stop processing: n_tokens = 78, truncated = 0
"""


def test_a_healthy_engines_routine_lines_name_no_failure():
    assert "context-length" not in [h.cls.id for h in explain_text(HEALTHY_LLAMA_SERVER_LINES,
                                                                    allow_download=False).triage]
    ex = explain_text(HEALTHY_VLLM_LINES, allow_download=False)
    assert not {"crash", "slow", "loop"} & set(ex.facets.failure)
    assert "looping-slow" not in [h.cls.id for h in ex.triage]


def test_ollamas_offload_report_is_no_loop():
    ex = explain_text(OLLAMA_OFFLOAD_REPORT, allow_download=False)
    assert "loop" not in ex.facets.failure
    assert "looping-slow" not in [h.cls.id for h in ex.triage[:1]]


def test_a_connection_the_remote_host_closed_is_unreachable():
    assert explain_text(WINDOWS_RESET, allow_download=False).triage[0].cls.id == "unreachable"


def test_killed_after_the_loading_bar_is_out_of_memory():
    ex = explain_text(KILLED_WHILE_LOADING, allow_download=False)
    assert "oom" in ex.facets.failure
    assert ex.triage[0].cls.id == "oom"


# https://github.com/ollama/ollama/issues/11831: the user repeated a step; the output did not repeat
USER_REPEATED_A_STEP = """Digest mismatch when pulling gpt-oss:20b
When running:
  ollama pull gpt-oss:20b
I get:
  Error: digest mismatch, file must be downloaded again:
**Steps tried:**
- Deleted all blobs (`rm -rf ~/.ollama/models/blobs/*`)
- Removed the model (`ollama rm gpt-oss:20b`) and retried
- Repeated multiple times
"""


def test_a_step_the_user_repeated_is_no_generation_loop():
    ex = explain_text(USER_REPEATED_A_STEP, allow_download=False)
    assert "loop" not in ex.facets.failure
    assert "looping-slow" not in [h.cls.id for h in ex.triage]
    # while output that repeats still is one
    assert "loop" in explain_text("gpt-oss-20b keeps repeating the same sentence", allow_download=False).facets.failure


# https://github.com/mudler/LocalAI/issues/6238: a debug log line printing the rendered prompt is the model's input
PROMPT_IN_A_DEBUG_LOG = """MLX Backend raises 401 client error when loading models
Loading a model with MLX backend does not work. It refuses to load the model and instead throws a 401 client error:
Internal error: failed to load model with internal loader: could not load model (no success): Error loading MLX model: 401 Client Error.
9:02AM DBG Prompt (after templating): <|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.
9:02AM DBG Stream request received
9:02AM INF Success ip=10.20.111.103 latency=591.279083ms method=POST status=200 url=/v1/chat/completions
"""


def test_the_prompt_a_log_prints_is_no_leak():
    ex = explain_text(PROMPT_IN_A_DEBUG_LOG, allow_download=False)
    assert not [a for a in ex.artifacts if a.kind == "harmony-leak"]
    assert "leak" not in ex.facets.failure and "slow" not in ex.facets.failure
    assert "harmony-leak" not in [h.cls.id for h in ex.triage]


# llama-server logs its chat template on an example conversation at start-up (tools/server/server.cpp: "chat
# template, chat_template: %s, example_format: '%s'"); an incident note that quotes it while the server hung in
# decode (humanspark/local-ai, 2026-08-19) shows no leak: the Harmony there is the model's input
TEMPLATE_EXAMPLE_IN_A_START_UP_LOG = """Incident: gpt-oss-120b hangs in decode
The first question was accepted, tokenized, and began decoding. Then the server stopped responding and stopped
logging. The remaining eleven questions failed as `Connection refused`.
srv    load_model: chat template, chat_template: jinja, example_format: '<|start|>system<|message|>You are ChatGPT, a
large language model trained by OpenAI.
Knowledge cutoff: 2024-06<|end|><|start|>user<|message|>Hello<|end|><|start|>assistant<|channel|>final<|message|>Hi
there<|end|><|start|>user<|message|>How are you?<|end|><|start|>assistant'
"""


def test_the_template_example_a_server_logs_at_start_up_is_no_leak():
    ex = explain_text(TEMPLATE_EXAMPLE_IN_A_START_UP_LOG, allow_download=False)
    assert not [a for a in ex.artifacts if a.kind == "harmony-leak"]
    assert "leak" not in ex.facets.failure
    assert "harmony-leak" not in [h.cls.id for h in ex.triage]
    # the same Harmony in an answer still is a leak
    leaked = explain_text("the answer shows <|start|>assistant<|channel|>final<|message|>Hi there", allow_download=False)
    assert "leak" in leaked.facets.failure


# https://github.com/sgl-project/sglang/issues/22784: PyTorch's own size-mismatch error, which four known issues
# print with their own numbers; with other numbers it tells none of them apart
TENSOR_SIZE_MISMATCH = """[Bug] gpt-oss-120b EP=8 crashes with tensor size mismatch in weight_loader_fused
sglang serve --model-path lmsys/gpt-oss-120b-bf16 --tp 8 --ep 8
File "sglang/srt/layers/moe/fused_moe_triton/layer.py", line 527, in _load_w2
    expert_data.copy_(loaded_weight)
RuntimeError: The size of tensor a (16) must match the size of tensor b (128) at non-singleton dimension 0
"""


def test_a_message_several_issues_print_is_no_match_by_its_shape():
    ex = explain_text(TENSOR_SIZE_MISMATCH, allow_download=False)
    assert not [m for m in ex.matches if m.confidence in ("high", "medium")]
    assert not [ev for m in ex.matches for ev in m.evidence if "with other names or numbers" in ev]
    # the same message with an issue's own numbers is still that issue's
    quoted = explain_text("gpt-oss-120b eagle3 draft: RuntimeError: The size of tensor a (8640) must match the size "
                          "of tensor b (5760) at non-singleton dimension 1", allow_download=False)
    assert quoted.matches[0].entry.id == "sglang-gptoss-eagle3-v3-hidden-size-mismatch"
    assert quoted.matches[0].confidence == "high"
    # a message shape only one issue prints still counts with other numbers
    other = explain_text("openai_harmony.HarmonyError: Expected 2 output messages (reasoning and final), but got 5.",
                         allow_download=False)
    assert any("with other names or numbers" in ev for ev in other.matches[0].evidence)


# https://github.com/ggml-org/llama.cpp/issues/19943: a GPU backend that does not load is the build's or the
# install's, not a model that fails to load
BACKEND_NOT_LOADED = """Misc. bug: ROCm backend fails to load on Windows 11 (since build b8152)
llama-server.exe -m F:\\ai\\lmstudio-models\\lmstudio-community\\gpt-oss-20b-GGUF\\gpt-oss-20b-MXFP4.gguf --port 9999
The latest build b8162 does not detect/load ROCm correctly in Windows 11. Any model loaded with it only loads the model
to RAM. Works like I would expect the CPU-only version to do.
"""


def test_a_backend_that_does_not_load_is_the_install():
    ex = explain_text(BACKEND_NOT_LOADED, allow_download=False)
    assert ex.triage[0].cls.id == "install-build"
    # while a model that does not load is still a load failure
    model = explain_text("llama-server: gpt-oss-20b-mxfp4.gguf fails to load: error loading model", allow_download=False)
    assert model.triage[0].cls.id == "load-failure"


# https://github.com/inception-project/inception/issues/5609: the app's exception is a consequence; the report's own
# sentences say what went wrong
EXCEPTION_AND_REPORT = """Assistant watch mode fails with GPT-OSS
Assistant watch mode fails with GPT-OSS. The problem is probably that GPT-OSS in Ollama does currently not support structured output and always returns an empty string when structured output is requested.
```
Task [WatchAnnotationTask] failed (trigger: [Assistant watching])
com.fasterxml.jackson.databind.exc.MismatchedInputException: No content to map due to end-of-input
at com.fasterxml.jackson.databind.ObjectMapper._initForReading(ObjectMapper.java:5129)
```
"""


def test_the_reporters_sentences_beside_an_exception_rank_too():
    ex = explain_text(EXCEPTION_AND_REPORT, allow_download=False)
    assert ex.matches[0].entry.id == "structured-output-vs-harmony-channels"
    assert ex.matches[0].confidence == "low"  # shared words alone: a lead


def test_garbled_tool_input_is_a_tool_call_fault_not_garbage():
    # https://repost.aws/questions/QUdavvWt4aS-Km2zK71OFUSA (its title): the JSON of a streamed tool call is cut,
    # the model's language is fine
    ex = explain_text("ConverseStream returns garbled/truncated tool input JSON for openai.* models (ConverseCommand "
                      "works correctly)\nmodelId: openai.gpt-oss-120b-1:0, toolConfig: tools: toolSpec getWeather",
                      allow_download=False)
    assert "garbage" not in ex.facets.failure
    assert ex.triage[0].cls.id == "tool-calls"
    assert "garbage" in explain_text("gpt-oss-20b output is garbled on Vulkan", allow_download=False).facets.failure


def _first_class(text: str) -> str:
    ex = explain_text(text, allow_download=False)
    return ex.triage[0].cls.id if ex.triage else ""


def test_a_download_that_answers_404_is_a_model_that_cannot_be_had():
    # https://github.com/OpenWhispr/openwhispr/issues/1281 and https://github.com/NVIDIA/dgx-spark-playbooks/issues/117
    # (titles and first lines): a 404 or "Entry not found" from a model download is no route the server lacks
    assert _first_class("[Dead link] OpenAI language model\nIn parameters > Language model, unable to download the "
                        "OpenAI GPT-OSS 20B model. The log report a 404 error.") == "load-failure"
    assert _first_class('Multi-agent chatbot: gpt-oss-20b GGUF download returns "Entry not found"') == "load-failure"
    # while a 404 from an API route is still the route class
    assert _first_class("openai.NotFoundError: Error code: 404 - POST /v1/responses on llama-server with "
                        "gpt-oss-20b") == "route-missing"


def test_a_client_that_cannot_connect_to_the_model_is_unreachable():
    # https://github.com/codingmoh/open-codex/issues/15 (trimmed)
    text = ("Could not connect to Model.\nPS C:\\Users\\arshi> open-codex --ollama --model gpt-oss:20b \"hello\"\n"
            "Using Ollama with model: gpt-oss:20b\nCould not connect to Model.\n")
    assert _first_class(text) == "unreachable"


def test_a_training_runs_loss_gone_wrong_is_broken_numbers():
    # https://github.com/tenstorrent/tt-blacksmith/issues/542 and https://github.com/modelscope/ms-swift/issues/5627
    # (their first lines): a fine-tuning run's loss of -inf, or its loss "anomaly", is the numbers, not a load failure
    blacksmith = ("`-inf` appearing in GPT-OSS FSDP training\n### Describe the bug\nDuring training, after ~30 training "
                  "steps (which show correct loss curve) I see negative infinity in the loss\n"
                  "INFO:tt-gpt-oss-20b-test:Current loss and step: -inf 7\n")
    ex = explain_text(blacksmith, allow_download=False)
    assert "garbage" in ex.facets.failure and ex.facets.phase == "training"
    assert ex.triage[0].cls.id == "garbage-output"
    assert _first_class("gpt-oss sft开启router_aux_loss_coef loss异常\n**Describe the bug**\n"
                        "gpt-oss sft训练开启router_aux_loss_coef之后loss异常：\nrouter_aux_loss_coef = 0.9\n") == \
        "garbage-output"
    # a healthy loss is no failure, nor a packet loss
    assert "garbage" not in explain_text("gpt-oss-20b LoRA training: {'loss': 0.05, 'grad_norm': 1.2} then "
                                         "packet loss: 0% on the node", allow_download=False).facets.failure


def test_a_settings_comment_in_pasted_code_is_no_failure():
    # https://github.com/unslothai/unsloth/issues/3430 (trimmed): "but slower" is a comment on a setting, the
    # failure is the missing config
    text = ("[Bug] RuntimeError: Unsloth: No config file found - are you sure the `model_name` is correct? for gpt-oss "
            "colab notebook\nfrom unsloth import FastLanguageModel\nmax_seq_length = 768 # Can increase for longer RL "
            "output\nlora_rank = 4 # Larger rank = smarter, but slower\nmodel, tokenizer = "
            "FastLanguageModel.from_pretrained(\n    model_name = \"unsloth/gpt-oss-20b\",\n)\n")
    assert _first_class(text) == "load-failure"


def test_prose_where_json_was_asked_is_structured_output():
    # https://github.com/wenlzhang/obsidian-task-chat/blob/5a45278e9c8675d7c8adaa59e44e2106e61c3588/docs/dev/OLLAMA_JSON_OUTPUT_FIX_2025-01-24.md
    # (its failure lines)
    text = ("User testing `gpt-oss:20b` model via Ollama discovered critical JSON parsing failures in Task Chat mode:\n"
            "1. **JSON Parsing Error:**\n   Query parsing error: SyntaxError: Unexpected token '#', \"## 1. 句法解析\"..."
            " is not valid JSON\n2. **Model returned linguistic analysis instead of JSON:**\n")
    assert _first_class(text) == "structured-output"


def test_no_reasoning_and_cut_off_answers_are_their_classes():
    # https://github.com/gatewaybuddy/forgekeeper/blob/HEAD/DIAGNOSIS_GPT_OSS_ISSUES.md (its headings)
    ex = explain_text("GPT-OSS-20B Issues\n### Issue 1: No Reasoning Output\n### Issue 2: Context Cutoff (Incomplete "
                      "Responses)\nLLAMA_MODEL_CORE=/models/gpt-oss-20b-mxfp4.gguf\n", allow_download=False)
    assert {h.cls.id for h in ex.triage[:2]} == {"empty-or-reasoning-only", "context-length"}


def test_a_kernel_block_too_large_is_the_kernel_class():
    # https://github.com/unslothai/unsloth/issues/3196 (its title)
    assert _first_class("[Bug] gpt-oss-20b: Fine tuning fails with 'XBLOCK' too large") == "kernel-hardware"


def test_a_training_runs_searches_go_to_the_training_trackers():
    # https://github.com/tenstorrent/tt-blacksmith/issues/542 (its first lines): no engine is named, the run is a
    # fine-tuning run, so the searches go where such runs' problems are reported, not to the serving engines
    ex = explain_text("`-inf` appearing in GPT-OSS FSDP training\nDuring training, after ~30 training steps I see "
                      "negative infinity in the loss\n", allow_download=False)
    repos = [t["repo"] for t in ex.search_hint()["trackers"]]
    assert repos[0] == "huggingface/transformers" and "vllm-project/vllm" not in repos
    assert [s["tracker"] for s in ex.triage[0].searches][0] == "huggingface/transformers"
    # a serving text still searches the engines
    served = explain_text("gpt-oss-20b on vLLM answers with gibberish", allow_download=False)
    assert "huggingface/transformers" not in [s["tracker"] for s in served.triage[0].searches]


# https://github.com/bluevulpine/flux-talos/blob/20fcbe1ff41ac285fdff6a1a4ce81559ad9f3c0e/docs/runbooks/spark-vllm-evaluation.md
HARMONY_UNDER_CONCURRENCY = """### The real disqualifier: gpt-oss on vLLM is UNRELIABLE under concurrency

Once serving, concurrent requests fail with HTTP 500:

```
openai_harmony.HarmonyError: channel marker present but no channel value found in header
```

**37-100% of requests fail under concurrency.** Ollama ran the identical
payloads at c=1, 4 and 8 with **zero** failures.
"""

# https://github.com/padeoe/codex-vllm-adapter/blob/26276e744a51a23214ebf34a0b45ab4e104867e5/docs/MODEL-COMPATIBILITY.md
HARMONY_AFTER_TOOL_CALL = """| ...then | **500 `HarmonyError: Unexpected token 12606 while expecting start token 200006`** |
| **Prompt that induces a tool call, tool declared** | **500 HarmonyError** |

The crash arrives exactly when the model emits a tool call, with or without Codex in the
picture, streaming or not.
"""


def test_a_parser_error_other_causes_print_is_a_lead_without_its_setting():
    # the Harmony parser's messages follow many causes (a tool call after a stale stop token, a fine-tuned model's
    # stray token, ignore_eos, concurrency, speculative decoding): the quote names the class, the setting the cause
    ex = explain_text(HARMONY_UNDER_CONCURRENCY, allow_download=False)
    assert not [m for m in ex.matches if m.confidence in ("high", "medium")], \
        [(m.entry.id, m.confidence) for m in ex.matches]
    top = ex.matches[0]
    assert top.entry.id == "harmony-malformed-header-strict-parser"
    assert any("other causes print this message too" in ev for ev in top.evidence)
    assert ex.triage[0].cls.id == "harmony-parse"
    # with the issue's own setting in the text (a tool call), the same kind of quote is a diagnosis
    ex = explain_text(HARMONY_AFTER_TOOL_CALL, allow_download=False)
    assert ex.matches[0].entry.id == "stale-generation-config-call-token"
    assert ex.matches[0].confidence in ("high", "medium")


def test_ignore_eos_in_the_text_makes_the_200002_error_its_entry():
    bare = "openai_harmony.HarmonyError: Unexpected token 200002 while expecting start token 200006"
    found = explain_text(bare, allow_download=False).matches
    assert not [m for m in found if m.confidence in ("high", "medium")], [(m.entry.id, m.confidence) for m in found]
    assert "ignore-eos-return-token-200002" in [m.entry.id for m in found]
    found = explain_text("vllm bench serve --ignore-eos with gpt-oss-20b fails:\n" + bare, allow_download=False).matches
    assert found[0].entry.id == "ignore-eos-return-token-200002" and found[0].confidence in ("high", "medium")


def test_a_speculators_name_alone_is_not_the_rocm_issue():
    # https://github.com/vllm-project/vllm/issues/32921 (RTX 5090, no ROCm): the EAGLE3 speculator every user names
    text = """[Bug]: gpt-oss-20b streaming last reasoning content part into content
- --speculative-config
- '{"model":"RedHatAI/gpt-oss-20b-speculator.eagle3","num_speculative_tokens":3,"method":"eagle3"}'
running on 5090 and `0.14.0` using stream=false, the tool use result is ok using stream=true, the reasoning_content
leak the last chunk into content"""
    found = explain_text(text, allow_download=False).matches
    rocm = [m for m in found if m.entry.id == "vllm-rocm-gptoss-triton-attn-spec-decode-no-output"]
    assert not rocm or rocm[0].confidence == "low"


def test_harmony_like_markup_under_another_models_name_is_not_gpt_oss():
    # https://github.com/snagnever/macstudio-local-llm/blob/fa2edf6d02a446e9df078f0ff22d918187b3654d/docs/models/gemma-4-26b-a4b/channel-token-leak-writeup.md
    text = """# Gemma 4 26B-A4B leaks raw `<|channel|>thought` markers and loops on Hermes

**Symptom (exact):** `gemma-4-26b-a4b-it-mlx@6bit` on Hermes emits nothing but repeated
channel headers —

```
<|channel>thought <channel|>

<|channel>thought <channel|>
```
"""
    found = explain_text(text, allow_download=False).matches
    assert not [m for m in found if m.confidence in ("high", "medium")], [(m.entry.id, m.confidence) for m in found]


@pytest.mark.parametrize("text, cls", [
    # https://github.com/jgavinray/gpt-oss-executor/blob/1d0812e795d2f77ed1affc5926ca7bcc4f520244/README.md
    ("### System role messages return 0 choices\nSending a `{\"role\": \"system\", ...}` message causes vLLM to return "
     "`choices: []` with no error.", "empty-or-reasoning-only"),
    # https://github.com/indra-sapyoung/runpod-gptoss-worker/blob/fac4b144830888bb3e2485569ac6a61d79a8e7f2/docs/DOCKER_BUILD_FIX_REPORT_20260212.md
    ("**Goal:** Build vLLM v0.15.1 from source on CUDA 12.8 for RTX 5090 (Blackwell)\n"
     "### Issue 5: PyTorch 2.6 Lacks Blackwell FP8 Types\n**Error:**\n```\n"
     "/tmp/vllm/csrc/quantization/marlin/marlin.cu(587): error: enum \"c10::ScalarType\" has no member "
     "\"Float8_e8m0fnu\"\n```", "install-build"),
    # https://github.com/Idk507/gpt-oss-finetuning/blob/214bf838bc11361c8e15f4db35e49cad40ecddcb/gpt_oss_finetuning.ipynb
    ("==((====))==  Unsloth 2025.8.8: Fast Gpt_Oss patching. Transformers: 4.55.2.\n"
     "   \\\\   /|    Tesla T4. Num GPUs = 1. Max memory: 14.741 GB. Platform: Linux.\n"
     "Unsloth: Gpt_Oss does not support SDPA - switching to eager!\n"
     "--> 172                 raise RuntimeError(\"No executable batch size found, reached zero.\")\n"
     "RuntimeError: No executable batch size found, reached zero.", "oom"),
    # https://github.com/AmineMabrouk17/nanobrowser-free-ai/blob/20f3841f80dc4e925bad76408c7fc02935373c4f/README.md
    ("1. **Groq `gpt-oss` tool-call error (real bug, partial fix).**\n   Nanobrowser forces the LLM to return its plan "
     "via a *forced tool call* named\n   `json`.\n   `attempted to call tool 'json' which was not in request.tools` "
     "(HTTP 400).", "tool-calls"),
    # https://github.com/vuissoz/dgx-spark-agentic-stack/blob/553e641cc3588ecb0483831b259c6d255ae454f0/.beads/issues.jsonl
    ("Fix model routing for gpt-oss models\n**Problem**: When calling gpt-oss:20b or other gpt-oss models from "
     "OpenWebUI, the gate was routing them to the OpenAI backend due to the 'gpt-*' pattern match, causing 503 "
     "backend_auth_error.", "auth"),
    # https://github.com/OmuNaman/gpt-oss-20b-c/blob/7bc77e7c604d191958681db849aa3a627e21003f/benchmark_results/SUMMARY.md
    ("## Java Engine (gpt-oss.java) — DISQUALIFIED\nAmazon's gpt-oss.java produces **non-functional output** on this "
     "hardware:\n- **temp=0**: All `!` tokens (degenerate greedy)\n- **temp=0.1**: Random multilingual garbage\n"
     "- Requires `-Xmx14g` heap (default OOMs)\nGenerate: 0 tokens in 0.282 seconds (0.000 tokens/s)",
     "garbage-output"),
    # https://github.com/vllm-project/vllm/issues/31033
    ("[Bug]: gpt-oss-20b fails to start when using W4A8 Marlin with VLLM_MARLIN_INPUT_DTYPE=int8\n"
     "When starting gpt-oss-20b w4a8 specifically with the int8 marlin backend, I see a kernel selection error.",
     "load-failure"),
])
def test_what_the_text_says_of_the_failure_picks_the_class(text, cls):
    ex = explain_text(text, allow_download=False)
    assert ex.triage and ex.triage[0].cls.id == cls, [(h.cls.id, h.basis, h.why) for h in ex.triage]


def test_a_decimal_memory_size_is_read_whole():
    ex = explain_text("Tesla T4. Num GPUs = 1. Max memory: 14.741 GB. Platform: Linux.\nCUDA out of memory",
                      allow_download=False)
    assert ex.facets.hardware["memory_gb"] == 15


def _confident(found, entry_id):
    return [m for m in found if m.entry.id == entry_id and m.confidence in ("high", "medium")]


def test_a_notice_every_load_prints_is_no_diagnosis_of_the_crash_after_it():
    # https://github.com/kbllm149-hub/llm-KB/blob/ce7e62f840485a57839aee54170ed298ff06db47/gpt_oss_(20B)_Fine_tuning.ipynb
    text = """==((====))==  Unsloth 2025.8.9: Fast Gpt_Oss patching. Transformers: 4.55.4.
   \\\\   /|    NVIDIA GeForce RTX 5090 Laptop GPU. Num GPUs = 1. Max memory: 23.889 GB. Platform: Windows.
O^O/ \\_/ \\    Torch: 2.8.0+cu128. CUDA: 12.0. CUDA Toolkit: 12.8. Triton: 3.4.0
Unsloth: Gpt_Oss does not support SDPA - switching to eager!
Loading checkpoint shards: 100%|##########| 4/4 [00:19<00:00,  4.86s/it]
The Kernel crashed while executing code in the current cell or a previous cell."""
    found = explain_text(text, allow_download=False).matches
    assert not _confident(found, "gptoss-attention-sinks-backend-unsupported"), [(m.entry.id, m.confidence) for m in found]
    # the same notice as the subject of a report still finds its issue; transformers' refusal of SDPA is an error
    asked = explain_text("I see the following warning when fine-tuning GPT-OSS\n"
                         "Unsloth: Gpt_Oss does not support SDPA - switching to eager!", allow_download=False).matches
    assert asked and asked[0].entry.id == "gptoss-attention-sinks-backend-unsupported"
    error = explain_text("After I trained and loaded the model for use, I got this error:\nGptOssForCausalLM does not "
                         "support an attention implementation through torch.nn.functional.scaled_dot_product_attention "
                         "yet.", allow_download=False).matches
    assert _confident(error[:1], "gptoss-attention-sinks-backend-unsupported")


def test_a_vertex_model_route_alone_is_not_the_gemini_client_issue():
    # https://github.com/Secure-Reasoning-Lab/CRC-Evaluate/blob/62eb250f084efa7363d9026fb20e778da759bfef/.claude/skills/agent-smoke-test-runner/SKILL.md
    text = ("6. **`gpt-oss-120b`** partially works — litellm tries Anthropic endpoint first (fails), then falls back "
            "to `vertex_ai/openai/gpt-oss-120b-maas`. Many requests fail before fallback kicks in")
    found = explain_text(text, allow_download=False).matches
    assert not _confident(found, "hosted-vertex-gpt-oss-maas-gemini-client"), [(m.entry.id, m.confidence) for m in found]
    # through a Gemini client it is the issue
    gemini = explain_text("pydantic-ai google-vertex:gpt-oss-120b-maas fails: google.genai.errors.ClientError: 400 "
                          "INVALID_ARGUMENT", allow_download=False).matches
    assert _confident(gemini[:1], "hosted-vertex-gpt-oss-maas-gemini-client")


def test_another_engines_issue_that_quotes_the_same_message_drops():
    # https://github.com/scient-lab/neuro_SI_pipeline/blob/aa8a5ffdb2876dbd0287c96be6d8f9fa5c76bdc2/docs/EXTRACT_GRAPHMERT_BUGS.md
    text = ("### C4 — `openai/gpt-oss-20b` MXFP4 quantization incompatible with vLLM 0.7.3\n\n- **Symptom**: "
            "`fact_score.py` crashed at vLLM model load with\n  `ValueError: Unknown quantization method: mxfp4. "
            "Must be one of [...]`.")
    found = explain_text(text, allow_download=False).matches
    sglang = [m for m in found if m.entry.id == "sglang-gptoss-mxfp4-intel-xpu-cpu-unknown-quantization"]
    assert sglang and sglang[0].confidence == "low" and any("the text is from vllm" in ev for ev in sglang[0].evidence)


def test_groqs_tool_argument_error_is_not_llama_cpps_issue_without_llama_cpp():
    # https://github.com/aaif-goose/goose/issues/4017 (the text as it would read if no Groq issue were known)
    text = ("Then configure failes with error `Request failed: Failed to parse tool call arguments as JSON "
            "(code: tool_use_failed, type: invalid_request_error) (status 400)`")
    found = explain_text(text, allow_download=False).matches
    assert not _confident(found, "llamacpp-gptoss-tool-arguments-history-500"), [(m.entry.id, m.confidence) for m in found]
    llama = explain_text("llama-server: Failed to parse tool call arguments as JSON after a few turns with gpt-oss",
                         allow_download=False).matches
    assert llama and llama[0].entry.id == "llamacpp-gptoss-tool-arguments-history-500"


def test_a_model_named_command_a_is_another_family():
    # https://github.com/ggml-org/llama.cpp/issues/14157
    text = ("Eval bug: Command-A forces full-prompt re-processing due to lack of cache data\nCohere Command-A Q4_K_S\n"
            "`forcing full prompt re-processing due to lack of cache data (likely due to SWA, see "
            "https://github.com/ggml-org/llama.cpp/pull/13194#issuecomment-2868343055)`")
    found = explain_text(text, allow_download=False).matches
    assert not [m for m in found if m.confidence in ("high", "medium")], [(m.entry.id, m.confidence) for m in found]


@pytest.mark.parametrize("text, cls", [
    # https://github.com/vllm-project/vllm/issues/22287 (a set-up section's pip install precedes the failure)
    ("[Bug]: gpt-oss-20b sometimes emits reserved tokens\n### Your current environment Install the PR ```bash uv pip "
     "install --pre vllm==0.10.1+gptoss --extra-index-url https://wheels.vllm.ai/gpt-oss/ ``` ### Describe the bug "
     "`gpt-oss-20b` emits raw reserved tokens about 12% of the time in my prompt `write a long poem`. Repro "
     "instructions: 1. Start server `vllm serve openai/gpt-oss-20b`", "harmony-leak"),
    # https://github.com/openai/openai-cookbook/issues/2330
    ("vLLM installation instructions outdated - PyTorch nightly build no longer available\n```\n× No solution found "
     "when resolving dependencies:  ╰─▶ Because there is no version of torch==2.9.0.dev20250804+cu128 and "
     "vllm==0.10.1+gptoss depends on torch==2.9.0.dev20250804+cu128, we can conclude that vllm==0.10.1+gptoss cannot "
     "be used.\n```", "install-build"),
    # https://blog.jqknono.com/it-it/blog/2026/02/09/openrouter-gpt-oss-120b-chinese-bug
    ("Registro di debug: il modello OpenRouter gpt-oss-120b non supporta le richieste in cinese\nRegistra "
     "un'esperienza di debug dell'API, in cui il modello gpt-oss-120b di OpenRouter restituiva un errore 429 per le "
     "richieste in cinese, mentre rispondeva normalmente a quelle in inglese.", "proxy-wrapped"),
])
def test_set_up_words_and_other_languages_statuses_pick_the_class(text, cls):
    ex = explain_text(text, allow_download=False)
    assert ex.triage and ex.triage[0].cls.id == cls, [(h.cls.id, h.basis, h.why) for h in ex.triage]


def test_a_routine_throughput_line_inside_an_error_line_is_no_slowness():
    # https://github.com/vllm-project/vllm/issues/27116 (the issue's log arrives as one line)
    text = ("[Bug]: vLLM failure (ray.exceptions.RayChannelTimeoutError) observed since v0.10.2, with tp=8, pp=4\n"
            "vLLM is crashing when I start inference workload, i.e. first chatbot request, on a distributed AI rig. "
            "(APIServer pid=426) INFO 10-07 12:50:14 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
            "Avg generation throughput: 0.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs (EngineCore_DP0 pid=610) ERROR "
            "10-07 12:51:42 [dump_input.py:69] Dumping input data for V1 LLM engine (v0.10.2) with config: "
            "model='openai/gpt-oss-120b'")
    ex = explain_text(text, allow_download=False)
    assert ex.triage and ex.triage[0].cls.id != "looping-slow", [(h.cls.id, h.basis, h.why) for h in ex.triage]
    assert not any("tokens/s" in w for h in ex.triage for w in h.why)


def test_the_fields_a_schema_error_lists_and_a_responses_empty_defaults_name_no_feature():
    # https://github.com/BerriAI/litellm/issues/14225 (Bedrock lists every field it would have accepted)
    text = ('"BadRequestError: BedrockException - {\\"message\\":\\"The model returned the following errors: Failed to '
            'deserialize the JSON body into the target type: thinking: unknown field `thinking`, expected one of '
            '`messages`, `model`, `store`, `reasoning_effort`, `max_tokens`, `stream`, `tools`, `tool_choice`, '
            '`parallel_tool_calls`, `user`, `function_call`, `functions` at line 1 column 212\\"}"')
    ex = explain_text(text, allow_download=False)
    assert "tools" not in ex.facets.features
    assert ex.triage and ex.triage[0].cls.id != "tool-calls", [(h.cls.id, h.why) for h in ex.triage]
    reply = explain_text('{"choices":[{"message":{"role":"assistant","content":"","refusal":null,"tool_calls":[]}}]}',
                         allow_download=False)
    assert "tools" not in reply.facets.features
    # a tool call that is None beside reasoning that meant to make one is the tool-call fault (no tool flags)
    meant = explain_text("ChatCompletionMessage(content=None, refusal=None, role='assistant', tool_calls=None, "
                         "reasoning='The user needs information that get_weather provides. I should call get_weather.')",
                         allow_download=False)
    assert "tools" in meant.facets.features


def test_llama_servers_context_refusal_in_a_python_repr_is_the_context_class():
    # an agent loop's log (the fourteenth set, tuned on since): the 400 is in the error body's Python repr, not after
    # "Error code:", and llama-server's words are "exceeds the available context size"
    text = ("### 10. Context Overflow Infinite Loop (P0)\n"
            "**Problem:** Agent gets stuck in infinite retry loop when context exceeds LLM's limit.\n"
            "Current token count: 132195\n"
            "LLM invocation error: {'code': 400, 'message': 'the request exceeds the available context size, try "
            "increasing it', 'type': 'exceed_context_size_error', 'n_prompt_tokens': 4, 'n_ctx': 131072}\n")
    ex = explain_text(text, allow_download=False)
    assert ex.facets.http_status == 400
    assert ex.triage[0].cls.id == "context-length" and ex.triage[0].basis == "shown"


def test_a_runner_killed_by_a_signal_is_out_of_memory_before_a_load_failure():
    # Ollama's words when the kernel's OOM killer ends its runner (Go's "signal: killed")
    text = ("gpt-oss:20b was pulled but inference on the CPU-only VM fails: Error: llama runner process has "
            "terminated: signal: killed")
    assert _first_class(text) == "oom"


def test_a_speed_named_without_a_judgement_is_a_measurement_not_a_slow_failure():
    # an eval log's metrics ("p50 latency", "tok/s") say nothing went slow; "poor performance" and "very less
    # throughput" do (vllm #27075, TensorRT-LLM #12933 titles)
    metrics = ("# Eval report: sql_repair = openai/gpt-oss-20b\nLatency per question: p50 0.38s, p95 2.40s, 45 tok/s "
               "throughput\nvLLM cannot load gpt-oss-120b on this host: it OOMs the 96 GB card every time\n")
    ex = explain_text(metrics, allow_download=False)
    assert "slow" not in ex.facets.failure
    assert ex.triage[0].cls.id != "looping-slow"
    for text in ("[Bug]: gpt-oss poor performance\ngpt-oss output tok/s is around 150 only on blackwell (b200)",
                 "[Usage]: Observing very less throughput with gpt-oss-120b on H100"):
        assert "slow" in explain_text(text, allow_download=False).facets.failure


def test_harmony_markup_inside_a_tool_call_is_a_tool_call_problem_first():
    # a tool name with the header glued on, refused by the provider's check: the markup is where the call broke
    text = ("Tool call validation error for repo_browser.open_file via comment channel: the tool call includes a "
            "channel tag (`repo_browser.open_file<|channel|>commentary`), which is rejected because the tool is not "
            "listed in request.tools. gpt-oss-120b on Groq.\n"
            '{"message":"Tool call validation failed: tool call validation failed: attempted to call tool '
            "'repo_browser.open_file<|channel|>commentary' which was not in request.tools\",\"code\":\"tool_use_failed\"}")
    ex = explain_text(text, allow_download=False)
    ids = [h.cls.id for h in ex.triage]
    assert ids[0] == "tool-calls" and "harmony-leak" in ids


def test_a_failure_the_text_rules_out_is_not_its_failure():
    # a report lists what it ruled out beside what it saw: "No OOM" is no out-of-memory failure
    text = ("Loading gpt-oss-120b-MXFP4.gguf split across three GPUs fills the VRAM, then it hangs forever.\n"
            "- No OOM, no swap storm, no dmesg errors\n")
    ex = explain_text(text, allow_download=False)
    assert "oom" not in ex.facets.failure and "hang" in ex.facets.failure
    assert ex.triage and ex.triage[0].cls.id != "oom"
    assert "oom" in explain_text("gpt-oss-120b: CUDA out of memory at load", allow_download=False).facets.failure


@pytest.mark.parametrize("text,cls", [
    # vllm-project/vllm#28894's title form: a perf issue is slowness
    ("[Bug]: [H200] GPT-OSS-120B + Triton MoE Backend Perf Issue\nat concurrency 4 one kernel takes most of a step",
     "looping-slow"),
    # vllm-project/vllm#24325: an EAGLE3 draft model's architecture refused while the engine's config is validated at
    # start is a load failure, not a rejected request
    ("vllm serve openai/gpt-oss-120b --speculative-config '{\"model\": \"nvidia/gpt-oss-120b-Eagle3\", "
     "\"method\": \"eagle3\"}'\n"
     "pydantic_core._pydantic_core.ValidationError: 1 validation error for SpeculativeConfig\n"
     "  Value error, Model architectures ['LlamaForCausalLMEagle3'] are not supported for now.", "load-failure"),
    # ... while a request's validation error is still the request's
    ("openai.BadRequestError: Error code: 400 - 1 validation error for ChatCompletionRequest: "
     "messages.0.content Input should be a valid string (gpt-oss-20b on vLLM)", "request-rejected"),
    # an app's json.loads of a JSON-mode reply cut off mid-string is structured output
    ("The fact-check step calls gpt-oss-20b with response_format={\"type\": \"json_object\"}, max_tokens=600.\n"
     "Every verdict failed: JSONDecodeError: Unterminated string starting at: line 1 column 237", "structured-output"),
    # vllm-project/vllm#29657's title: a performance drop on a B200 is slowness, not the B200's kernels
    ("[Bug]: GPT-OSS-120B Eagle-3 High concurrency perf drop\nB200 machine.\nOutput token throughput (tok/s): 10865.38",
     "looping-slow"),
    # ml-explore/mlx-lm#364: empty tokens in a stream are an empty answer, not Apple's Metal kernels
    ("Streaming fails with empty tokens in Japanese output\nmlx_lm.server sends an empty character randomly which "
     "causes the client to stop receiving following tokens (gpt-oss-20b MLX 4bit, mlx-metal 0.28.0)",
     "empty-or-reasoning-only"),
    # ollama/ollama#11745: running forever with nothing returned (an AMD CPU in the report is no kernel fault)
    ("gpt-oss:120b running forever and not displaying/returning anything\nOllama version 0.11.2, GPU Nvidia, CPU AMD",
     "looping-slow"),
    # o4k3n/soc-poc-1's README: vLLM's start-up memory check on a DGX Spark (GB10) is out of memory
    ("vllm 0.24.0, openai/gpt-oss-120b on one GB10 with 128 GB unified memory.\nThe first boot failed with \"No "
     "available memory for the cache blocks\" and Available KV cache memory: -1.95 GiB", "oom"),
    # chaosreload/aws-hands-on-lab: the model calling the same tool in an endless loop is a tool-call failure
    ("GPT-OSS on Bedrock server-side tools: the model calls the same tool in an endless loop and never writes a "
     "final text reply (tool call 40+ times until the default max_tool_calls)", "tool-calls"),
])
def test_what_the_failure_is_picks_the_class_not_where_it_was_seen(text, cls):
    assert _first_class(text) == cls


def test_falling_draft_acceptance_or_cache_hits_are_slowness():
    # what speeds speculative decoding and caching up, falling (vllm-project/vllm#41838 and #32802 titles)
    for text in ("[Bug]: Eagle 2/3 acceptance length regression over time (gpt-oss-120b, vLLM 0.17.1)",
                 "[Bug]: GPT-OSS 0% prefix cache hits with hybrid attention + EAGLE"):
        assert "slow" in explain_text(text, allow_download=False).facets.failure, text


def test_reasoning_in_the_answer_is_a_leak_and_an_expected_behaviour_is_not():
    # vercel/ai#14720's kind: Bedrock's gpt-oss reasoning tags in the answer text
    text = ("Through Bedrock Converse, gpt-oss-120b put <reasoning>…</reasoning> in the answer text in 2 of 5 turns, "
            "besides its proper reasoning blocks.")
    ex = explain_text(text, allow_download=False)
    assert "leak" in ex.facets.failure
    assert "harmony-leak" in [h.cls.id for h in ex.triage]
    said = ("think=None: tags like <think> and </think> should be left untouched in the message.content field, but "
            "gpt-oss:20b on Ollama still returns thinking and content separately")
    assert "leak" not in explain_text(said, allow_download=False).facets.failure


def test_a_reply_the_report_says_was_not_truncated_is_no_context_overflow():
    text = ("gpt-oss-20b sometimes returns literal {} (not truncated, a deliberate empty object) when the evidence is a "
            "dense news page")
    assert _first_class(text) != "context-length"


def test_llama_cpps_command_line_tools_name_the_engine():
    # llama.cpp's CLI and bench binaries are llama.cpp as much as llama-server is
    for tool in ("llama-cli", "llama-bench"):
        ex = explain_text(f"HIP_VISIBLE_DEVICES=0,1 ./{tool} -m gpt-oss-120b-MXFP4.gguf -ngl 999 hangs forever",
                          allow_download=False)
        assert ex.facets.engine and ex.facets.engine["name"] == "llama.cpp", tool


def test_a_missing_c_header_is_named_as_a_build_failure():
    # nijaru/aircher's FEDORA_SETUP.md: torch.compile could not build its C helper (no Python.h): the install-build
    # class is among the classes (its set-up words still let the memory class come first on that text)
    text = "vllm serve openai/gpt-oss-20b\n**Error**: `fatal error: Python.h: No such file or directory`"
    assert "install-build" in [h.cls.id for h in explain_text(text, allow_download=False).triage]


def test_a_process_id_and_logged_launch_settings_state_no_failure():
    # vllm-project/vllm#30269: "pid=482" is no HTTP 482, and vLLM's logged launch settings (tool parser and all) say
    # how it runs, not what failed: neither line is where the triage reads the failure
    from gptoss_doctor.explain.triage import focus_of

    args = ("vllm-worker-node | (APIServer pid=482) INFO 12-08 07:44:22 [utils.py:253] non-default args: "
            "{'enable_auto_tool_choice': True, 'tool_call_parser': 'openai', 'model': '/models/openai/gpt-oss-120b'}")
    pid = "vllm-worker-node | (APIServer pid=482) INFO 12-08 07:44:25 [api_server.py:1] Starting vLLM API server"
    text = "\n".join(["[Bug]: Multi-node deployment fails with TP=1 and PP=2", args, pid])
    focus = focus_of(text)
    assert "deployment fails" in focus and "tool_call_parser" not in focus and "Starting vLLM" not in focus
    assert "HTTP 500" in focus_of("HTTP 500 from the server\n" + pid)


def test_memory_named_between_out_of_and_memory_is_out_of_memory():
    # vllm-project/vllm#37096: "will run out of CUDA memory for gpt-oss-120b on GH200" is an OOM report
    for text in ("[Bug]: v0.17.0-aarch64 onwards will run out of CUDA memory for gpt-oss-120b on GH200 144GB",
                 "gpt-oss-20b ran out of VRAM at 32k context"):
        ex = explain_text(text, allow_download=False)
        assert "oom" in ex.facets.failure, text
        assert ex.triage[0].cls.id == "oom", (text, [h.cls.id for h in ex.triage])
    assert "oom" not in explain_text("gpt-oss-20b answers are out of date", allow_download=False).facets.failure


def test_structured_output_spelled_with_a_hyphen_or_as_schema_valid_json_is_the_feature():
    for text in ("a small structured-output benchmark: gpt-oss-20b failed the server-side schema validation",
                 "gpt-oss-120b failed to produce schema-valid JSON on roughly one call in four"):
        assert "structured-output" in explain_text(text, allow_download=False).facets.features, text


def test_tritons_fp8_type_missing_on_an_older_gpu_is_a_kernel_problem():
    # an A10G (Ampere) running gpt-oss-20b through vLLM: Triton has no fp8e4nv before Ada / Hopper
    text = ("LLM loaded but inference fails: `fp8e4nv not supported in this architecture`\n"
            "ValueError(\"type fp8e4nv not supported in this architecture. The supported fp8 dtypes are "
            "('fp8e4b15', 'fp8e5')\")")
    assert "kernel-hardware" in [h.cls.id for h in explain_text(text, allow_download=False).triage]


def test_empty_tool_fields_of_a_pasted_answer_do_not_make_a_text_about_tools():
    # vllm-project/vllm#25687: a launch command without tool flags and a pasted chat completion whose empty default
    # fields name tools ("tool_calls": [], "function_call": null); the question is the token count, not a tool call
    from gptoss_doctor.explain.match import launch_evidence, match_text

    text = ("[Bug]: Token count wrong ?\ndocker run --gpus all -p 8000:8000 vllm/vllm-openai:v0.10.1 --model "
            "openai/gpt-oss-20b --max-model-len 16000\nthe result is\n"
            '{"choices": [{"message": {"role": "assistant", "content": "In the moonlit alley", "refusal": null, '
            '"function_call": null, "tool_calls": [], "reasoning_content": "We need a story."}}], '
            '"usage": {"prompt_tokens": 81, "total_tokens": 190}}')
    assert launch_evidence(text) == {}
    assert all(m.confidence == "low" for m in match_text(text, limit=3))
    # the same command in a text about a tool call is that entry's evidence
    assert "gptoss-server-tool-parser-not-enabled" in launch_evidence(text + "\nand tool calls come back as text")


# https://github.com/Rian-T/tabib-eval/blob/058427ead02eb24e2543483ec7cc3d99c65f6672/docs/DEFECTS.md
HEADER_ERRORS_IN_AN_EVAL = """## Serving flags we never read, found by reading the model's own recipe

`gpt-oss-20b` produced 796 `HarmonyError: unexpected tokens remaining in message
header` in two hours, the server answering 500 each time; the other four models
produced zero."""


def test_a_quoted_message_outranks_entries_that_only_share_words():
    # the quote is a lead (its entry's own setting is not in the text), but the entries that merely mention a
    # HarmonyError share only words with the text: the issue about that very message comes first, still low
    ex = explain_text(HEADER_ERRORS_IN_AN_EVAL, allow_download=False)
    top = ex.matches[0]
    assert top.entry.id == "harmony-malformed-header-strict-parser", [m.entry.id for m in ex.matches]
    assert top.confidence == "low"
    assert any("other causes print this message too" in ev for ev in top.evidence)
    assert not [m for m in ex.matches if m.confidence in ("high", "medium")]


def test_a_model_that_kept_writing_or_did_not_answer_in_minutes_is_looping_or_slow():
    # model-selection notes of the eighteenth independent set (a thesis' NIM table, a Kdenlive MCP panel's README)
    for text, kind in (("`gpt-oss-20b` kept writing past the JSON until it hit the 2,048-token limit.", "loop"),
                       ("`hermes3:8b` never did (a runaway loop), and `gpt-oss:20b` did not answer in four minutes "
                        "on a 12 GB card", "hang")):
        ex = explain_text(text, allow_download=False)
        assert kind in ex.facets.failure, (text, ex.facets.failure)
        assert ex.triage[0].cls.id == "looping-slow", (text, [h.cls.id for h in ex.triage])
    # a person who kept trying is no model that kept writing
    assert "loop" not in explain_text("I kept trying gpt-oss-20b with vLLM and the server returned 500",
                                      allow_download=False).facets.failure


def test_japanese_words_for_slow_and_never_finishing_are_read():
    # a Japanese devlog: gpt-oss-safeguard:20b on Ollama thinks very long and never finishes
    text = ("gpt-oss-safeguard:20b（ローカルモデル）\n残念ながら思考時間が非常にかかる問題があり、最初の数手しか対戦できませんでした。\n"
            "- 03:31: 思考開始（完了しない）")
    ex = explain_text(text, allow_download=False)
    assert {"slow", "hang"} & set(ex.facets.failure), ex.facets.failure
    assert ex.triage[0].cls.id == "looping-slow", [h.cls.id for h in ex.triage]


# https://github.com/motte12345/ai-roundtable/blob/f548d231302354c3814c4161b2e4cad3c8ed8e1f/KNOWLEDGE.md
EMPTY_ON_GROQ = """## 2026-05-09: Groq Llama 4 系のモデル ID と gpt-oss-120b の癖

### 調査
`GET https://api.groq.com/openai/v1/models` で利用可能モデルを確認:
- 他の70B+ クラス: `openai/gpt-oss-120b`, `qwen/qwen3-32b`, `groq/compound`

### gpt-oss-120b の罠
代替候補として gpt-oss-120b も試したが:
- …`message.content` が空になる
- `reasoning_effort: 'low'` を付けても、日本語プロンプトを誤解（150〜250字 → 「150x250 ピクセルの画像生成」と解釈）して指示崩壊
- 安定運用には向かない"""


def test_the_setting_names_where_not_what():
    # names of engines, providers and clients count half among the words that rank: an empty answer on Groq is the
    # empty-answer issue, not a Groq-specific one that shares the provider's name (at full weight the reasoning-effort
    # issue, which names Groq in its variants, came first)
    from gptoss_doctor.explain import rank

    q = rank.damp_setting({"groq": 2.0, "groq api": 1.0, "empty": 1.0, "": 3.0})
    assert q == {"groq": 1.0, "groq api": 0.5, "empty": 1.0, "": 3.0}
    assert rank._stem("cerebras") in rank.SETTING and "ollama" in rank.SETTING
    ex = explain_text(EMPTY_ON_GROQ, allow_download=False)
    assert ex.matches[0].entry.id == "gptoss-empty-answer-budget-spent-in-reasoning", [m.entry.id for m in ex.matches]
    assert ex.triage[0].cls.id == "empty-or-reasoning-only"


def test_triage_reads_a_turn_that_ended_in_reasoning_citation_marks_and_a_loader_that_aborts():
    # notes of the nineteenth independent set: saquibjawedbit/grabber docs/03-agent.md (Workers AI), Documind's
    # GUIDE.md (fullwidth citation marks from gpt-oss's browsing format), jpmicrosoft/llama.cpp's AGENTS.md (GGUF loader)
    cases = (
        ("Workers AI `gpt-oss-120b` is prompted through `env.AI.run` with a plain `input` string.\n"
         "`gpt-oss` sometimes stops *inside its reasoning channel* without emitting a final\nmessage.",
         "empty-or-reasoning-only"),
        ("| **Citations silently stopped working with `gpt-oss`** | Some completions came back with fullwidth CJK "
         "brackets (`【1】`) instead of ASCII `[1]`, despite the prompt explicitly specifying `[n]` |",
         "harmony-leak"),
        ('throw std::runtime_error(format("key %s has wrong array length; expected %u, got %u", ...));\n'
         "`gpt-oss-120b` MXFP4 GGUFs from openai-community … the loader aborts and the model will not start.",
         "load-failure"),
    )
    for text, cls in cases:
        ex = explain_text(text, allow_download=False)
        assert ex.triage and ex.triage[0].cls.id == cls, (text[:60], [h.cls.id for h in ex.triage])


# https://github.com/abiusch/penny_assistant/blob/c8a0ea922c80ed3004f7422f9586ca519e566489/docs/archive/phases/PENNY_CURRENT_STATE_COMPLETE.md
TOOL_SYNTAX_LEAKING = """# PENNY - COMPLETE CURRENT STATE DOCUMENTATION

**Last Updated:** October 28, 2025

### **Model Configuration (LM Studio):**
- **Model:** openai/gpt-oss-20b
- **Endpoint:** localhost:1234

## 🐛 **KNOWN ISSUES**

### **Current (Being Fixed):**

1. **Tool Syntax Leaking** ⏳ 67% Fixed
   - Issue: gpt-oss-20b outputs `<|channel|>` syntax

LLM generates: <|channel|>browser<|message|>{"query": "NEO robot"}"""


def test_raw_harmony_alone_is_a_lead_when_several_issues_explain_it():
    # raw Harmony in the answer shows the kind of fault (the harmony-leak class), which several known issues share;
    # with no message, pattern or launch command of one of them, and no clear lead, every such answer is a lead
    ex = explain_text(TOOL_SYNTAX_LEAKING, allow_download=False)
    assert ex.matches and not [m for m in ex.matches if m.confidence in ("high", "medium")], \
        [(m.entry.id, m.confidence) for m in ex.matches]
    assert any("another known issue explains it about as well" in ev for ev in ex.matches[0].evidence)
    assert ex.triage[0].cls.id == "harmony-leak"


# https://github.com/IlyaFeoktistov/flowai/blob/0fa7d04ef8eda6ae4d30dc093c902076cbf5f3fb/README.md
HARMONY_LEAK_IN_A_FORK = """`expert_streaming_enabled` потенциально ещё быстрее и для `gpt-oss:20b`, но
для НЕЁ (не для glm-4.7-flash) это НЕ рекомендуется для реальной работы:
живыми прогонами подтверждены две проблемы парсинга harmony-формата в этом
форке: (1) канал-разметка (`<|channel|>...<|message|>`) иногда ломается, и
рассуждения модели вместе со служебными токенами утекают в видимый ответ
вместо чистого текста; (2) тул-коллы иногда не долетают до настоящего
вызова инструмента вообще — модель пишет вызов прямо в тексте (в чужом, не
соответствующем реальной схеме формате), не через harmony-канал
`commentary to=functions.*`."""


def test_a_pattern_that_matched_only_harmony_markup_is_the_leak_not_its_cause():
    # "commentary to=functions." matches the generic raw-Harmony issue's pattern, but it is what every leak shows:
    # with another issue close behind, no answer is confident (a llama.cpp fork's own Harmony parsing, no entry)
    from gptoss_doctor.explain.match import MARKUP_ONLY_RE

    assert MARKUP_ONLY_RE.fullmatch("commentary to=functions.") and MARKUP_ONLY_RE.fullmatch(
        "<|channel|>analysis<|message|>")
    assert not MARKUP_ONLY_RE.fullmatch("open_file<|channel|>commentary")  # a tool name glued to a header: its own sign
    ex = explain_text(HARMONY_LEAK_IN_A_FORK, allow_download=False)
    assert ex.matches[0].entry.id == "raw-harmony-in-content-no-parser"
    assert not [m for m in ex.matches if m.confidence in ("high", "medium")], \
        [(m.entry.id, m.confidence) for m in ex.matches]
