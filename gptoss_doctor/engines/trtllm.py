"""NVIDIA TensorRT-LLM's trtllm-serve (https://nvidia.github.io/TensorRT-LLM). Fingerprint: owned_by 'tensorrt_llm';
GET /version like vLLM. It parses gpt-oss output with openai-harmony."""

from __future__ import annotations

from gptoss_doctor.engines.profile import EngineProfile, owned_by, signal_field

PROFILE = EngineProfile(
    name="trtllm", label="TensorRT-LLM", tracker="NVIDIA/TensorRT-LLM",
    log_hints=(r"\[TRT-LLM\]|tensorrt_llm|trtllm-serve|(?i:TensorRT-LLM)",),
    rules=(owned_by(64, "tensorrt_llm"),),
    read_version=signal_field("version", "version"),
    embeds_harmony=True, reads_generation_config=True,
)
