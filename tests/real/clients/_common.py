"""What every client program in this folder shares: its command line and the get_weather tool a user would define.

    python <client>_call.py --base-url URL [--model M] [--api-key K] [--tools] [--stream]

Each program then calls its library the way that library's documentation shows and prints the answer; when the
library raises, the exception is not caught (Python prints the traceback, as a user's script would)."""

from __future__ import annotations

import argparse

QUESTION = "Hi! What is the weather in Paris?"
TOOL_DESCRIPTION = "Get the current weather in a city."
TOOL_PARAMETERS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOL_SCHEMA = {"type": "function", "function": {"name": "get_weather", "description": TOOL_DESCRIPTION,
                                                "parameters": TOOL_PARAMETERS}}


def get_weather(city: str) -> str:
    """Get the current weather in a city."""
    return f"Sunny, 21 C in {city}"


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base-url", required=True, help="the OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1")
    ap.add_argument("--model", default="openai/gpt-oss-20b")
    ap.add_argument("--api-key", default="sk-none")
    ap.add_argument("--tools", action="store_true", help="offer the get_weather tool")
    ap.add_argument("--stream", action="store_true", help="stream the answer")
    return ap.parse_args()
