"""The reference: a bare asyncio + aiohttp loop sending the same requests as agenteval.

    python bench/bare_loop.py DATASET.jsonl BASE_URL [--concurrency 100]

Reads the JSONL dataset, sends each case's input as one user message to
``BASE_URL/chat/completions`` (the same body agenteval sends), decodes each JSON response
and takes the answer. ``concurrency`` workers share one ``aiohttp.ClientSession`` whose
connector allows that many connections, on uvloop (as ``agenteval run`` uses). No
scoring, no retries, nothing written: this is the floor a harness can be compared with.

Prints one JSON line: ``{"n", "ok", "loop_s", "cpu_s"}`` (``loop_s``: time from the first
request to the last response, without interpreter start-up and imports; ``cpu_s``: the
process CPU time spent over that span).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import time

import aiohttp


async def _main(dataset: str, base_url: str, concurrency: int) -> dict[str, float]:
    with open(dataset, encoding="utf-8") as f:
        inputs = [json.loads(line)["input"] for line in f if line.strip()]
    url = base_url.rstrip("/") + "/chat/completions"
    ok = 0
    c0, t0 = _cpu(), time.perf_counter()
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=concurrency),
        headers={"Content-Type": "application/json"},
    ) as session:
        work = iter(inputs)

        async def worker() -> None:
            nonlocal ok
            for text in work:
                body = {"model": "m", "messages": [{"role": "user", "content": text}]}
                async with session.post(url, data=json.dumps(body).encode()) as resp:
                    data = json.loads(await resp.read())
                if resp.status == 200 and data["choices"][0]["message"]["content"]:
                    ok += 1

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    loop_s, cpu_s = time.perf_counter() - t0, _cpu() - c0
    return {"n": len(inputs), "ok": ok, "loop_s": loop_s, "cpu_s": cpu_s}


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dataset")
    p.add_argument("base_url")
    p.add_argument("--concurrency", type=int, default=100)
    args = p.parse_args()
    coro = _main(args.dataset, args.base_url, args.concurrency)
    try:
        import uvloop
    except ImportError:
        result = asyncio.run(coro)
    else:
        result = uvloop.run(coro)
    print(json.dumps(result), flush=True)
    return 0 if result["ok"] == result["n"] else 1


if __name__ == "__main__":
    sys.exit(main())
