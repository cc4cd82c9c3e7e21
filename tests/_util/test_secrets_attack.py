"""Attacks on the URL-parameter credential rule (:func:`is_secret_param`).

Two ways it can be wrong, both with consequences beyond the redacted text: a credential
it misses is written into run.json and the replay cache; an ordinary parameter it takes
for a credential makes two different requests one replay-cache key (the replay answers
page 2 with page 1's reply) and its value is scrubbed from every message and response.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from agenteval._util.secrets import Redactor, is_secret_param, redact_url, url_secrets
from agenteval.llm.replay import ReplayCache

# real APIs' credentials: OAuth 1.0 (oauth_verifier), PKCE (code_verifier), OAuth JWT
# bearer grants and client assertions (assertion, client_assertion), one-time passcodes
MISSED = ["oauth_verifier", "passcode", "assertion", "client_assertion", "code_verifier"]

# ordinary parameters that hold a credential word: pagination cursors (Google's pageToken,
# nextPageToken; continuation and sync tokens), the many "*_code" values (ISO country,
# language, currency codes, an HTTP status), a database's sort or partition key, and a word
# followed by what it counts or describes (token_count, signature_version, auth_type)
ORDINARY = [
    "page_token", "pageToken", "nextPageToken", "next_page_token", "continuation_token",
    "sync_token", "resumption_token", "NextToken", "next_token", "pagination_token",
    "$skiptoken", "$deltatoken", "ContinuationToken", "nextpagetoken", "country_code",
    "countryCode", "language_code",
    "lang_code", "currency_code", "status_code", "error_code", "postal_code", "zip_code",
    "region_code", "sort_key", "partition_key", "primary_key", "token_count", "max_token_count",
    "session_length", "session_count", "signature_version", "SignatureVersion",
    "SignatureMethod", "auth_type", "auth_method", "pass_rate", "pass_count", "token_type",
    "state", "client_id", "nonce",
]  # fmt: skip

# and those must stay credentials
STILL_SECRET = [
    "access_token", "accessToken", "session_id", "sessionId", "X-Amz-Security-Token",
    "refresh_token", "id_token", "auth_token", "api_key", "apiKey", "AWSAccessKeyId",
    "sig", "code", "X-Goog-Signature", "X-Goog-Credential", "token", "oauth_token",
    "oauth_signature", "private_key", "secret_key", "client_secret", "csrf_token",
    "security_token", "x-api-key", "page_access_token", "bot_token", "previous_password",
    "next_password", "sort_secret",
]  # fmt: skip


def test_credentials_of_real_apis_are_not_missed() -> None:
    assert [n for n in MISSED if not is_secret_param(n)] == []
    assert [n for n in STILL_SECRET if not is_secret_param(n)] == []


def test_ordinary_parameters_with_a_credential_word_are_kept() -> None:
    assert [n for n in ORDINARY if is_secret_param(n)] == []
    url = "https://h/v1/items?pageToken=CAUQAA&country_code=FR&key=K123"
    assert redact_url(url) == "https://h/v1/items?pageToken=CAUQAA&country_code=FR&key=[REDACTED]"
    assert url_secrets(url) == ["K123"]


def test_two_pages_are_two_replay_entries(tmp_path: Path) -> None:
    cache, body, r = ReplayCache(tmp_path), {"model": "m"}, Redactor()
    keys = {
        cache.request_key("http", f"http://127.0.0.1:9/items?{q}", body, r)
        for q in ("pageToken=P1", "pageToken=P2", "country_code=US", "country_code=FR")
    }
    assert len(keys) == 4


_NEUTRAL = ["user", "query", "limit", "offset", "lang", "q", "id", "name", "format", "max"]


@given(
    words=st.lists(st.sampled_from(_NEUTRAL), min_size=1, max_size=4),
    sep=st.sampled_from(["_", "-", ".", ""]),
    cred=st.sampled_from(["secret", "password", "api_key", "access_token", "sig"]),
)
def test_any_name_of_ordinary_words_is_kept_and_a_credential_after_it_is_not(
    words: list[str], sep: str, cred: str
) -> None:
    name = sep.join(words)
    assert not is_secret_param(name)
    assert is_secret_param(f"{name}_{cred}")
