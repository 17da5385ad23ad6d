"""A streaming request's answer sent as the model writes it (activities/answer_release.py), read off the real
broker as a caller reads it, with the scripted model streaming through the real client: checked sentences go
out while the model still writes, and text once sent is never repeated nor taken back, only added to."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from typing import Any

import pulsar
from trustgraph.schema import AgentRequest as TgAgentRequest

from activities.answer_release import COMPLETION, CORRECTION
from contracts.conversation import ConversationMemory, conversation_workflow_id
from contracts.delivery import delivered
from contracts.names import workflow_id_for
from contracts.wire import AgentRequest, AgentResponse
from contracts.wire_codec import decode_response, encode_request
from service.connections import pulsar_client
from tests.contract.test_trustgraph_contract import GOOD_PLAN, tg_agent  # noqa: F401 (a fixture)
from tests.scripted_llm import Hangup, Pause, ScriptedLLM, Written, is_follow_up, is_planning, is_synthesis, question_of

QUESTION = "Which supplier has the most purchase orders?"
FIRST = "Acme Industrial has the most purchase orders (135)."
SECOND = " It is followed by Globex Supply with 56 orders."
THIRD = " Those two are the suppliers the query returned."
LAST = " They are the only two."
INVENTED = " Initech Holdings comes third with 44 orders."  # in no result


class Model:
    """Plans GOOD_PLAN (the two suppliers with most orders, ranked) and writes each synthesis from `drafts`,
    one per call, the last one again for any later call (the rewrite a failed check asks for)."""

    def __init__(self, *drafts: Written) -> None:
        self.drafts = list(drafts)
        self.syntheses: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> tuple[int, Written]:
        if is_follow_up(body):  # a turn of a conversation: read as asked
            return 200, json.dumps({"question": question_of(body), "from_conversation": False})
        if is_planning(body):
            return 200, GOOD_PLAN
        if is_synthesis(body):
            self.syntheses.append(body)
            return 200, self.drafts[min(len(self.syntheses), len(self.drafts)) - 1]
        return 200, "noted"


async def dialog(
    stack,
    on_message: Callable[[AgentResponse], None] | None = None,  # type: ignore[no-untyped-def]
    **fields: Any,
) -> tuple[list[AgentResponse], dict[str, Any]]:
    """Every message of one request as it arrives on the response topic, repeats kept (TrustGraph's own client
    drops none), each with its delivery id; and the run's result."""
    request_id = uuid.uuid4().hex
    client = pulsar_client(stack.config.pulsar_url)
    try:
        consumer = await client.subscribe(
            stack.config.response_topic,
            f"rr-{uuid.uuid4().hex}",
            consumer_type=pulsar.ConsumerType.Exclusive,
            initial_position=pulsar.InitialPosition.Latest,
        )
        producer = await client.create_producer(stack.request_topic, batching_enabled=False)
        await producer.send(encode_request(AgentRequest(question=QUESTION, **fields)), properties={"id": request_id})
        seen: list[AgentResponse] = []
        while not seen or not seen[-1].end_of_dialog:
            message = await asyncio.wait_for(consumer.receive(), 120)
            await consumer.acknowledge(message)
            if (message.properties() or {}).get("id") == request_id:
                seen.append(delivered(decode_response(message.data()), message.properties()))
                if on_message is not None:
                    on_message(seen[-1])
    finally:
        await client.close()
    result = await stack.client.get_workflow_handle(workflow_id_for(request_id)).result()
    return seen, result


def answer_chunks(messages: list[AgentResponse]) -> list[AgentResponse]:
    *chunks, final = [m for m in messages if m.message_type == "answer"]
    assert final.end_of_message and final.end_of_dialog and final.content == ""
    assert chunks and all(not c.end_of_message and c.content for c in chunks)
    assert len({c.message_id for c in [*chunks, final]}) == 1  # one entity: the answer
    return chunks


def streamed_by_synthesis(chunks: list[AgentResponse]) -> list[str]:
    """The chunks the synthesis activity released (delivery id `<run>#answer.<n>`), in order."""
    return [c.content for c in chunks if "#answer." in c.delivery_id]


async def test_checked_sentences_reach_the_caller_while_the_model_is_still_writing(make_stack, tg_agent) -> None:  # noqa: F811
    pause = Pause()
    model = Model([FIRST + " ", SECOND.lstrip() + " ", "Those two", pause, THIRD[len(" Those two") :] + LAST])
    with ScriptedLLM(model) as llm:
        stack = await make_stack(llm.base_url)
        agent = await tg_agent(stack)  # TrustGraph's own client, as a TrustGraph user reads the answer
        seen: list[Any] = []
        async for response in agent._rr_client.request_stream(
            TgAgentRequest(question=QUESTION, streaming=True), timeout=120
        ):
            seen.append(response)
            if response.message_type == "answer":
                pause.gate.set()  # the model goes on writing only once the caller has read a sentence
            if response.end_of_dialog:
                break
    # The model was held mid-answer until the caller had the first chunk: it was sent before the model finished.
    assert pause.opened is True
    assert model.syntheses[0]["stream"] is True
    *chunks, final = [r for r in seen if r.message_type == "answer"]
    assert final.end_of_dialog and final.content == ""
    assert [c.content for c in chunks[:2]] == [FIRST, SECOND]  # each sentence as the model wrote it, checked
    assert "".join(c.content for c in chunks).startswith(FIRST + SECOND + THIRD + LAST + "\n\nConfidence: ")


