"""Pydantic AI: an Agent on OpenAIChatModel with an OpenAIProvider pointing at the server (the docs' "OpenAI-compatible
models" section), run with run_sync or run_stream."""

import asyncio

from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from _common import QUESTION, get_weather, parse_args

args = parse_args()
model = OpenAIChatModel(args.model, provider=OpenAIProvider(base_url=args.base_url, api_key=args.api_key))
agent = Agent(model, instructions="You are a helpful assistant.", tools=[get_weather] if args.tools else [])


async def streamed() -> None:
    async with agent.run_stream(QUESTION) as result:
        async for text in result.stream_text(delta=True):
            print(text, end="", flush=True)
    print()


if args.stream:
    asyncio.run(streamed())
else:
    print(agent.run_sync(QUESTION).output)
