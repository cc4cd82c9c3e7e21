"""What is asked of the agent: the :class:`~agenteval.cases.case.Case` model, the expected-calls
grammar (:mod:`.calls`, :mod:`.call_nodes`), conversational turns and simulated-user specs
(:mod:`.conversation`), tool definitions (:mod:`.tooldefs`) and argument checking
(:mod:`.arguments`, :mod:`.fastschema`), and prompt templates (:mod:`.prompt`)."""
