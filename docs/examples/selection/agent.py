"""The agent of docs/selection.md: reads an amount and a rate, answers amount * rate / 100.

PROMPT=v1 (the default) misreads the rate of a transfer fee by one point; PROMPT=v2 does not.
"""

import os
import re


def answer(case):
    amount, rate = (float(x) for x in re.findall(r"\d+(?:\.\d+)?", case.input_text())[:2])
    if "fee" in case.input_text() and os.environ.get("PROMPT", "v1") == "v1":
        rate -= 1
    return f"{amount * rate / 100:g}"
