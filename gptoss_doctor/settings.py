"""The settings every command shares, read from the environment in this one place: debug, offline, the Hugging Face
cache folder. (``--debug`` on the command line sets GPTOSS_DOCTOR_DEBUG for the whole process.)"""

from __future__ import annotations

import os
import re
from pathlib import Path

_FALSE = ("", "0", "false", "no", "off")
_TRUE = ("1", "true", "yes", "on")  # huggingface_hub's own reading of HF_HUB_OFFLINE


def debug() -> bool:
    """Tracebacks on (GPTOSS_DOCTOR_DEBUG=1 or --debug)."""
    return os.environ.get("GPTOSS_DOCTOR_DEBUG", "").strip().lower() not in _FALSE


def set_debug() -> None:
    os.environ["GPTOSS_DOCTOR_DEBUG"] = "1"


def hub_offline() -> bool:
    """The Hub must not be asked (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE, as huggingface_hub reads them)."""
    return any(os.environ.get(v, "").strip().lower() in _TRUE for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def offline() -> bool:
    """Nothing may be downloaded (GPTOSS_DOCTOR_OFFLINE, or the Hub's own offline switches)."""
    return os.environ.get("GPTOSS_DOCTOR_OFFLINE", "").strip().lower() in _TRUE or hub_offline()


def hf_hub_cache() -> Path:
    """The Hugging Face cache folder as huggingface_hub resolves it: HF_HUB_CACHE (or the older
    HUGGINGFACE_HUB_CACHE), else HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub."""
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(var):
            return Path(os.environ[var]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "huggingface" / "hub"


def repo_folder_name(repo_id: str) -> str:
    """The folder the cache keeps one repo in: models--owner--name."""
    return "models--" + repo_id.replace("/", "--")


def hub_endpoint() -> str:
    """HF_ENDPOINT read now (huggingface_hub reads it once, at import)."""
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def hub_endpoint_shown() -> str:
    """The endpoint as messages may show it: credentials embedded in HF_ENDPOINT replaced."""
    return re.sub(r"//[^/@]*@", "//***@", hub_endpoint())


def hf_token_set() -> bool:
    return any(len(os.environ.get(v, "")) >= 4 for v in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"))


def user_cache_dir() -> Path:
    """The doctor's own cache folder: $XDG_CACHE_HOME/gptoss-doctor, else ~/.cache/gptoss-doctor."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gptoss-doctor"
