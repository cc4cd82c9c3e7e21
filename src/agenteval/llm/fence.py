"""Fencing untrusted text in a judge prompt so that it cannot pose as instructions.

The agent's answer, its tool results, and even dataset fields are *data* to the judge.
Each is put between two marker lines carrying a boundary token::

    [BEGIN answer FENCE-3f9c…]
    …untrusted text…
    [END answer FENCE-3f9c…]

The boundary is derived from a SHA-256 hash of all the fenced texts, so the same content
always gives the same prompt (the judge cache depends on that), while no text can contain
the boundary of the prompt it ends up in: that would require the text to contain its own
hash. That is also checked: when the boundary occurs in any fenced text (compared without
regard to case), it is derived again with a counter until it does not. Text therefore can
neither close its fence nor open a new one; every occurrence of the boundary in a rendered
prompt is one of the marker lines written here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from itertools import count

BOUNDARY_PREFIX = "FENCE-"
_HEX_CHARS = 32


def boundary_candidates(texts: Sequence[str]) -> Iterator[str]:
    """The endless, deterministic sequence of boundaries tried for ``texts``."""
    h = hashlib.sha256()
    for t in texts:
        data = t.encode("utf-8", errors="surrogatepass")
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    seed = h.digest()
    for n in count():
        digest = hashlib.sha256(seed + n.to_bytes(8, "big")).hexdigest()
        yield BOUNDARY_PREFIX + digest[:_HEX_CHARS]


def first_absent(candidates: Iterable[str], texts: Sequence[str]) -> str:
    """The first candidate that occurs in none of ``texts`` (compared case-insensitively)."""
    lowered = [t.lower() for t in texts]
    for boundary in candidates:
        token = boundary.lower()
        if not any(token in t for t in lowered):
            return boundary
    raise ValueError("every candidate boundary occurs in the texts")


def derive_boundary(texts: Sequence[str]) -> str:
    """A boundary token that occurs in none of ``texts`` (case-insensitively).

    Deterministic: the same texts (in the same order) give the same boundary.
    """
    return first_absent(boundary_candidates(texts), texts)


def begin_marker(label: str, boundary: str) -> str:
    """The line that opens a fence."""
    return f"[BEGIN {label} {boundary}]"


def end_marker(label: str, boundary: str) -> str:
    """The line that closes a fence."""
    return f"[END {label} {boundary}]"


def fence(label: str, text: str, boundary: str) -> str:
    """``text`` between the opening and closing marker lines (each on its own line).

    The caller guarantees ``boundary`` does not occur in ``text`` (use
    :func:`derive_boundary` over every text fenced in one prompt).
    """
    return f"{begin_marker(label, boundary)}\n{text}\n{end_marker(label, boundary)}"


def unfence(rendered: str, boundary: str) -> list[tuple[str, str]]:
    """The (label, text) pairs fenced in ``rendered``, in order.

    The inverse of :func:`fence` for a prompt whose fences all use ``boundary``; used to
    check that a rendered prompt has exactly the structure it was built with. Raises
    ``ValueError`` when a marker is malformed or unbalanced.
    """
    out: list[tuple[str, str]] = []
    pos = 0
    while True:
        i = rendered.find(boundary, pos)
        if i < 0:
            return out
        line_start = rendered.rfind("\n", 0, i) + 1
        head = rendered[line_start:i]
        if (
            not head.startswith("[BEGIN ")
            or rendered[i + len(boundary) : i + len(boundary) + 2] != "]\n"
        ):
            raise ValueError(f"unexpected boundary occurrence at {i}")
        label = head[len("[BEGIN ") :].rstrip(" ")
        body_start = i + len(boundary) + 2
        closing = "\n" + end_marker(label, boundary)
        j = rendered.find(boundary, body_start)
        if j < 0:
            raise ValueError(f"fence {label!r} is never closed")
        k = rendered.rfind(closing, body_start, j + len(boundary) + 1)
        if k < 0 or k + len(closing) != j + len(boundary) + 1:
            raise ValueError(f"fence {label!r} is not closed by its own end marker")
        out.append((label, rendered[body_start:k]))
        pos = k + len(closing)
