"""``agenteval.http``, the documented import path of the HTTP transport.

The transport lives in :mod:`agenteval.llm.http`; this module re-exports its public names
so that code written against ``from agenteval.http import RetryPolicy`` keeps working.
"""

from agenteval.llm.http import HttpClient, RetryPolicy, parse_retry_after

__all__ = ["HttpClient", "RetryPolicy", "parse_retry_after"]
