"""Seeing inside agents: spans and transcripts mapped to trial trajectories.

- :mod:`agenteval.traces.mapping`: plain span records → tool calls, usage, tools, model time;
- :mod:`agenteval.traces.capture`: per-trial in-process OpenTelemetry capture;
- :mod:`agenteval.traces.merge`: which source a trial's calls come from.
"""
