"""JUnit XML, so that CI systems show results natively.

Layout: ``<testsuites>`` → one ``<testsuite name="agenteval.SCORER">`` per scorer → one
``<testcase classname="agenteval.SCORER" name="CASE_ID">`` per case where that scorer
applied to at least one repeat, or errored.

- The case passes when every applicable repeat passed (with repeats, a case is one test).
- A failing case carries ``<failure message=REASON>`` (the first failing repeat's reason;
  the body says how many repeats passed).
- A case where the scorer only errored carries ``<error>`` (a scorer error is not an agent
  failure); cases where it never applied are omitted.
- ``time`` is the case's mean total latency; ``tests``/``failures``/``errors``/``skipped``
  counts on every suite and on ``<testsuites>`` agree with the testcases.

Escape sequences and unsafe characters (:mod:`agenteval._util.untrusted`: controls, C1, bidi
overrides, noncharacters, lone surrogates; among them every character XML 1.0 cannot hold)
are removed from all text.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from agenteval._util.untrusted import strip_unsafe
from agenteval.rundir import iter_trials, read_header
from agenteval.summary.percase import aggregate_cases


def _xml_text(text: str, limit: int | None = None) -> str:
    s = strip_unsafe(text, keep="\t\n\r")
    if limit is not None and len(s) > limit:
        s = s[: limit - 1] + "…"
    return s


def junit_tree(run_dir: str | Path) -> ET.ElementTree[ET.Element]:
    """Build the JUnit XML tree for a run (one streaming pass over its trials)."""
    header = read_header(run_dir)
    cases = aggregate_cases(iter_trials(run_dir))
    names: list[str] = header.scorer_names
    for agg in cases.values():
        names.extend(n for n in agg.scores if n not in names)
    root = ET.Element("testsuites", name=_xml_text(f"agenteval {header.run_id}"))
    totals = {"tests": 0, "failures": 0, "errors": 0, "time": 0.0}
    for name in names:
        suite = ET.SubElement(root, "testsuite", name=_xml_text(f"agenteval.{name}"))
        counts = {"tests": 0, "failures": 0, "errors": 0, "time": 0.0}
        for case_id, agg in cases.items():
            cs = agg.scores.get(name)
            if cs is None or (cs.applicable == 0 and cs.errors == 0):
                continue
            t = agg.mean_latency or 0.0
            tc = ET.SubElement(
                suite,
                "testcase",
                classname=_xml_text(f"agenteval.{name}"),
                name=_xml_text(case_id),
                time=f"{t:.3f}",
            )
            counts["tests"] += 1
            counts["time"] += t
            if cs.applicable == 0:
                counts["errors"] += 1
                err = ET.SubElement(
                    tc, "error", message=_xml_text(cs.first_error or "scorer error", 500)
                )
                err.set("type", "scorer_error")
                err.text = _xml_text(cs.first_error or "")
            elif not cs.all_passed:
                counts["failures"] += 1
                reason = cs.first_failure or "failed"
                fail = ET.SubElement(tc, "failure", message=_xml_text(reason, 500))
                fail.set("type", _xml_text(name))
                fail.text = _xml_text(
                    f"{reason}\n({cs.passed} of {cs.applicable} applicable repeat(s) passed;"
                    f" mean value {cs.mean:.3f})"
                )
        for key in ("tests", "failures", "errors"):
            suite.set(key, str(counts[key]))
            totals[key] += counts[key]
        suite.set("skipped", "0")
        suite.set("time", f"{counts['time']:.3f}")
        totals["time"] += counts["time"]
    for key in ("tests", "failures", "errors"):
        root.set(key, str(totals[key]))
    root.set("skipped", "0")
    root.set("time", f"{totals['time']:.3f}")
    return ET.ElementTree(root)


def write_junit(run_dir: str | Path, out_path: str | Path) -> None:
    """Write the run's JUnit XML (see the module docstring) to ``out_path``."""
    tree = junit_tree(run_dir)
    ET.indent(tree)
    tree.write(out_path, encoding="utf-8", xml_declaration=True)