async def test_a_sentence_naming_what_the_results_lack_stops_the_release_and_the_rest_is_an_addition(
    make_stack,
) -> None:
    rewritten = "The supplier with the most purchase orders is Acme Industrial (135), ahead of Globex Supply (56)."
    model = Model(FIRST + INVENTED + THIRD, rewritten)
    conversation = f"c-{uuid.uuid4().hex}"
    with ScriptedLLM(model) as llm:
        stack = await make_stack(llm.base_url)
        messages, result = await dialog(stack, streaming=True, conversation_id=conversation)
        memory = await stack.client.get_workflow_handle(conversation_workflow_id(conversation)).query(
            "memory", result_type=ConversationMemory
        )
    chunks = answer_chunks(messages)
    assert streamed_by_synthesis(chunks) == [FIRST]  # released before the model finished; the next one failed
    text = "".join(c.content for c in chunks)
    # The invented sentence never left (the confidence line names what the draft stated, as it always did).
    assert not any("comes third" in m.content for m in messages)
    # The released sentence stands; the checked answer follows it as an addition, and the run's answer, its
    # confidence line and its evidence say the streamed draft was corrected.
    assert text.startswith(f"{FIRST}\n\n{COMPLETION}{rewritten}\n\nConfidence: ")
    assert text == result["answer"] and "the checked answer follows them as a correction" in text
    assert result["evidence"]["streamed_correction"] == 1.0 and result["evidence"]["rewritten"] == 1.0
    assert memory.turns[-1].answer == text  # the conversation remembers the answer as the caller read it


async def test_a_streamed_answer_naming_the_wrong_row_is_corrected_by_an_addition(make_stack) -> None:
    wrong = "Globex Supply has the most purchase orders (56)."
    model = Model(wrong + " That is the top of the list.")
    with ScriptedLLM(model) as llm:
        stack = await make_stack(llm.base_url)
        messages, result = await dialog(stack, streaming=True)
    chunks = answer_chunks(messages)
    assert streamed_by_synthesis(chunks) == [wrong]
    text = "".join(c.content for c in chunks)
    # What was sent stands; the row the query ranked first follows it as a correction, not in its place.
    assert text.startswith(f"{wrong}\n\n{CORRECTION}Acme Industrial") and "first of the 2 rows" in text
    assert "That is the top of the list" not in text
    assert text == result["answer"]
    assert result["evidence"]["streamed_correction"] == 1.0 and result["evidence"]["reranked"] == 1.0


async def test_an_attempt_that_dies_after_releasing_sentences_is_retried_without_repeating_them(make_stack) -> None:
    whole = FIRST + SECOND + THIRD + LAST
    cut = [FIRST + " ", SECOND.lstrip() + " ", "Those", Hangup()]  # the model's server dies mid-sentence
    model = Model(cut, whole)  # asked again, it writes the same answer, as a model at temperature 0 does
    with ScriptedLLM(model) as llm:
        stack = await make_stack(llm.base_url)
        messages, result = await dialog(stack, streaming=True)
    assert len(model.syntheses) == 2  # the first attempt failed after releasing two sentences, and was retried
    chunks = answer_chunks(messages)
    released = streamed_by_synthesis(chunks)
    assert released == [FIRST, SECOND, THIRD]  # each once: the retry went on after what was released
    assert len({c.delivery_id for c in chunks}) == len(chunks)
    text = "".join(c.content for c in chunks)  # as TrustGraph's client joins them: no repeat dropped
    assert text.startswith(whole + "\n\nConfidence: ") and text == result["answer"]
    assert result["evidence"]["streamed_correction"] == 0.0  # no correction: nothing was contradicted


async def test_a_retry_that_writes_other_sentences_only_adds_to_what_was_released(make_stack) -> None:
    cut = [FIRST + " ", SECOND.lstrip() + " ", "Those", Hangup()]
    other = "Globex Supply has 56 purchase orders and Acme Industrial has 135, the most."
    model = Model(cut, other)  # asked again, the model writes another answer
    with ScriptedLLM(model) as llm:
        stack = await make_stack(llm.base_url)
        messages, result = await dialog(stack, streaming=True)
    chunks = answer_chunks(messages)
    assert streamed_by_synthesis(chunks) == [FIRST, SECOND]
    text = "".join(c.content for c in chunks)
    assert text.startswith(f"{FIRST}{SECOND}\n\n{COMPLETION}{other}\n\nConfidence: ") and text == result["answer"]
    assert result["evidence"]["streamed_correction"] == 1.0


async def test_a_request_that_does_not_stream_gets_one_whole_answer_as_before(make_stack) -> None:
    model = Model(FIRST + SECOND + THIRD)
    with ScriptedLLM(model) as llm:
        stack = await make_stack(llm.base_url)
        messages, result = await dialog(stack)
    [answer] = [m for m in messages if m.message_type == "answer"]
    assert answer.end_of_message and answer.end_of_dialog and answer.content == result["answer"]
    assert answer.content.startswith(FIRST + SECOND + THIRD + "\n\nConfidence: ")
    assert "stream" not in model.syntheses[0]


async def test_with_the_setting_off_a_streamed_answer_is_cut_into_chunks_once_checked(make_stack) -> None:
    model = Model(FIRST + SECOND + THIRD)
    with ScriptedLLM(model) as llm:
        stack = await make_stack(llm.base_url, stream_answer_as_written=False)
        messages, result = await dialog(stack, streaming=True)
    chunks = answer_chunks(messages)
    assert "stream" not in model.syntheses[0] and streamed_by_synthesis(chunks) == []
    assert "".join(c.content for c in chunks) == result["answer"]
