"""Talking to models, shared by agent adapters, the judge and simulated users: the HTTP
client with every retry recorded (:mod:`.http`), the per-trial :class:`~.recorder.Recorder`
and :class:`~.recorder.AgentFailure`, W3C trace context (:mod:`.propagation`), token prices
(:mod:`.pricing`), the reply cache (:mod:`.cache`), fencing untrusted text in prompts
(:mod:`.fence`) and an offline local model (:mod:`.local_model`)."""
