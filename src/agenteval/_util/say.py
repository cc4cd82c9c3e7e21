"""How code below the command line speaks to its user: a ``say(line)`` it is given.

Nothing below ``agenteval.cli`` prints to stderr. A function with something to tell the
user (a resume's repairs, an interrupt, a warning about an address) takes a :data:`Say`;
the command line passes one that prints the line on stderr. Without one the line is a
warning of the ``agenteval`` logger (:func:`log_warning`): with logging not configured,
Python prints it on stderr as it is; an application that configures logging gets it there.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

Say = Callable[[str], None]
"""Tell the user one line (or a few) of text, printed as it is."""

_LOG = logging.getLogger("agenteval")


def log_warning(text: str) -> None:
    """The default :data:`Say`: ``text`` as a warning of the ``agenteval`` logger."""
    _LOG.warning("%s", text)
