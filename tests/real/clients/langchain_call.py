"""LangChain: ChatOpenAI(...).invoke / .stream, with bind_tools for the tool, as langchain-openai's docs show."""

from langchain_openai import ChatOpenAI

from _common import QUESTION, get_weather, parse_args

args = parse_args()
llm = ChatOpenAI(model=args.model, base_url=args.base_url, api_key=args.api_key)
if args.tools:
    llm = llm.bind_tools([get_weather])
if args.stream:
    message = None
    for chunk in llm.stream(QUESTION):
        message = chunk if message is None else message + chunk
else:
    message = llm.invoke(QUESTION)
print(message)
