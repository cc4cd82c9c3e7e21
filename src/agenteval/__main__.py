"""``python -m agenteval``: the same as the ``agenteval`` command."""

from agenteval.cli import _entry

if __name__ == "__main__":
    _entry()
