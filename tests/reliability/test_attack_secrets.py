"""URL credentials the 0.2 redaction missed: OAuth fragments (``#access_token=``), a
percent-encoded parameter name (``%74oken``), ``;``-separated parameters, ``jwt``, and a
URL nested in a parameter (``?next=https://user:pw@host``). None may reach a file or an
output stream of a real run and report."""

from __future__ import annotations

from pathlib import Path

import pytest
from reliability_support import run_cli, write_jsonl

from agenteval._util.secrets import REDACTED, Redactor, redact_url, url_secrets

pytestmark = pytest.mark.reliability

FRAG = "fr-FRAGMENT5555555555aaaaaaaa"
ENCODED = "en-ENCODEDNAME666666666bbbbbbb"
SEMI = "se-SEMICOLON77777777777ccccccc"
JWT = "jw-JWTPARAM8888888888dddddddd"
NESTED = "ne-NESTEDPW9999999999eeeeeeee"
SECRETS = (FRAG, ENCODED, SEMI, JWT, NESTED)
URL = (
    f"http://127.0.0.1:9/v1?v=1;sig={SEMI}&%74oken={ENCODED}&jwt={JWT}"
    f"&next=https://svc:{NESTED}@idp.example/cb#access_token={FRAG}&state=ok"
)


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        (f"https://app.example/cb#access_token={FRAG}&state=ok", "#access_token=[REDACTED]&state"),
        (f"https://h/x?%74oken={ENCODED}", "?%74oken=[REDACTED]"),
        (f"https://h/x?v=1;sig={SEMI}", "?v=1;sig=[REDACTED]"),
        (f"https://h/x?jwt={JWT}", "?jwt=[REDACTED]"),
        (f"https://h/x?next=https://u:{NESTED}@i/", "?next=https://[REDACTED]@i/"),
    ],
)
def test_redact_url_forms(url: str, kept: str) -> None:
    out = redact_url(url)
    assert kept in out and not any(s in out for s in SECRETS)
    # the values are known secrets too, for messages that quote them outside a URL
    secret = next(s for s in SECRETS if s in url)
    assert Redactor(url_secrets(url)).redact(f"error: {secret} refused") == (
        f"error: {REDACTED} refused"
    )


def test_ordinary_urls_are_unchanged() -> None:
    for url in ("https://medium.com/@user/post", "https://h/#/route?x=1", "https://h/x?q=1#s-2"):
        assert redact_url(url) == url
    assert REDACTED not in redact_url("https://h/x?page=2;lang=en#top")


def test_url_secret_forms_never_reach_a_file_or_stream(tmp_path: Path) -> None:
    dataset = write_jsonl(tmp_path / "cases.jsonl", [{"id": "a", "input": "q"}])
    run = tmp_path / "run"
    outs: list[str] = []
    p = run_cli(
        "run", dataset, "--endpoint", URL, "--model", "m", "--out", run,
        "--max-retries", "0", "--timeout", "5",
    )  # fmt: skip
    outs += [p.stdout, p.stderr]
    assert (run / "trials.jsonl").exists(), p.stderr
    for fmt in ("--html", "--junit", "--markdown", "--json"):
        r = run_cli("report", run, fmt, tmp_path / f"report{fmt}")
        outs += [r.stdout, r.stderr]
    files = [f for f in tmp_path.rglob("*") if f.is_file()]
    leaks = [(f.name, s) for f in files for s in SECRETS if s.encode() in f.read_bytes()]
    leaks += [("stream", s) for o in outs for s in SECRETS if s in o]
    assert not leaks, leaks
