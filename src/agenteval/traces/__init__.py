"""Seeing inside agents: spans and transcripts mapped to trial trajectories.

- :mod:`agenteval.traces.records`: plain span records (input) and the trajectory (output);
- :mod:`agenteval.traces.mapping`: span records → tool calls, usage, tools, model time;
- :mod:`agenteval.traces.capture`: per-trial in-process OpenTelemetry capture;
- :mod:`agenteval.traces.merge`: which source a trial's calls come from.
"""
