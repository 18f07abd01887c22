"""The emulator serves resumed requests as vLLM does (the emulator side of live migration): a chat whose final
assistant message is left open (`continue_final_message: true, add_generation_prompt: false`) and a completion
whose prompt is the original prompt plus the text so far both continue the reference where the partial text ends,
and the resumed prompt, partial text included, is prefilled again (counted in the prompt tokens)."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from gateway.emulator import EmulatedPair
from gateway.emulator.resume import continued_reference

FAST = 0.05
REF = ("SELECT customers.name, SUM(orders.total) AS total FROM orders JOIN customers ON orders.customer_id = "
       "customers.id WHERE customers.country = 'France' GROUP BY customers.name;")
ASK: list[Any] = [{"role": "user", "content": "Write a query for the total of the orders per customer name in France."}]
RESUME = {"continue_final_message": True, "add_generation_prompt": False}


@pytest.mark.parametrize(("reference", "partial", "prompt", "rest"), [
    ("Hello there, general Kenobi.", "Hello there,", "", " general Kenobi."),
    ("Hello there, general Kenobi.", None, "Say hi", "Hello there, general Kenobi."),  # nothing to continue
    ("Hello there, general Kenobi.", None, "Say hi\n\nHello there, gen", "eral Kenobi."),  # completion resumed
    ("Hello there, general Kenobi.", None, "Say Hello", "Hello there, general Kenobi."),  # too short to be a resume
    ("Hello there, general Kenobi.", "Hi! Hello there, general", "", " Kenobi."),  # partial's end matches
    ("Hello there, general Kenobi.", None, "Copy: Hello there, general Kenobi.", "Hello there, general Kenobi."),
])
def test_what_is_left_of_the_reference(reference: str, partial: str | None, prompt: str, rest: str) -> None:
    assert continued_reference(reference, partial, prompt) == rest


async def test_a_resumed_chat_and_completion_continue_the_answer_and_prefill_it_again() -> None:
    async with EmulatedPair(time_scale=FAST) as pair:
        pair.register_references({"q": REF})
        for url in (pair.baseline_url, pair.speculative_url):
            client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="x", max_retries=0, timeout=30)
            head = {"x-request-id": "q"}
            stream = await client.chat.completions.create(
                model="specgate-emu", messages=ASK, temperature=0, stream=True, extra_headers=head,
                stream_options={"include_usage": True})
            chunks = [c async for c in stream]
            parts = [c.choices[0].delta.content or "" for c in chunks if c.choices]
            usage = chunks[-1].usage
            assert "".join(parts) == REF and usage is not None
            partial = "".join(parts[:4])  # the text streamed before the request moved
            assert 0 < len(partial) < len(REF)

            resumed = await client.chat.completions.create(
                model="specgate-emu", messages=[*ASK, {"role": "assistant", "content": partial}], temperature=0,
                extra_headers=head, extra_body=RESUME)
            assert partial + (resumed.choices[0].message.content or "") == REF
            assert resumed.choices[0].finish_reason == "stop"
            assert resumed.usage is not None
            assert resumed.usage.prompt_tokens > usage.prompt_tokens  # the partial answer is read again
            assert resumed.usage.completion_tokens < usage.completion_tokens

            done = await client.completions.create(model="specgate-emu", prompt="Q: total per customer?\nA: ",
                                                   temperature=0, extra_headers=head)
            assert done.choices[0].text == REF
            cut = len(REF) // 2
            rest = await client.completions.create(model="specgate-emu", prompt="Q: total per customer?\nA: "
                                                   + REF[:cut], temperature=0, extra_headers=head)
            assert REF[:cut] + rest.choices[0].text == REF

            with pytest.raises(openai.BadRequestError) as info:  # vLLM refuses both flags at once
                await client.chat.completions.create(
                    model="specgate-emu", messages=[*ASK, {"role": "assistant", "content": partial}],
                    extra_headers=head, extra_body={"continue_final_message": True, "add_generation_prompt": True})
            assert "Cannot set both `continue_final_message` and `add_generation_prompt` to True." in str(info.value)
            await client.close()
