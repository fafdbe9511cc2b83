"""NVIDIA TensorRT-LLM's trtllm-serve (https://nvidia.github.io/TensorRT-LLM). Fingerprint: owned_by 'tensorrt_llm';
GET /version like vLLM. It parses gpt-oss output with openai-harmony."""

from __future__ import annotations

from gptoss_doctor.engines.profile import EngineProfile, Rule, as_str

PROFILE = EngineProfile(
    name="trtllm", label="TensorRT-LLM", tracker="NVIDIA/TensorRT-LLM",
    log_hints=(r"\[TRT-LLM\]|tensorrt_llm|trtllm-serve|TensorRT-LLM",),
    rules=(Rule(64, "/v1/models owned_by is 'tensorrt_llm'", lambda s: "tensorrt_llm" in s.owned),),
    read_version=lambda s: as_str(s.version.get("version")) if s.version else None,
    embeds_harmony=True, reads_generation_config=True,
)
