"""OpenAI Agents SDK: an Agent on OpenAIChatCompletionsModel with a custom AsyncOpenAI client (the SDK's "other LLM
providers" example, tracing disabled as it says), run with Runner.run_sync or Runner.run_streamed."""

import asyncio

from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
from openai import AsyncOpenAI

from _common import QUESTION, get_weather, parse_args

args = parse_args()
set_tracing_disabled(disabled=True)
client = AsyncOpenAI(base_url=args.base_url, api_key=args.api_key)
agent = Agent(name="Assistant", instructions="You are a helpful assistant.",
              model=OpenAIChatCompletionsModel(model=args.model, openai_client=client),
              tools=[function_tool(get_weather)] if args.tools else [])


async def streamed() -> str:
    result = Runner.run_streamed(agent, QUESTION)
    async for event in result.stream_events():
        if event.type == "run_item_stream_event" and event.name == "tool_called":
            print(f"tool call: {event.item.raw_item.name}({event.item.raw_item.arguments})")
    return result.final_output


if args.stream:
    print(asyncio.run(streamed()))
else:
    print(Runner.run_sync(agent, QUESTION).final_output)
