"""What a text shows about the set-up it came from ("What I understood"): engine and version, client library,
proxy, hosted provider, API surface, streaming, features, phase, kind of failure, HTTP status, hardware, model.

The engine comes from what ``parse.py`` already found (its log hints and traceback frames): this module does not
detect engines again, it adds the version next to it and reads everything else. The facets rank and calibrate the
known issues (``match.py``: an entry that contradicts one drops) and select the triage classes (``triage.py``).

Client libraries are read from the exception classes they raise: ``openai.AuthenticationError`` (openai-python,
https://github.com/openai/openai-python), ``litellm.InternalServerError`` (https://github.com/BerriAI/litellm),
``langchain_openai`` / ``langchain_core`` frames, ``pydantic_ai.exceptions``, ``agents.exceptions`` (openai-agents),
``llama_index`` frames; hosted providers from LiteLLM-style route prefixes (``vertex_ai/…``, ``bedrock/…``,
``groq/…``) and their names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gptoss_doctor import rx as _rx
from gptoss_doctor import engines
from gptoss_doctor.explain.parse import Parsed, _Lazy

MAX_READ = 65536  # how much of a text the facets read (the start of a log says the most about its set-up)


def _table(pairs: list[tuple[str, str]], flags: int = re.I) -> list[tuple[str, _Lazy]]:
    """(name, lazily compiled regex) rows: the first row whose regex matches names the facet."""
    return [(name, _Lazy(p, flags)) for name, p in pairs]


# --- clients: the exception classes and module paths each library prints ---------------------------------------
CLIENTS: list[tuple[str, _Lazy]] = _table([
    ("litellm", r"\blitellm\.(?:[A-Z]\w*(?:Error|Exception)|exceptions\b)|site-packages/litellm/"),
    ("openai-agents", r"\bagents\.(?:exceptions|run|models)\b|\b(?:ModelBehaviorError|MaxTurnsExceeded|UserError)\b"
                      r"|site-packages/agents/|\bopenai[-_]agents\b"),
    ("langchain", r"\blangchain_(?:openai|core|community|ollama)\b|\blangchain\b|\bChatOpenAI\b|\bChatOllama\b"),
    ("llamaindex", r"\bllama_index\b|\bllama[- ]index\b|\bOpenAILike\b"),
    ("pydantic-ai", r"\bpydantic_ai\b|\bpydantic[- ]ai\b"),
    ("openai-python", r"\bopenai\.(?:[A-Z]\w*Error)\b|site-packages/openai/|\bOpenAI/Python\b|openai/_base_client\.py"),
    ("openai-node", r"\bOpenAI/JS\b|node_modules/openai/"),
], 0)
# the version a user agent or a package listing gives: "OpenAI/Python 1.99.1", "openai==1.99.1", "litellm 1.74.0"
CLIENT_VERSION = {
    "openai-python": _Lazy(r"(?:OpenAI/Python |\bopenai(?:==| version:? ?|\s+)v?)(\d+\.\d+\.\d+)", re.I),
    "litellm": _Lazy(r"\blitellm(?:==| version:? ?|\s+v?)(\d+\.\d+\.\d+)", re.I),
    "langchain": _Lazy(r"\blangchain(?:-openai|-core)?(?:==| version:? ?)(\d+\.\d+\.\d+)", re.I),
    "pydantic-ai": _Lazy(r"\bpydantic[-_]ai(?:-slim)?(?:==| version:? ?)(\d+\.\d+\.\d+)", re.I),
    "openai-agents": _Lazy(r"\bopenai-agents(?:==| version:? ?)(\d+\.\d+\.\d+)", re.I),
    "llamaindex": _Lazy(r"\bllama[-_]index(?:-core|-llms-openai-like)?(?:==| version:? ?)(\d+\.\d+\.\d+)", re.I),
}
# app clients the parser already hints at (codex, cline, …): they are clients too
APP_CLIENTS = ("codex", "openai-agents", "langchain", "llamaindex", "open-webui", "continue", "cline", "roo-code",
               "anythingllm", "aider", "pydantic-ai", "vercel-ai")

# --- proxies and hosted providers ------------------------------------------------------------------------------
PROXIES: list[tuple[str, _Lazy]] = _table([
    ("litellm", r"\blitellm\b"),
    ("openrouter", r"\bopenrouter\b"),
    ("portkey", r"\bportkey\b"),
    # the OpenAI-compatible gateways many Chinese deployments put in front of providers (QuantumNous/new-api,
    # songquanpeng/one-api); "oneapi" without the hyphen is Intel's oneAPI
    ("new-api", r"\bnew-?api\b"),
    ("one-api", r"\bone-api\b"),
])
PROXY_SEEN = _Lazy(r"\bmodel group\b|\bModel Group\b|\blitellm[_ -]proxy\b|\bproxy_server\b|:4000\b|\bLiteLLM Proxy\b",
                   re.I)
PROVIDERS: list[tuple[str, _Lazy]] = _table([
    ("vertex_ai", r"\bvertex_ai(?:_beta)?/|\bvertex[- ]?ai\b|\bvertex error\b|aiplatform\.googleapis\.com|"
                  r"\bgpt-oss-\d+b-maas\b|/publishers/openai/models/"),
    ("bedrock", r"\bbedrock(?:_converse)?/|\bbedrock\b|\bopenai\.gpt-oss-\d+b-1:0\b"),
    ("groq", r"\bgroq/|\bgroq\b"),
    ("azure", r"\bazure(?:_ai)?/|\bazure (?:ai|openai)\b|\bai foundry\b|\.openai\.azure\.com"),
    ("openrouter", r"\bopenrouter/|\bopenrouter\b"),
    ("together_ai", r"\btogether_ai/|\btogether(?:\.ai| ai)\b"),
    ("fireworks_ai", r"\bfireworks_ai/|\bfireworks(?:\.ai| ai)?\b"),
    ("cerebras", r"\bcerebras/|\bcerebras\b"),
    ("databricks", r"\bdatabricks/|\bdatabricks\b"),
    ("deepinfra", r"\bdeepinfra/|\bdeepinfra\b"),
    ("nebius", r"\bnebius/|\bnebius\b"),
    ("sambanova", r"\bsambanova/|\bsambanova\b"),
    ("huggingface", r"\binference providers\b|router\.huggingface\.co"),
    ("ollama-cloud", r"\bollama\.com/api\b|\bollama cloud\b|\bturbo mode\b"),
])

# --- API surface, streaming, features ------------------------------------------------------------------------
APIS = _table([
    ("responses", r"/v1/responses\b|\bresponses\.(?:create|stream)\b|\bresponses? api\b|\bprevious_response_id\b|"
                  r"\bresponse\.output_(?:text|item)\b"),
    ("ollama", r"/api/(?:chat|generate)\b|\bollama\.chat\b"),
    ("completions", r"/v1/completions\b|\bcompletions\.create\((?!.*messages)|\btext completion\b"),
    ("chat", r"/v1/chat/completions\b|\bchat\.completions\b|\bchat completions?\b|\bChatCompletion\b"),
])
STREAM_ON = _Lazy(r"\bstream\s*[=:]\s*(?:true|True)\b|\"stream\":\s*true|\bstreaming\b|\bstreamed\b|\bSSE\b|"
                  r"^\s*data: \{|\bdelta\b|\bchunk\b", re.I | re.M)
STREAM_OFF = _Lazy(r"\bstream\s*[=:]\s*(?:false|False)\b|\"stream\":\s*false|\bnon-stream(?:ing)?\b", re.I)
FEATURES = _table([
    ("tools", r"\btool[_ -]?calls?\b|\btools\s*[=:]|\btool_choice\b|\bfunction[_ ]call(?:ing|s)?\b|\bto=functions\.|"
              r"--tool-call-parser|--enable-auto-tool-choice|\btool use\b|\btool calling\b"),
    ("structured-output", r"\bresponse_format\b|\bjson_schema\b|\bstructured[ _-]?outputs?\b|\bschema[- ]valid\w*|"
                          r"\bguided_(?:json|grammar|decoding)\b|\bjson mode\b|\bgrammar\b|\bxgrammar\b|\boutlines\b"),
    ("reasoning", r"\breasoning(?:_effort|_content|\.effort)?\b|\bthinking\b|--reasoning-parser|\banalysis channel\b"),
    ("builtin-tools", r"\bcode_interpreter\b|\bweb_search(?:_preview)?\b|\bbrowser\.(?:search|open|find)\b|"
                      r"\bbuilt-?in tools?\b|--tool-server\b|\bpython tool\b"),
])

# --- phase and failure ------------------------------------------------------------------------------------------
PHASES = _table([
    # the install's own failures: a resolver, an import, a build or a compiler error on a source file
    ("install", r"\bNo matching distribution\b|\bResolutionImpossible\b|\bNo solution found when resolving\b|"
                r"\bModuleNotFoundError\b|\bImportError\b|\bnvcc fatal\b|\bfailed building wheel\b|"
                r"\bdependency conflict\b|\bcould not build wheels\b|\bundefined symbol\b|"
                r"\.(?:cu|cuh|cpp|cc|cxx|hpp)(?:\(\d+\)|:\d+(?::\d+)?):\s*(?:fatal )?error\b"),
    ("load", r"\bloading (?:the )?(?:model|weights|checkpoint)\b|\bload_model\b|\bllama_model_load\b|"
             r"\berror loading model\b|\bfailed to load model\b|\bsafetensors\b|\bmodel architecture\b|"
             r"\bunsupported (?:model )?architecture\b|\bLoading safetensors checkpoint\b|\bweight loading\b|"
             r"\bpull(?:ing)? manifest\b|\bcould not load\b|\bunable to load model\b"),
    ("startup", r"\bstart(?:ing|ed)? (?:the )?server\b|\bUvicorn running\b|\bApplication startup\b|"
                r"\bcapturing cuda graphs?\b|\bengine core initiali[sz]|\bwarm-?up\b|\bserve\b.*--|\bat start-?up\b|"
                r"\bfailed to start\b"),
    ("multi-turn", r"\bmulti-?turn\b|\bsecond (?:turn|request|message)\b|\bfollow-?up\b|\bprevious_response_id\b|"
                   r"\bconversation history\b|\bafter (?:the )?(?:first|tool) (?:call|result|turn)\b|"
                   r"\brole\W+tool\b|\btool results?\b"),
    ("mid-stream", r"\bmid-?stream\b|\bduring streaming\b|\bwhile streaming\b|\bstream (?:stops|cut|ends|broke)|"
                   r"\bin the middle of\b"),
    # a fine-tuning or RL run (its trainer, its loss log), when no serving phase is named
    ("training", r"\b(?:SFTTrainer|GRPOTrainer|DPOTrainer|trainer\.train\(|train(?:ing)?[ _/]loss|grad_norm|global_step|"
                 r"fine-?tun(?:e|ing) (?:fails?|failed|runs?|jobs?|crash\w*)|during (?:fine-?tuning|training)|"
                 r"training (?:runs?|loop|steps?|jobs?|fails?|failed|crash\w*)|"
                 r"(?:LoRA|QLoRA|SFT|GRPO|DPO|FSDP|DeepSpeed) (?:training|fine-?tun\w*))\b|微调|训练"),
    # the install's steps (a pip command, a wheel or an engine built from source): the phase only when the text names
    # no later one; a report's set-up section ("Your current environment: pip install …") precedes the failure it is
    # about (the tenth independent set: a vLLM report of reserved tokens in the output, installed with pip)
    ("install", r"\bpip install\b|\bBuilding wheel|\bcmake\b|\bbuild(?:ing)? [\w.-]+(?: v?[\d.]+\w*)? from source\b"),
])
# what healthy engines print in every log, in words that name a failure kind without being one: Ollama's offload
# report ("offloading 24 repeating layers to GPU", memory.weights.repeating="10.7 GiB"), vLLM's periodic metrics line
# ("Avg prompt throughput: 43.7 tokens/s"), its normal shutdown ("[shutdown] EngineCore: start mode=abort
# timeout=0s"), its compile warning ("This causes a latency spike"), llama-server's context size at load and its
# per-request summary ("n_ctx_slot = 131072", "stop processing: n_tokens = 78, truncated = 0") and an access log's
# timing field (latency=591.279083ms) — all seen in real logs (vLLM 0.26.0 and 0.32.0 and llama-server recorded here,
# Ollama's llm server log) —, and a log line that prints the prompt the server rendered (LocalAI's "DBG Prompt (after
# templating): <|start|>system…", vLLM's request log "prompt: '<|start|>system…'": its Harmony is the model's input,
# no output; llama-server's example_format line likewise). They are blanked before the failure kinds, the triage and
# the leak recogniser (artifacts.recognise) read a text: a pasted healthy log is no loop, slowness, crash, leak or
# context overflow
PROMPT_ECHO = r"\bprompt\b[^<\n]{0,40}[:=]\s*['\"]?\s*<\|start\|>[^\n]*"
ROUTINE = _Lazy(r"\boffloading \d+ repeating layers\b|\bmemory\.weights\.(?:non)?repeating\b|"
                r"\bAvg (?:prompt|generation) throughput: [\d.]+ tokens/s\b|"
                r"\bmode=abort timeout=|\bThis causes a latency spike\b|\bn_ctx\w* = \d+|\btruncated = 0\b|"
                r"\b(?:latency|duration|elapsed)=[\d.]+ ?(?:ns|µs|us|ms|s)\b|"
                # torch's deprecation warning at every vLLM start (2025): its "install" is no install failure
                r"\bThe pynvml package is deprecated\. Please install nvidia-ml-py instead\.(?: If you did not install "
                r"pynvml directly, please report this to the maintainers of the package that installed pynvml for you\.)?|"
                # llama-server's start-up line that shows the chat template on an example conversation
                # ("chat template, chat_template: …, example_format: '<|start|>system<|message|>…'", server.cpp): the
                # model's input rendered once at load, no output
                r"\bexample_format:\s*'[^']{0,6000}'|"
                # the empty default fields of every chat completion a client prints ('"tool_calls":[]', 'refusal=None'),
                # and the list of fields a schema error says it expected: names, no subject. (A tool call that is None
                # beside reasoning that meant to call one is the tool-call fault: 'tool_calls=None' stays.)
                r"[\"']?\b(?:tool_calls[\"']?\s*[:=]\s*\[\s*\]|(?:audio|refusal|annotations|reasoning_content|logprobs)"
                r"[\"']?\s*[:=]\s*(?:\[\s*\]|null|None))|\bexpected one of (?:`[^`\n]{1,40}`(?:,\s*|\s+or\s+)?){2,}|"
                + PROMPT_ECHO, re.I)


# a line of pasted code and its comment ("lora_rank = 4 # Larger rank = smarter, but slower"): the comment describes
# a setting, not the failure (group 1: the code, group 2: the comment)
CODE_COMMENT = _Lazy(r"^(\s*[A-Za-z_][\w.\[\]'\"]*\s*=\s*[^=\n#]+)(#[^\n]*)", re.M)


def without_routine(text: str) -> str:
    """``text`` with the routine log words above, and the comments of pasted code's settings, blanked (the same
    length: offsets into it still hold)."""
    if ROUTINE.search(text) is not None:
        text = ROUTINE.sub(lambda m: " " * len(m.group(0)), text)
    if "#" in text and CODE_COMMENT.search(text) is not None:
        text = CODE_COMMENT.sub(lambda m: m.group(1) + " " * len(m.group(2)), text)
    return text


FAILURES = _table([
    ("crash", r"\bseg\w{0,5}ation fault\b|\bsegfault\b|\bcore dumped\b|\bSIGSEGV\b|\bSIGABRT\b|\bEngineDeadError\b|"
              r"\bengine (?:core )?(?:died|dead|crashed)\b|"
              # (a tally of none is no crash: "crashes = 0/50", "0 crashes"; nor are jobs a person killed)
              r"(?<!\b0 )(?<!\bno )(?<!\bzero )\bcrash(?:es|ed|ing)?\b(?!\s*[:=]?\s*0\b)|"
              r"\bkilled\b(?!\s+(?:redundant|duplicate|stale|old|extra|idle)\b)|\bpanic:|\babort(?:ed)?\b|"
              r"\bexited with (?:code|status)\b|\bexit status [1-9]"),
    ("oom", r"\bout of (?:(?:CUDA|GPU|device|video|host) )?mem\w*|\bout of V?RAM\b|\bOOM(?:s|ed|ing)?\b|"
            r"\bOutOfMemoryError\b|\bcudaErrorMemoryAllocation\b|\bnot enough memory\b|"
            r"\binsufficient memory\b|\bfailed to allocate\b|\bKV cache\b.*\b(?:too small|larger than|not enough)\b|"
            r"\bhipErrorOutOfMemory\b|\bmemory required\b|\bErrorOutOfDeviceMemory\b|"
            # the allocator's own words (llama.cpp, Vulkan, ROCm): "Memory allocation failure", "unable to allocate"
            r"\bmemory allocation (?:failure|failed|error)\b|\b(?:unable|cannot|could not|can't) (?:to )?allocate\b|"
            # the kernel's OOM killer: the shell's "Killed" ending a line (a progress bar's last state), dmesg,
            # Docker's exit code 137, Kubernetes
            r"\bOOM[- _]?kill\w*|(?m:(?:^|(?<=[\]\s]))(?-i:Killed)\s*$)|\bKilled process \d+|\bexit(?:ed with)? (?:code|status) 137\b"),
    ("empty", r"\bempty (?:response|content|answer|output|string|message|tokens?|characters?|chunks?|deltas?)\b|"
              r"\bcontent(?:\"|')?\s*[:=]\s*(?:null|None|\"\"|'')|\breturns? (?:nothing|empty)\b|"
              r"\bnothing (?:is )?(?:returned|returns|comes back|came back|displayed)\b|"
              r"\bnot (?:displaying|returning|showing|outputting) (?:anything|any (?:text|output|answer|response))\b|"
              r"\bblank (?:response|answer|output)\b|\bno content\b|"
              r"\bcontent is (?:empty|null|None)\b|\bnull content\b|\bcontent (?:was|came back|comes back) (?:empty|null|None)\b|"
              r"\bno (?:\w+ )?(?:chunks|tokens|output|text|response|content) (?:was |were )?(?:returned|generated|produced)\b|"
              r"\b(?:0|zero)[- ]length (?:outputs?|responses?|completions?|answers?)\b|"
              r"\b(?:0|zero) (?:output|completion|generated) tokens\b|"
              # an answer without a single choice ("choices: []", "0 choices")
              r"\bchoices['\"]?\s*[:=]\s*\[\s*\]|\b(?:0|zero|no)[- ]choices?\b"),
    # (what repeats is the output: not a user who "repeated the query" or tried something "repeated multiple times")
    ("loop", r"(?<!\bI )(?<!\bwe )(?<!\bI've )(?<!\bwe've )\brepeat(?:s|ing|ed)?\b(?! (?:(?:it|this|that)\b|the (?:query|"
             r"request|call|command|steps?|test|run|download|pull|process)\b|(?:multiple|several|many|a few|\d+) times\b))"
             # (a log's message seen again and again is not output that repeats: "repeated `JSON parse failed` warnings")
             r"(?![^\n]{0,80}\b(?:warnings?|errors?|log (?:lines?|messages?))\b)|"
             r"\brepetition\b|\blooping\b|\bin an? (?:endless |infinite )?loop\b|"
             r"\b(?:endless|infinite) loop\b|\bendlessly\b|\bnever stops\b|\bover and over\b|"
             r"\b(?:thinking|reasoning|generation|output|response) loops?\b|\bloops? (?:in|during) (?:the )?"
             r"(?:thinking|reasoning|generation|output)\b|\bstuck in (?:a )?loops?\b|"
             # a model that does not stop where it should ("kept writing past the JSON until it hit the 2,048-token
             # limit", "a runaway loop"): the eighteenth independent set's model-selection notes
             r"\bkept (?:on )?(?:writing|generating|going|thinking|reasoning|talking|outputting|emitting|producing)\b|"
             r"\brunaway (?:loops?|generation|output|reasoning|thinking)\b"),
    # the server refused a parameter, field or value of the request (what it names is the object, not a symptom)
    # ("invalid argument" is also a CUDA error, "unrecognized arguments" a command line's: argument is not enough)
    ("rejected", r"\b(?:unsupported|unknown|unrecogni[sz]ed|unexpected|invalid) (?:param(?:eter)?|field|property)s?\b|"
                 r"\binvalid (?:JSON )?schema\b|"
                 r"\bdoes not support (?:the )?(?:param(?:eter)?s?|propert(?:y|ies)|fields?|arguments?)\b|"
                 r"\b(?:param(?:eter)?|property|field|argument)s? [`'\"]?[\w.\[\]-]+[`'\"]? (?:is|are) (?:unsupported|"
                 r"not supported|not allowed|not permitted|invalid)\b|\bExtra inputs are not permitted\b|"
                 r"\bUnsupportedParamsError\b|\bdoes not support [\w.]+ ?=[\w'\"]|"
                 # a quoted API field name (it has an underscore: reasoning_content, tool_choice) refused by name
                 r"[`'\"][\w.\[\]-]*_[\w.\[\]-]*[`'\"] (?:is|are) (?:unsupported|not supported|not allowed|not permitted)\b|"
                 r"\b(?:rejects?|rejected|refuses?|refused)\b[^.\n]{0,40}[`'\"][\w.\[\]-]*_[\w.\[\]-]*[`'\"]"),
    # (a speed named without a judgement, "p50 latency 0.38s", "45 tok/s", is a measurement, not a failure)
    ("slow", r"\bslow(?:er|ly|ness)?\b|\bslow-?downs?\b|\bperf(?:ormance)? (?:degradation|regression|drops?)\b|"
             r"\bperf(?:ormance)? (?:issues?|problems?|regressions?|bugs?)\b|"
             # what speeds speculative decoding and prompt caching up, falling: the drafts' acceptance, the cache's
             # hits ("acceptance length regression over time", "0% prefix cache hits with EAGLE", vllm #41838, #32802)
             r"\b(?:acceptance (?:length|rate)|(?:prefix[- ])?cache hit(?: rate)?s?)\b[^.\n]{0,40}?\b(?:regress\w*|"
             r"drops?|dropped|decays?|decayed|falls?|fell|degrad\w*)|\b(?:0(?:\.0)?|zero) ?%? (?:prefix[- ])?cache hits?\b|"
             r"\b(?:high|higher|huge|increased|poor) (?:latency|TTFT)\b|\b(?:latency|TTFT) (?:is |was )?(?:high|"
             r"higher|spikes?|increases?|regress\w*|degrad\w*)\b|\b(?:low|lower|less|poor) (?:throughput|tokens?/s|tok/s)\b|"
             r"\b(?:poor|bad|terrible|degraded|low) performance\b|"
             r"\b(?:throughput|tokens?/s|tok/s) (?:is |was )?(?:low|lower|drops?|dropped|regress\w*|degrad\w*)\b|"
             r"\btakes? (?:\d+ )?(?:minutes|seconds|forever|long)\b"),
    # output no healthy model writes, in the user's words (the artifact recogniser sees it in the output itself)
    ("garbage", r"\bgibb?e?r*i?sh\b|\bgarbage\b(?! collect)|"
                r"\bgarbled\b(?![^.\n]{0,30}\b(?:json|tool|arguments?)\b)|\bnonsens\w*|"
                r"\bword salad\b|\bincoherent\b|"
                r"\brandom (?:chars|characters|tokens|symbols|letters|words)\b|"
                r"\b(?:irrelevant|strange|weird|meaningless|bizarre|crazy|degenerate|unusable) (?:&\s*)?(?:\w+ )?"
                r"(?:outputs?|responses?|answers?|replies)\b|"
                # NaN logits sample token 0, which is "!" in o200k: a run of them is the model's output, not emphasis
                r"[\"'`:>]\s*!{4,}|!{10,}|\b(?:output|generat\w*|yields?|returns?|produces?|prints?|outputting)\W{0,20}!{3,}|"
                r"!{3,} in (?:the )?(?:generated|output|response)|\bNaNs? in (?:the )?logits\b|\bNaN logits\b|"
                r"\b(?:dropped|missing|skipped|lost)(?:/\w+)? tokens\b|\btokens (?:are|get|got|were) (?:dropped|skipped|lost)\b|"
                r"\b(?:answers?|responds?|replies) (?:is |are )?(?:completely |totally |always )?wrong\b|"
                r"\b(?:gives?|giving) (?:\w+ )?wrong answers\b|"
                # a training run's numbers gone wrong: a loss of NaN, -inf or exactly 0, a loss that explodes
                r"\bloss\b[^\n\d]{0,25}?(?<![\w.])(?:-?inf(?:inity)?|nan)\b|\bloss\W{0,4}[=:]\s*0(?:\.0+)?(?![\w.%])|"
                r"\bloss (?:is|becomes|became|goes to|went to|drops? to|dropped to|stays? at|stayed at) "
                r"(?:0|zero|nan|inf)\b|\binfinity in (?:the )?loss\b|"
                r"\bloss (?:spikes?|explod\w*|diverg\w*|anomal\w*|is abnormal)\b|loss\s*(?:异常|出现\s*(?:0|nan|inf))|"
                r"\bgrad_norm\W{0,5}(?:nan|inf)\b"),
    # the reasoning in the answer, said in words or shown in the tags a hosted API or a template wraps it in
    # ("gpt-oss-120b put <reasoning>…</reasoning> in the answer text"): the channels were not kept apart (raw
    # Harmony markup itself is the artifact recogniser's); the harmony-leak class is chosen by this failure kind
    ("leak", r"</?(?:reasoning|think(?:ing)?)>\W{0,4}(?:tags? )?(?:(?:appears?|shows?|ends?|end|is|are|up) ){0,2}"
             r"(?:in|into|inside) (?:the |its )?(?:answer|content|final|response|reply|output)s?\b|"
             r"\b(?:reasoning|thinking|analysis|chain[- ]of[- ]thought) (?:text )?"
             r"(?:leaks?|leaked|leaking|shows? up|showed up|appears?|appeared|ends? up) (?:in|into|inside) (?:the )?"
             r"(?:answer|content|final|response|reply|output|message)s?\b"),
    # a request or a server that stops answering with no error: stuck, not slow and not dead
    # (a whole machine that freezes is out of memory, not a stuck request)
    ("hang", r"\bhang(?:s|ing)?\b(?! on\b)|\bhung\b|(?<![\w-])(?:freez(?:e|es|ing)|froze(?:n)?)\b(?!-)"
             r"(?![^.\n]{0,30}\b(?:system|mac|machine|computer|pc|laptop|desktop)\b)|\bstops? responding\b|"
             r"\bunresponsive\b|\bnever (?:returns|finishes|completes|responds|answers)\b|"
             # no answer within a stated time ("did not answer in four minutes on a 12 GB card")
             r"\b(?:did ?n[o']t|does ?n[o']t|never|failed to) (?:answer|respond|reply|return|finish|complete)\w*"
             r"(?: anything)? (?:with)?in (?:\d+|a few|several|one|two|three|four|five|ten|fifteen|twenty|thirty) "
             r"(?:minutes?|mins?|hours?)\b|\b(?:runs?|running|ran|"
             r"generat(?:es|ing)|thinks?|thinking|spins?|spinning) forever\b|"
             r"\b(?:gets?|got|is|was|remains?|stays?) stuck\b|\bstuck (?:at|on|after|in|while|during|forever)\b"),
])

# a failure the text says did not happen ("No OOM, no swap storm", "it does not crash", "without any hang"): the
# word right before the failure's name denies it (a report lists what it ruled out beside what it saw)
NEGATION = _Lazy(r"(?:\b(?:no|not|without|never|nor)|n't)\s+(?:an?\s+|any\s+)?$", re.I)


def _negated(text: str, start: int) -> bool:
    """Whether the words just before ``start`` deny what is named there."""
    return NEGATION.search(text[max(0, start - 16):start]) is not None


HTTP_STATUS_RES = [_Lazy(p, re.I) for p in [
    r"\bError code: (\d{3})\b",                                     # openai-python
    r"\bstatus(?:[ _]code)?\W{0,3}(\d{3})\b",                        # "status code 404", "status_code=503", "status: 401"
    r"\bHTTP/\d(?:\.\d)?\"? (\d{3})\b",                              # access logs
    r"\b(\d{3}) (?:Unauthorized|Forbidden|Not Found|Bad Request|Unprocessable Entity|Service Unavailable|"
    r"Bad Gateway|Gateway Timeout|Internal Server Error|Too Many Requests|Provider returned error)\b",
    r"\bHTTP (?:error )?(\d{3})\b",
    r"[\"']code[\"']:\s*[\"']?(\d{3})\b",                         # a JSON error body, or its Python repr
    r"(?<!\d)(\d{3}) ?(?:状态码|錯誤|错误)|(?:状态码|狀態碼)\D{0,3}(\d{3})\b",  # Chinese: "返回 429 状态码"
    # "an error 429" in English and its neighbours ("un errore 429", "erreur 503", "Fehler 401"), "codice di stato 429"
    r"\b(?:error|errore|erreur|fehler|erro)\s+(\d{3})\b|\b(?:codice di stato|code d'[ée]tat|c[óo]digo de estado|"
    r"c[óo]digo de status|statuscode)\W{0,3}(\d{3})\b",
    # a report's own words: "always returned a 429 status code", "the call fails with a 503" (only 4xx / 5xx, and not
    # a count: "returned 500 tokens")
    r"\b([45]\d{2}) (?:status|response|error|HTTP) code\b|\b(?:return(?:s|ed|ing)?|got|gets|getting|receiv(?:e|es|ed|ing)|"
    r"thr(?:ows?|ew)|fail(?:s|ed)? with) (?:an? |the )?(?:HTTP |status )?([45]\d{2})\b(?![ -]*(?:tokens?|ms|s|sec\w*|"
    r"[KMG]i?B|chars?|characters?|lines?|requests?|items?|rows?|words?|times?|steps?)\b)",
]]

# what providers and proxies answer with a 429, quoted without its status: Groq's "Rate limit reached for model
# `openai/gpt-oss-120b` … on tokens per day (TPD)", OpenAI-style "rate_limit_exceeded", "Too Many Requests"
RATE_LIMIT_RE = _Lazy(r"\bRate limit reached for\b|\brate_limit_exceeded\b|\bToo Many Requests\b|"
                      r"\bRateLimitError\b", re.I)

# --- hardware ---------------------------------------------------------------------------------------------------
# Intel's Arc A310-A770, Pro B50/B60 and B570/B580, named without "Arc": they share the letter of NVIDIA's A100 and B200
INTEL_BARE_GPU = r"A[3-7][1-8]0|B[56]0|B5[78]0"
GPU_RE = _Lazy(
    r"(?:\b|(?<=\dx))(?:(?:NVIDIA |GeForce )?RTX ?(?:PRO )?\d{4}(?: ?Ti| ?Super)?(?: Blackwell)?|RTX ?A\d{4}|"
    r"(?:NVIDIA |GeForce )?GTX ?\d{3,4}(?: ?Ti)?|"
    # (the data-centre names that exist: "#L78" is a line of a linked file, not a GPU)
    r"(?<![#/])(?:H(?:100|200|20|800)|A(?:10G?|16|30|40|100|800)|B(?:100|200|300)|L(?:4|20|40S?))(?: ?NVL| ?SXM| ?PCIe)?|"
    rf"(?<![#/])(?:{INTEL_BARE_GPU})|" r"GB\d{2,3}|GH200|DGX Spark|Jetson \w+|Tesla \w+|"
    r"Radeon (?:RX |Pro )?\w+(?: XTX| XT)?|(?:Instinct )?MI\d{3}X?|Strix Halo|Ryzen AI Max\+? ?\d*|"
    r"Apple M\d(?: Pro| Max| Ultra)?|M\d (?:Pro|Max|Ultra)|Arc (?:A|B)\d{3}|Intel Arc)\b")
ARCH_RE = _Lazy(r"\b(sm_?\d{2,3}a?|gfx\d{3,4}[a-z]?)\b|\bcompute capability:? ?(\d{1,2})\.(\d)\b", re.I)
MEMORY_RE = _Lazy(r"(?<![\d.,])(\d{1,4}(?:\.\d+)?) ?(?:GB|GiB|G)\b"
                  r"(?: (?:of )?(?:VRAM|GPU memory|unified memory|memory|RAM))?", re.I)
VENDORS = _table([
    ("amd", r"\brocm\b|\bhip(?:Error\w*|BLAS)?\b|\bgfx\d{3,4}|\bradeon\b|\bMI\d{3}X?\b|\bstrix halo\b|\bryzen ai\b|"
            r"\bamdgpu\b|\bAMD\b"),
    ("apple", r"(?<!tt-)\bmetal\b|\bapple silicon\b|\bmps\b|\bmlx\b|\bmacos\b|\bmac ?(?:book|studio|mini)\b|\bApple M\d\b|"
              r"\bM[1-5] (?:Pro|Max|Ultra)\b"),
    ("intel", r"\bxpu\b|\bsycl\b|\bipex\b|\bintel arc\b|\bArc [AB]\d{3}\b|\boneapi\b|\bLevel[- ]Zero\b"),
    # (CUDA's own calls and devices too: "cudaMalloc failed: out of memory", ggml's "CUDA0 buffer")
    ("nvidia", r"\bcuda\b|\bcuda(?:\d|malloc|error|memcpy|graph|rt)\w*|\bnvidia\b|\bRTX\b|\bGeForce\b|"
               r"\bsm_?\d{2,3}\b|\bcompute capability\b|\bnvcc\b|\bcublas\b|"
               r"\b[HAB]100\b|\b[HB]200\b|\bGB[23]00\b|\bL40S?\b|\bDGX\b|\bJetson\b|\bNCCL\b|\bflashinfer\b"),
    ("cpu", r"\bCPU[- ]only\b|\bon (?:the )?CPU\b|\bno GPU\b|\bwithout (?:a )?GPU\b|\bAVX2?\b|\bAVX-?512\b"),
])

# --- model ------------------------------------------------------------------------------------------------------
SIZE_RE = _Lazy(r"gpt[-_ ]?oss[-_:/ ]?(20|120)b|\b(20|120)b\b", re.I)
FORMATS = _table([
    ("gguf", r"\.gguf\b|\bgguf\b|\bq[2-8]_k(?:_[msl])?\b|\bq8_0\b|\bf16\.gguf"),
    ("mxfp4", r"\bmxfp4\b"),
    ("bf16", r"\bbf16\b|\bbfloat16\b"),
    ("fp8", r"\bfp8\b"),
    ("awq", r"\bawq\b"),
    ("gptq", r"\bgptq\b"),
    ("nvfp4", r"\bnvfp4\b"),
    ("mlx", r"\bmlx-community\b|\bmlx (?:4|8)-?bit\b"),
])


@dataclass
class Facets:
    engine: dict | None = None
    client: dict | None = None
    proxy: dict | None = None
    provider: dict | None = None
    api: str | None = None
    streaming: bool | None = None
    features: list[str] = field(default_factory=list)
    phase: str | None = None
    failure: list[str] = field(default_factory=list)
    http_status: int | None = None
    hardware: dict | None = None
    model: dict | None = None

    def to_json(self) -> dict:
        return {"engine": self.engine, "client": self.client, "proxy": self.proxy, "provider": self.provider,
                "api": self.api, "streaming": self.streaming, "features": self.features, "phase": self.phase,
                "failure": self.failure, "http_status": self.http_status, "hardware": self.hardware,
                "model": self.model}

    def lines(self) -> list[tuple[str, str]]:
        """(facet, value) for each facet the text showed, in the order a reader needs them."""
        out: list[tuple[str, str]] = []

        def named(d: dict | None, label: str) -> None:
            if d:
                out.append((label, d["name"] + (f" {d['version']}" if d.get("version") else "")
                            + (f' (seen as "{d["evidence"]}")' if d.get("evidence") else "")))

        named(self.engine, "engine")
        named(self.client, "client")
        named(self.proxy, "proxy")
        named(self.provider, "provider")
        if self.api:
            out.append(("API", self.api))
        if self.streaming is not None:
            out.append(("streaming", "yes" if self.streaming else "no"))
        if self.features:
            out.append(("features", ", ".join(self.features)))
        if self.phase:
            out.append(("phase", self.phase))
        if self.failure:
            out.append(("failure", ", ".join(self.failure)))
        if self.http_status:
            out.append(("HTTP status", str(self.http_status)))
        if self.hardware:
            h = self.hardware
            out.append(("hardware", " ".join(str(x) for x in (
                h.get("vendor"), h.get("gpu"), h.get("arch"),
                f"{h['memory_gb']} GB" if h.get("memory_gb") else None) if x)))
        if self.model:
            out.append(("model", " ".join(x for x in (self.model.get("size"), self.model.get("format")) if x)))
        return out


def _ev(text: str) -> str:
    return " ".join(text.split())[:60]


def _engine(parsed: Parsed, head: str) -> dict | None:
    for key, seen in parsed.engines.items():
        if key == "litellm" or not engines.known(key):
            continue
        version = None
        rx = _rx.compile(rf"\b{re.escape(key)}(?:[-_ ]?(?:server|serve))?(?:==|\s+version:?\s*(?:is\s*)?|[ :/]v?|\s+v)"
                        r"(\d+\.\d+(?:\.\d+)?(?:(?:rc|\.post|\.dev)\d+)?)\b", re.I)
        m = rx.search(head)
        if m:
            version = m.group(1)
        elif key == "ollama":
            m = re.search(r"\bollama version is (\d+\.\d+\.\d+)|\bversion=(\d+\.\d+\.\d+)", head)
            version = (m.group(1) or m.group(2)) if m else None
        return {"name": key, "version": version, "evidence": _ev(seen)}
    return None


WRAPPERS = ("openai-agents", "langchain", "llamaindex", "pydantic-ai")


def _client(parsed: Parsed, head: str) -> dict | None:
    # the library that raised it: a wrapper's frames first (they raise openai's exceptions), then the exception
    # class of the last error (openai.X with a litellm.X inside its message is openai-python talking to a proxy)
    last = next((e.exception for e in reversed(parsed.errors) if e.exception), None) or ""
    order = [c for c in CLIENTS if c[0] in WRAPPERS]
    if last.startswith("openai."):
        order += [c for c in CLIENTS if c[0] == "openai-python"]
    order += [c for c in CLIENTS if c not in order]
    for name, rx in order:
        m = rx.search(head)
        if m:
            vm = CLIENT_VERSION.get(name)
            v = vm.search(head) if vm else None
            return {"name": name, "version": v.group(1) if v else None, "evidence": _ev(m.group(0))}
    for name in APP_CLIENTS:
        if name in parsed.engines:
            return {"name": name, "version": None, "evidence": _ev(parsed.engines[name])}
    return None


def _first(table, head: str) -> tuple[str, str] | None:
    for name, rx in table:
        m = rx.search(head)
        if m:
            return name, m.group(0)
    return None


def _status(parsed: Parsed, head: str) -> int | None:
    for e in parsed.errors:
        if e.status and 100 <= e.status < 600 and e.status != 200:
            return e.status
    for rx in HTTP_STATUS_RES:
        for m in rx.finditer(head):
            code = int(next(g for g in m.groups() if g))
            if 400 <= code < 600:
                return code
    if RATE_LIMIT_RE.search(head):
        return 429
    return None


def _hardware(head: str) -> dict | None:
    vendor = _first(VENDORS, head)
    gpu = GPU_RE.search(head)
    arch = ARCH_RE.search(head)
    mem = None
    for m in MEMORY_RE.finditer(head):
        if m.group(0)[len(m.group(1)):].strip().split()[-1].lower() in ("vram", "memory", "ram") or gpu:
            n = round(float(m.group(1)))  # "Max memory: 14.741 GB" is 15 GB, not 741
            if 2 <= n <= 2048:
                mem = n
                break
    arch_s = None
    if arch:
        arch_s = arch.group(1).lower().replace("sm", "sm_").replace("sm__", "sm_") if arch.group(1) \
            else f"sm_{arch.group(2)}{arch.group(3)}"
    gpu_s = gpu.group(0) if gpu else None
    vname = vendor[0] if vendor else None
    if gpu_s:
        by_name = ("amd" if re.search(r"radeon|mi\d|strix|ryzen", gpu_s, re.I) else
                   "apple" if re.search(r"\bM\d", gpu_s) else
                   "intel" if "Arc" in gpu_s or re.fullmatch(INTEL_BARE_GPU, gpu_s) else "nvidia")
        # the GPU's own vendor, unless the text names the vendor by its GPU stack (ROCm, CUDA, SYCL…): "AMD" or
        # "Ryzen" alone is as often the host's CPU ("AMD (HX370 APU)" in a report about an RTX 3090)
        if not vname or (vname != by_name and re.fullmatch(r"amd|ryzen ai", vendor[1], re.I)):
            vname = by_name
    if arch_s and not vname:
        vname = "amd" if arch_s.startswith("gfx") else "nvidia"
    if not (vname or gpu_s or arch_s):
        return None
    return {"vendor": vname, "arch": arch_s, "gpu": gpu_s, "memory_gb": mem}


def _model(head: str) -> dict | None:
    size = SIZE_RE.search(head)
    fmt = _first(FORMATS, head)
    if not size and not fmt:
        return None
    return {"size": (size.group(1) or size.group(2)) + "b" if size else None, "format": fmt[0] if fmt else None}


def extract(parsed: Parsed, text: str | None = None, *, garbage: bool = False,
            artifact_kinds: set[str] | None = None) -> Facets:
    """The facets of a text (``text``, else the parsed sample and error messages)."""
    # a streamed log is not kept whole: its start, its error messages and its traceback frames stand for it
    head = (text if text is not None else "\n".join([parsed.sample, *(e.message for e in parsed.errors[:50]),
                                                     *parsed.frames]))
    head = head[:MAX_READ]
    f = Facets()
    f.engine = _engine(parsed, head)
    f.client = _client(parsed, head)
    prox = _first(PROXIES, head)
    if prox and prox[0] == "litellm" and f.client and f.client["name"] == "litellm" and not PROXY_SEEN.search(head):
        prox = None  # the LiteLLM SDK called the backend itself: no proxy in between
    if prox or ("litellm" in parsed.engines and not (f.client and f.client["name"] == "litellm")):
        f.proxy = {"name": prox[0] if prox else "litellm", "evidence": _ev(prox[1] if prox else parsed.engines["litellm"])}
    prov = _first(PROVIDERS, head)
    if prov:
        f.provider = {"name": prov[0], "evidence": _ev(prov[1])}
    api = _first(APIS, head)
    f.api = api[0] if api else ("ollama" if f.engine and f.engine["name"] == "ollama" and "/api/" in head else None)
    if STREAM_OFF.search(head):
        f.streaming = False
    elif STREAM_ON.search(head):
        f.streaming = True
    told = without_routine(head)
    f.features = [name for name, rx in FEATURES if rx.search(told)]
    phase = _first(PHASES, head)
    f.phase = phase[0] if phase else None
    f.http_status = _status(parsed, head)
    failure: list[str] = []
    kinds = {e.kind for e in parsed.errors}
    if kinds & {"traceback", "exception", "openai-sdk", "proxy", "harmony", "vocab"}:
        failure.append("exception")
    for name, rx in FAILURES:
        if rx.search(told) and any(not _negated(told, m.start()) for m in rx.finditer(told)):
            failure.append(name)
    if garbage:
        failure.append("garbage")
    if kinds & {"harmony-leak", "flattened"} or (artifact_kinds or set()) & {"harmony-leak", "flattened-channels"}:
        failure.append("leak")
    if f.http_status:
        failure.append("http-status")
    f.failure = list(dict.fromkeys(failure))
    if f.phase is None and f.http_status and not f.streaming:
        f.phase = "first-request"
    f.hardware = _hardware(head)
    f.model = _model(head)
    return f
