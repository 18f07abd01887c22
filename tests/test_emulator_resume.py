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


@pytest.mark.parametrize("written", [0, 1, 3, 7, len(REF)])
async def test_a_completion_resumed_after_any_text_continues_exactly_there(written: int) -> None:
    """Regression: the emulator recognised a resumed completion only by at least 8 characters of its reference at
    the end of the prompt, so one moved earlier was answered with the whole reference again (the text doubled and
    the request ran as long again: slower than vLLM, which just continues). The servers of a GPU remember each
    request's first prompt, so the text after it is the partial answer, however short; after all of the reference
    the answer is only its end (vLLM's model would stop there too)."""
    prompt = "Q: total per customer?\nA:"  # ends with no space: the reference's first character is one
    ref = " " + REF
    async with EmulatedPair(time_scale=FAST) as pair:
        pair.register_references({"w": ref})
        first = openai.AsyncOpenAI(base_url=pair.baseline_url + "/v1", api_key="x", max_retries=0, timeout=30)
        other = openai.AsyncOpenAI(base_url=pair.speculative_url + "/v1", api_key="x", max_retries=0, timeout=30)
        head = {"x-request-id": "w"}
        whole = await first.completions.create(model="specgate-emu", prompt=prompt, temperature=0,
                                                extra_headers=head)
        assert whole.choices[0].text == ref
        rest = await other.completions.create(model="specgate-emu", prompt=prompt + ref[:written], temperature=0,
                                              extra_headers=head)  # resumed on the other server of the GPU
        assert ref[:written] + rest.choices[0].text == ref
        assert rest.choices[0].finish_reason == "stop"
        assert rest.usage is not None and whole.usage is not None
        assert rest.usage.completion_tokens <= whole.usage.completion_tokens  # not the whole reference again
        await first.close()
        await other.close()
