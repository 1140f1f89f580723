"""`ragline bench query`: the CPU meter and the summaries it prints."""

from __future__ import annotations

import asyncio
import threading
import time

from core.settings import LLMSettings
from core.types import Chunk, Hit
from generation.citations import check_citations
from generation.llm import OpenAICompatibleClient
from generation.prompt import build_messages
from ragline.bench.query import compare, side_result
from ragline.bench.query_runner import Meter
from ragline.bench.quoting_llm import QuotingLLM, quoting_reply


def test_the_meter_counts_cpu_inside_wrapped_calls_only() -> None:
    meter = Meter()

    def busy(seconds: float) -> int:
        end = time.thread_time() + seconds
        n = 0
        while time.thread_time() < end:
            n += 1
        return n

    wrapped = meter.wrap("keyword", busy)
    assert wrapped(0.02) > 0
    busy(0.02)  # not wrapped: not counted
    worker = threading.Thread(target=meter.wrap("dense", busy), args=(0.02,))
    worker.start()
    worker.join()
    spent = meter.take()
    assert 15 <= spent["keyword"] < 35
    assert 15 <= spent["dense"] < 35  # counted on the thread that ran it
    assert meter.take() == {}


def _row(set_name: str, cpu: float, stores: float) -> dict[str, object]:
    return {
        "set": set_name,
        "cpu_ms": cpu,
        "stores_ms": stores,
        "around_ms": cpu - stores,
        "wall_ms": cpu,
        "stores": {"keyword": stores},
        "stages": {"rerank": 1.0},
    }


def test_ratios_compare_the_two_sides_per_set() -> None:
    before = side_result([_row("zh", 30, 10), _row("en", 20, 10)])
    after = side_result([_row("zh", 15, 10), _row("en", 15, 10)])
    ratio = compare(before, after)
    assert ratio["zh"]["around_ms"]["ratio_p50"] == 4.0  # 20 -> 5
    assert ratio["en"]["around_ms"]["ratio_p50"] == 2.0  # 10 -> 5
    assert after["summary"]["questions"] == 2


def test_the_meter_counts_cpu_while_a_coroutine_is_awaited() -> None:
    meter = Meter()

    async def busy(seconds: float) -> None:
        end = time.thread_time() + seconds
        while time.thread_time() < end:
            pass
        await asyncio.sleep(0.02)  # waiting costs no CPU

    asyncio.run(meter.wrap_async("llm", busy)(0.02))
    assert 15 <= meter.take()["llm"] < 35


def _chunk(doc_id: str, text: str, page: int) -> Chunk:
    return Chunk(
        content_id=f"{doc_id}{page:04d}".ljust(32, "0"),
        doc_id=doc_id,
        version="v1",
        ordinal=page,
        kind="text",
        text=text,
        page_start=page,
        page_end=page,
        line_start=1,
        line_end=1 + text.count("\n"),
        source=f"file:///docs/{doc_id}.pdf",
        title="Policy",
        doc_type="pdf",
    )


def test_the_quoting_llm_answers_with_a_cited_sentence_the_checks_accept() -> None:
    """The stand-in the LLM ask path is measured with: over real HTTP, its reply quotes the
    first source and cites it with a label the citation check keeps."""
    hits = [
        Hit(_chunk("ab12cd0000000000", "Logs are kept for 90 days. Backups run nightly.", 3), 1.0),
        Hit(_chunk("ef3456aaaaaaaaaa", "Passwords rotate every 60 days.", 1), 0.5),
    ]
    messages = build_messages("How long are logs kept?", hits, "Not covered.", "en")
    with QuotingLLM() as url:
        client = OpenAICompatibleClient(LLMSettings(base_url=url, model="quoting"))
        reply = client.chat(messages)
        client.close()
    assert reply == "Logs are kept for 90 days. [Docab12cd_p3]"
    check = check_citations(reply, hits)
    assert [c.content_id for c in check.citations] == [hits[0].chunk.content_id]
    assert quoting_reply("no sources here") == "The sources do not say."
