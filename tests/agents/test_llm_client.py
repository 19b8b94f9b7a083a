"""The chat client of agents.llm sends what langchain-openai's ChatOpenAI sends, byte for byte as
the server parses it, while skipping two per-call costs (see agents.llm._lean_chat_class)."""
import json

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI
from pydantic import BaseModel
from scripted_openai_server import Reply

from agents.llm import LLMConfig, make_chat_model
from agents.tools.zoom import TOOL_NAME, TOOL_SCHEMA


def _image(data: str) -> dict:
    return {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}}


CONVERSATION = [
    SystemMessage("You are a helpful assistant."),
    HumanMessage([_image("AAAA"), {"type": "text", "text": "Is this an A star?"}]),
    AIMessage(content="<think>zoom</think>",
              tool_calls=[{"id": "call_1", "name": TOOL_NAME, "args": {"wavelength_range": [6500, 6620]}}]),
    ToolMessage(content=[_image("BBBB"), {"type": "text", "text": "Generated ..."}], tool_call_id="call_1",
                name=TOOL_NAME),
]


def _pair(server, **chat_kwargs):
    """(ours, ChatOpenAI) for the same configuration."""
    cfg = LLMConfig(base_url=server.base_url, model="m", api_key="k", timeout=5.0, max_retries=0)
    ours = make_chat_model(cfg)
    plain = ChatOpenAI(model="m", base_url=server.base_url, api_key="k", timeout=5.0, max_retries=0,
                       temperature=cfg.temperature, max_completion_tokens=cfg.max_tokens, **chat_kwargs)
    if chat_kwargs:
        ours = ours.model_copy(update=chat_kwargs)
    return ours, plain


def test_the_request_is_chatopenais_own(openai_server):
    openai_server.push(Reply.text("a"), Reply.text("b"))
    ours, plain = _pair(openai_server)
    assert isinstance(ours, ChatOpenAI)
    ours.bind_tools([TOOL_SCHEMA]).invoke(CONVERSATION)
    plain.bind_tools([TOOL_SCHEMA]).invoke(CONVERSATION)
    mine, theirs = openai_server.requests
    assert mine == theirs and list(mine) == list(theirs)  # same body, keys in the same order
    assert [len(m["content"]) for m in mine["messages"] if isinstance(m["content"], list)] == [2, 2]


def test_extra_body_given_by_the_caller_is_kept(openai_server):
    openai_server.push(Reply.text("a"), Reply.text("b"))
    ours, plain = _pair(openai_server, extra_body={"top_k": 5})
    ours.invoke(CONVERSATION[:2])
    plain.invoke(CONVERSATION[:2])
    mine, theirs = openai_server.requests
    assert mine == theirs and mine["top_k"] == 5 and mine["messages"][1]["content"][0]["type"] == "image_url"


def test_structured_output_requests_are_left_to_the_sdk(openai_server):
    class Verdict(BaseModel):
        answer: str

    ours, _ = _pair(openai_server)
    payload = ours._get_request_payload(CONVERSATION[:2], response_format=Verdict)
    assert "response_format" in payload and len(payload["messages"]) == 2 and "extra_body" not in payload
    openai_server.push(Reply.text(json.dumps({"answer": "YES"})))
    out = ours.with_structured_output(Verdict, method="json_schema").invoke(CONVERSATION[:2])
    assert out == Verdict(answer="YES") and len(openai_server.requests[0]["messages"]) == 2


def test_langchains_block_types_are_computed_once_and_unchanged():
    from langchain_core.messages import content

    make_chat_model(LLMConfig(base_url="http://127.0.0.1:9/v1", api_key="k"))
    cached = content._get_data_content_block_types
    assert cached.cache_info() is not None
    assert cached() == cached.__wrapped__() and "image" in cached()


def test_a_streamed_request_is_chatopenais_own_too(openai_server):
    openai_server.push(Reply.text("streamed answer"), Reply.text("streamed answer"))
    ours, plain = _pair(openai_server)
    mine = "".join(chunk.content for chunk in ours.bind_tools([TOOL_SCHEMA]).stream(CONVERSATION))
    theirs = "".join(chunk.content for chunk in plain.bind_tools([TOOL_SCHEMA]).stream(CONVERSATION))
    assert mine == theirs == "streamed answer"
    first, second = openai_server.requests
    assert first == second and first["stream"] is True and len(first["messages"]) == 4
