"""Redactor and redact_mapping: secrets never survive."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agenteval._util.secrets import REDACTED, Redactor, is_secret_key, redact_mapping


def test_redactor_replaces_every_occurrence_longest_first() -> None:
    r = Redactor(["abcd", "abcdefgh", "xy", ""])
    assert r.values == ("abcdefgh", "abcd")
    assert r.redact("k=abcdefgh, k2=abcd; abcd") == f"k={REDACTED}, k2={REDACTED}; {REDACTED}"
    assert r("short xy stays") == "short xy stays"
    assert Redactor().redact("anything") == "anything"


@given(st.text(min_size=4), st.text(), st.text())
def test_secret_never_survives(secret: str, before: str, after: str) -> None:
    out = Redactor([secret]).redact(before + secret + after)
    assert secret not in out or secret in REDACTED


def test_secret_keys() -> None:
    for key in (
        "Authorization",
        "api_key",
        "X-API-Key",
        "apiKey",
        "access_token",
        "client_secret",
        "password",
        "OPENAI_API_KEY",
    ):
        assert is_secret_key(key), key
    for key in ("max_tokens", "model", "temperature", "base_url", "tokens_used"):
        assert not is_secret_key(key), key


def test_redact_mapping_nested() -> None:
    r = Redactor(["sk-123456"])
    data: dict[str, Any] = {
        "kind": "x",
        "headers": {"Authorization": "Bearer sk-123456", "Accept": "json"},
        "params": {"max_tokens": 5, "api_key": None},
        "url": "http://h/?key=sk-123456",
        "list": [{"token": "t"}, "sk-123456"],
    }
    assert redact_mapping(data, r) == {
        "kind": "x",
        "headers": {"Authorization": REDACTED, "Accept": "json"},
        "params": {"max_tokens": 5, "api_key": None},
        "url": f"http://h/?key={REDACTED}",
        "list": [{"token": REDACTED}, REDACTED],
    }
    assert data["headers"]["Authorization"] == "Bearer sk-123456"  # not modified in place


def test_redact_url_rules() -> None:
    from agenteval._util.secrets import redact_url, redact_urls, url_secrets

    url = "https://me:pw-123456@h.example:8443/v1?api-key=K1&api-version=2024&X-Amz-Signature=S#f"
    assert redact_url(url) == (
        "https://[REDACTED]@h.example:8443/v1?api-key=[REDACTED]&api-version=2024"
        "&X-Amz-Signature=[REDACTED]#f"
    )
    assert redact_url("http://h/v1") == "http://h/v1"
    assert redact_url("http://TOKEN99@h/x?model=m") == "http://[REDACTED]@h/x?model=m"
    assert set(url_secrets(url)) >= {"me:pw-123456", "pw-123456", "K1", "S"}
    assert "me" not in url_secrets(url)  # a user name with a password is no secret
    assert redact_urls("failed: http://a:bbbb@h/?token=t") == (
        "failed: http://[REDACTED]@h/?token=[REDACTED]"
    )


def test_a_parameter_named_by_a_credential_word_is_secret_one_merely_containing_it_is_not() -> None:
    from agenteval._util.secrets import is_secret_param, redact_url, url_secrets

    secret = [
        "api-key", "apiKey", "APIKEY", "X-API-KEY", "access_token", "accesstoken", "%74oken",
        "X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token", "AWSAccessKeyId",
        "Ocp-Apim-Subscription-Key", "client_secret", "password", "passwd", "pwd", "pass",
        "sig", "jwt", "code", "authCode", "auth", "bearer", "PHPSESSID", "sessionId", "key",
    ]  # fmt: skip
    plain = ["keyword", "passage", "authors", "codec", "tokenizer", "monkey", "zipcode", "keys"]
    assert [n for n in secret if not is_secret_param(n)] == []
    assert [n for n in plain if is_secret_param(n)] == []
    # an ordinary word in the URL is not a secret to scrub from every message and response
    url = "https://h/search?keyword=cats&passage=intro&api_key=K123"
    assert redact_url(url) == "https://h/search?keyword=cats&passage=intro&api_key=[REDACTED]"
    assert "cats" not in url_secrets(url) and "K123" in url_secrets(url)


def test_password_with_unencoded_slash_is_redacted() -> None:
    from agenteval._util.secrets import redact_url, redact_urls, url_secrets

    assert redact_url("https://bob:pa/ss@db.example/x") == "https://[REDACTED]@db.example/x"
    assert redact_url("https://bob:a/b/c?d#e@h:5432/db") == "https://[REDACTED]@h:5432/db"
    assert "pa/ss" in url_secrets("https://bob:pa/ss@db.example/x")
    assert (
        redact_urls("error at postgres://u:p/w@h/db now")
        == "error at postgres://[REDACTED]@h/db now"
    )
    # a port is not a password; "@" later in the path is not user info
    for keep in (
        "https://h.example:8443/@scope/pkg",
        "https://medium.com/@someone",
        "https://h:80/a@b",
        "https://h:/x@y",
    ):
        assert redact_url(keep) == keep


def test_headers_redacted_unless_public() -> None:
    from agenteval._util.secrets import redact_headers

    got = redact_headers({"Cookie": "c", "X-Auth-Key": "k", "content-type": "a/b", "Accept": "x"})
    assert got == {
        "Cookie": "[REDACTED]",
        "X-Auth-Key": "[REDACTED]",
        "content-type": "a/b",
        "Accept": "x",
    }
