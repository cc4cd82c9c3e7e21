"""The replay cache against hostile entries and replies: FIFOs, symbolic links, huge files,
a reply whose text would break a text-level redaction. Real files, a real server on
127.0.0.1, real subprocesses for what could hang or exhaust memory."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from agenteval.llm.http import HttpClient
from agenteval.llm.recorder import Recorder
from agenteval.llm.replay import ReplayCache
from agenteval.testing.fake_openai import fake_openai_server

SECRET = "sk-live-0123456789abcdef"
KEY = "ab" * 32


def _entry_path(root: Path) -> Path:
    path = root / KEY[:2] / f"{KEY}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _lookup_in_a_subprocess(root: Path, limit_bytes: int | None = None) -> str:
    """``ReplayCache(root).lookup(KEY)`` in a child (which may be memory-limited); what it
    printed. A child that hangs fails the test by its timeout, not the suite."""
    code = (
        "import resource, sys\n"
        "from agenteval.llm.replay import ReplayCache\n"
        f"lim = {limit_bytes!r}\n"
        "if lim: resource.setrlimit(resource.RLIMIT_AS, (lim, lim))\n"
        f"print(ReplayCache(sys.argv[1]).lookup({KEY!r}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(root)], capture_output=True, text=True, timeout=20
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip()


def test_a_fifo_entry_is_a_miss_not_a_hang(tmp_path: Path) -> None:
    os.mkfifo(_entry_path(tmp_path))
    assert _lookup_in_a_subprocess(tmp_path) == "None"


def test_a_symlinked_entry_is_a_miss_and_is_replaced_by_a_file(tmp_path: Path) -> None:
    elsewhere = tmp_path / "outside.json"
    forged = {"cache_format": 1, "response": {"forged": True}, "latency_s": 0.1}
    elsewhere.write_text(json.dumps(forged))
    path = _entry_path(tmp_path / "cache")
    path.symlink_to(elsewhere)
    cache = ReplayCache(tmp_path / "cache")
    assert cache.lookup(KEY) is None  # a cache entry is only ever written by a rename
    passwd = _entry_path(tmp_path / "cache2")
    passwd.symlink_to("/etc/passwd")
    assert ReplayCache(tmp_path / "cache2").lookup(KEY) is None
    from agenteval._util.secrets import Redactor

    cache.store(KEY, "http://h/v1", {"ok": 1}, 0.1, Redactor())
    assert not path.is_symlink() and json.loads(elsewhere.read_text()) == forged
    hit = cache.lookup(KEY)
    assert hit is not None and hit.data == {"ok": 1}


def test_a_huge_entry_is_a_miss_without_reading_it(tmp_path: Path) -> None:
    with open(_entry_path(tmp_path), "wb") as f:  # 1 GiB, sparse: no disk used
        f.truncate(1 << 30)
    # a child limited to 512 MiB of address space: reading the file whole would fail
    assert _lookup_in_a_subprocess(tmp_path, limit_bytes=512 << 20) == "None"


def test_a_reply_quoting_a_secret_looking_url_is_stored_and_replayed(tmp_path: Path) -> None:
    """The fake server echoes the prompt; with an API key known, the stored reply is
    scrubbed. A URL with a secret-looking parameter followed by a quote (``?code=x"``)
    cut the JSON escape in two when the reply's JSON text was redacted: the call raised."""
    asyncio.run(_quoted_url(tmp_path))


async def _quoted_url(tmp_path: Path) -> None:
    prompt = f'open https://x.example/cb?code=abc" and {SECRET}\\ then "quote"'
    body = {"model": "m", "messages": [{"role": "user", "content": prompt}]}
    async with fake_openai_server() as srv:
        url = srv.base_url + "/chat/completions"
        client = HttpClient(
            headers={"Authorization": f"Bearer {SECRET}"}, cache=ReplayCache(tmp_path)
        )
        try:
            data, replayed = await client.post_json_cached(url, body, Recorder())
            assert replayed is None
            again, replayed = await client.post_json_cached(url, body, Recorder())
            assert replayed is not None and sum(srv.counts.values()) == 1
        finally:
            await client.close()
    text = again["choices"][0]["message"]["content"]
    assert SECRET not in text and "[REDACTED]" in text and '\\ then "quote"' in text
    stored = "".join(p.read_text() for p in tmp_path.rglob("*.json"))
    assert SECRET not in stored
    assert data["choices"][0]["message"]["content"].startswith("echo: open")


def test_endpoints_differing_in_a_plain_parameter_never_share_an_entry(tmp_path: Path) -> None:
    from agenteval._util.secrets import Redactor

    cache, body, r = ReplayCache(tmp_path), {"model": "m", "input": "x"}, Redactor()
    cats = cache.request_key("http", "http://127.0.0.1:9/search?keyword=cats", body, r)
    dogs = cache.request_key("http", "http://127.0.0.1:9/search?keyword=dogs", body, r)
    assert cats != dogs
    # a real credential still leaves the key: a rotated key hits the same entry
    k1 = cache.request_key("http", "http://127.0.0.1:9/search?keyword=cats&api_key=K1", body, r)
    k2 = cache.request_key("http", "http://127.0.0.1:9/search?keyword=cats&api_key=K2", body, r)
    assert k1 == k2 != cats
