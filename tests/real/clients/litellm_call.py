"""LiteLLM SDK: litellm.completion with an "openai/" model and api_base, as its OpenAI-compatible provider docs show."""

import litellm

from _common import QUESTION, TOOL_SCHEMA, parse_args

args = parse_args()
extra = {"tools": [TOOL_SCHEMA]} if args.tools else {}
messages = [{"role": "user", "content": QUESTION}]
response = litellm.completion(model="openai/" + args.model, api_base=args.base_url, api_key=args.api_key,
                              messages=messages, stream=args.stream, **extra)
if args.stream:
    chunks = []
    for chunk in response:
        chunks.append(chunk)
        print(chunk.choices[0].delta.content or "", end="", flush=True)
    print()
    response = litellm.stream_chunk_builder(chunks, messages=messages)
print(response.choices[0].message)
