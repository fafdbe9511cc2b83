"""Prometheus /metrics parsing and the saturation verdicts, on the real vLLM 0.26.0 exposition format."""

from __future__ import annotations

from gptoss_doctor.check import metrics

VLLM = """\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="openai/gpt-oss-20b"} 12.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="openai/gpt-oss-20b"} 7.0
vllm:kv_cache_usage_perc{engine="0",model_name="openai/gpt-oss-20b"} 0.97
vllm:num_preemptions_total{engine="0",model_name="openai/gpt-oss-20b"} 31.0
vllm:prefix_cache_queries_total{engine="0",model_name="openai/gpt-oss-20b"} 50000.0
vllm:prefix_cache_hits_total{engine="0",model_name="openai/gpt-oss-20b"} 1000.0
vllm:request_success_total{engine="0",finished_reason="stop",model_name="openai/gpt-oss-20b"} 900.0
vllm:request_success_total{engine="0",finished_reason="abort",model_name="openai/gpt-oss-20b"} 4.0
garbage line {{{
vllm:weird NaN
"""


def test_vllm_saturation_is_read_and_judged():
    sat = metrics.read("vllm", metrics.parse(VLLM))
    assert sat.kv_cache_usage == 0.97 and sat.waiting == 7 and sat.running == 12 and sat.preemptions == 31
    assert sat.aborted == 4 and abs(sat.prefix_hit_rate - 0.02) < 1e-9
    found = {p.what: p for p in metrics.assess(sat, ttft_s=6.2)}
    assert found["KV cache"].status == "warn" and "--gpu-memory-utilization" in found["KV cache"].fix
    assert found["Waiting queue"].status == "warn" and found["Preemptions"].status == "warn"
    assert found["Aborted requests"].status == "info" and found["Prefix cache"].status == "info"
    assert found["Time to first token"].status == "warn"


def test_idle_engines_pass_and_unknown_text_is_no_engine():
    idle = "llamacpp:kv_cache_usage_ratio 0.1\nllamacpp:requests_deferred 0\nllamacpp:requests_processing 1\n"
    sat = metrics.read("llama.cpp", metrics.parse(idle))
    assert {p.status for p in metrics.assess(sat)} == {"pass"}
    assert metrics.read("unknown", metrics.parse("python_gc_objects_collected_total 1\n")) is None
    sg = metrics.read("sglang", metrics.parse('sglang:token_usage{model_name="m"} 0.95\nsglang:num_queue_reqs 3\n'))
    assert "--mem-fraction-static" in next(p for p in metrics.assess(sg) if p.what == "KV cache").fix


def test_parse_is_bounded():
    text = "x 1\n" * (metrics.MAX_LINES + 500)
    assert len(metrics.parse(text)) == metrics.MAX_LINES
