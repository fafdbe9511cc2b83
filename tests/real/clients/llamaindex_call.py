"""LlamaIndex: OpenAILike(...).chat / .stream_chat, and chat_with_tools for the tool, as llama-index's docs show."""

from llama_index.core.llms import ChatMessage
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai_like import OpenAILike

from _common import QUESTION, get_weather, parse_args

args = parse_args()
llm = OpenAILike(model=args.model, api_base=args.base_url, api_key=args.api_key, is_chat_model=True,
                 is_function_calling_model=True, context_window=131072)
if args.tools:
    tool = FunctionTool.from_defaults(fn=get_weather)
    if args.stream:
        response = None
        for response in llm.stream_chat_with_tools([tool], user_msg=QUESTION):
            print(response.delta or "", end="", flush=True)
        print()
    else:
        response = llm.chat_with_tools([tool], user_msg=QUESTION)
        print(response)
    for call in llm.get_tool_calls_from_response(response):
        print(f"tool call: {call.tool_name}({call.tool_kwargs})")
elif args.stream:
    for response in llm.stream_chat([ChatMessage(role="user", content=QUESTION)]):
        print(response.delta or "", end="", flush=True)
    print()
else:
    print(llm.chat([ChatMessage(role="user", content=QUESTION)]))
