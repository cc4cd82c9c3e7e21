"""Conversations: multi-turn cases, simulated users and per-trial state (docs/conversations.md).

A :class:`~agenteval.conversation.agent.ConversationAgent` wraps the agent under test and
runs each conversational case as one trial: it plays the user's turns (scripted or
simulated), calls the agent once per turn with the whole history, and records the turns.
Cases with an ``initial_state`` get their own SQLite database per trial
(:mod:`agenteval.conversation.state`).
"""

from __future__ import annotations
