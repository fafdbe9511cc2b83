"""openai-python: client.chat.completions.create, as in the library's README."""

from openai import OpenAI

from _common import QUESTION, TOOL_SCHEMA, parse_args

args = parse_args()
client = OpenAI(base_url=args.base_url, api_key=args.api_key)
extra = {"tools": [TOOL_SCHEMA]} if args.tools else {}
messages = [{"role": "user", "content": QUESTION}]
if args.stream:
    calls: dict = {}
    for chunk in client.chat.completions.create(model=args.model, messages=messages, stream=True, **extra):
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        if delta.content:
            print(delta.content, end="", flush=True)
        for tc in delta.tool_calls or []:
            call = calls.setdefault(tc.index, {"name": "", "arguments": ""})
            call["name"] += (tc.function.name or "") if tc.function else ""
            call["arguments"] += (tc.function.arguments or "") if tc.function else ""
    print()
    for call in calls.values():
        print(f"tool call: {call['name']}({call['arguments']})")
else:
    response = client.chat.completions.create(model=args.model, messages=messages, **extra)
    print(response.choices[0].message)
