"""agenteval: evaluate AI agents — run, record, score, report, gate."""

__version__ = "0.1.0"
