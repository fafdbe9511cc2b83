"""MLX (mlx-lm, https://github.com/ml-explore/mlx-lm): gpt-oss on Apple silicon. Only its logs are recognised
(``explain``); ``check`` treats its OpenAI-compatible server as an engine of unknown make."""

from __future__ import annotations

from gptoss_doctor.engines.profile import EngineProfile

PROFILE = EngineProfile(name="mlx", label="MLX", tracker="ml-explore/mlx-lm",
                        log_hints=(r"\bmlx_lm\b|\bmlx-lm\b|\bmlx\.core\b",))
