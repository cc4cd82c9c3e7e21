"""What was observed: the :class:`~agenteval.trials.trial.Trial` (answer, tool calls, usage,
latency, retries, failure; never a judgment), tool calls read from transcripts
(:mod:`.transcripts`) and how a trial says what its source did not record
(:mod:`.unrecorded`)."""
