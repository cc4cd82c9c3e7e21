"""``agenteval demo``: build the shop, run both demo agents, summarise, gate.

Everything goes into one directory (a new temporary one unless given):

- ``shop.db`` (the data), ``cases.jsonl`` (the dataset), ``shop_tools.py`` (the shop's
  tools as a ``--tools`` module for the built-in tool loop);
- ``runs/careful`` and ``runs/sloppy``: run directories, each with ``report.html``;
- with ``--local-model``, ``runs/local-smollm2`` too: SmolLM2-135M through the tool loop
  (on ``cases-local.jsonl``, a sample spread over the case groups, unless all are asked).

The gate is asked twice: may the sloppy agent replace the careful one (it must be
blocked), and may the careful one replace the sloppy one (it must pass). The demo's exit
status is 0 when both verdicts come out that way.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.rule import Rule

from agenteval.agents.base import Agent
from agenteval.demo.agents import CarefulAgent, SloppyAgent
from agenteval.demo.cases import demo_cases, spread, write_cases
from agenteval.demo.shop import build_database
from agenteval.errors import FieldName, InputError
from agenteval.run.runner import RunSettings
from agenteval.run.session import Session
from agenteval.scorers import builtin_scorers
from agenteval.scoring.apply import Scorers

LOCAL_PARAMS: dict[str, Any] = {"temperature": 0, "max_tokens": 160, "repeat_penalty": 1.3}
"""Request parameters for the local model: greedy (deterministic), with llama.cpp's repeat
penalty, without which the 135M model tends to loop on digits until max_tokens."""

_TOOLS_MODULE = '''"""The demo shop's tools, over shop.db beside this file (from `agenteval demo`).

Offer them to a real model with the built-in tool loop, e.g. a local llama.cpp server:

    agenteval run cases.jsonl --agent tool-loop --tools shop_tools.py \\
        --endpoint http://127.0.0.1:8080/v1 --model my-model --out runs/my-model
"""

from pathlib import Path

from agenteval.demo.shop import ShopTools

TOOLS = ShopTools(Path(__file__).with_name("shop.db")).functions()
'''


@dataclass(slots=True)
class DemoFiles:
    """Where the demo's inputs are."""

    root: Path
    database: Path
    cases: Path
    tools_module: Path


@dataclass(slots=True)
class DemoResult:
    """The demo's runs and the gate's two verdicts."""

    files: DemoFiles
    runs: dict[str, Path] = field(default_factory=dict)
    sloppy_blocked: bool = False
    careful_passed: bool = False
    block_reasons: list[str] = field(default_factory=list)

    @property
    def as_expected(self) -> bool:
        """True when the sloppy agent was blocked and the careful one passed."""
        return self.sloppy_blocked and self.careful_passed


_DEMO_NAMES = frozenset(
    {"shop.db", "cases.jsonl", "cases-local.jsonl", "shop_tools.py", "runs", "__pycache__"}
)
_DEMO_MARK = _TOOLS_MODULE.splitlines()[0]


def _check_demo_dir(d: Path) -> None:
    """``d`` must be new, empty, or an earlier demo's directory (only the demo's names,
    and its data files only beside its own shop_tools.py): the demo never writes over
    files it did not make. An earlier run in ``runs/NAME`` is replaced only if it holds a
    ``run.json``."""
    if not d.exists():
        return
    if not d.is_dir():
        raise InputError("exists and is not a directory", file=d)
    names = set(os.listdir(d))
    if not names:
        return
    ours = names <= _DEMO_NAMES
    if ours and names - {"runs", "__pycache__"}:  # data files: only with our shop_tools.py
        try:
            text = (d / "shop_tools.py").read_text(encoding="utf-8")
            ours = text.startswith(_DEMO_MARK)
        except (OSError, UnicodeDecodeError):
            ours = False
    if not ours:
        shown = ", ".join(sorted(names)[:3]) + (", ..." if len(names) > 3 else "")
        raise InputError(
            (
                f"is not empty and holds no agenteval demo ({shown}); choose a new or empty ",
                FieldName("dir"),
            ),
            file=d,
        )


def build_demo(root: str | Path) -> DemoFiles:
    """Write the shop database, the dataset and the tools module into ``root`` (new, empty,
    or an earlier demo's directory; anything else is refused with InputError)."""
    d = Path(root)
    _check_demo_dir(d)
    d.mkdir(parents=True, exist_ok=True)
    tools_module = d / "shop_tools.py"
    tools_module.write_text(_TOOLS_MODULE, encoding="utf-8")
    return DemoFiles(
        root=d,
        database=build_database(d / "shop.db"),
        cases=write_cases(d / "cases.jsonl"),
        tools_module=tools_module,
    )


def _run(
    files: DemoFiles,
    name: str,
    agent: Agent,
    console: Console,
    *,
    concurrency: int = 8,
    dataset: Path | None = None,
    prices: dict[str, Any] | None = None,
) -> Path:
    # imported when the demo runs, not by `agenteval --help`
    from agenteval.conversation.users import PythonUser
    from agenteval.demo.customer import customer

    out = files.root / "runs" / name
    if (out / "run.json").exists():
        shutil.rmtree(out)  # a run of an earlier demo in the same directory
    console.print(Rule(f"agent: {name}"))
    session = Session(
        dataset=dataset or files.cases,
        agent=agent,
        scorers=Scorers(builtin_scorers()),
        out=out,
        settings=RunSettings(concurrency=concurrency),
        prices=prices,
        user=PythonUser(customer),  # the rule-based customer of the conversations
        # imported when the demo runs, not by `agenteval --help`
    )
    from agenteval.report import render_terminal, write_html

    session.run(console=console, render=render_terminal)

    write_html(out, out / "report.html")
    return out


def _gate(baseline: Path, candidate: Path, title: str, console: Console) -> tuple[bool, list[str]]:
    # imported when the demo runs, not by `agenteval --help`
    from agenteval.gate.paired import compare_runs
    from agenteval.report.gate_text import render_gate

    console.print(Rule(title))
    result = compare_runs(baseline, candidate)
    render_gate(result, console)
    return result.blocked, list(result.reasons)


def run_demo(
    root: str | Path | None,
    console: Console,
    *,
    local_model: bool = False,
    local_limit: int | None = None,
) -> DemoResult:
    """Build the demo in ``root`` (a new temporary directory when None) and run it.

    Prints both summaries and both gate verdicts on ``console``; with ``local_model``
    also evaluates SmolLM2 through the tool loop, on ``local_limit`` cases spread over the
    groups (written to ``cases-local.jsonl``), or on all when None.
    """
    d = Path(root) if root is not None else Path(tempfile.mkdtemp(prefix="agenteval-demo-"))
    files = build_demo(d)
    console.print(
        f"demo directory: {files.root}\n"
        f"  data: {files.database.name} (customers, orders, documents)  dataset:"
        f" {files.cases.name} ({len(demo_cases())} cases)  tools: {files.tools_module.name}\n"
        "  The two agents are rule-based stand-ins for an LLM agent, calling the real tools;"
        " see docs/demo.md to run the same dataset against a real model.",
        markup=False,
        highlight=False,
    )
    result = DemoResult(files=files)
    db = str(files.database)
    result.runs["careful"] = _run(files, "careful", CarefulAgent(db), console)
    result.runs["sloppy"] = _run(files, "sloppy", SloppyAgent(db), console)
    if local_model:
        result.runs["local-smollm2"] = _run_local(files, console, local_limit)
    blocked, reasons = _gate(
        result.runs["careful"],
        result.runs["sloppy"],
        "gate: may the sloppy agent replace the careful one?",
        console,
    )
    result.sloppy_blocked, result.block_reasons = blocked, reasons
    blocked_back, _ = _gate(
        result.runs["sloppy"],
        result.runs["careful"],
        "gate: may the careful agent replace the sloppy one?",
        console,
    )
    result.careful_passed = not blocked_back
    _epilogue(result, console)
    return result


def _run_local(files: DemoFiles, console: Console, limit: int | None) -> Path:
    # imported when the demo runs, not by `agenteval --help`
    from agenteval.agents.tool_loop import ToolLoopAgent
    from agenteval.agents.toolset import ToolSet
    from agenteval.demo.shop import ShopTools
    from agenteval.llm.http import RetryPolicy
    from agenteval.llm.local_model import MODEL_NAME, LocalModelServer

    dataset = files.cases
    if limit is not None:
        dataset = write_cases(files.root / "cases-local.jsonl", spread(demo_cases(), limit))
    with LocalModelServer() as server:
        console.print(f"local model {MODEL_NAME} (llama.cpp) at {server.base_url}", markup=False)
        agent = ToolLoopAgent(
            server.base_url,
            MODEL_NAME,
            ToolSet.from_functions(ShopTools(files.database).functions()),
            max_turns=3,
            answer_on_last_turn=True,
            policy=RetryPolicy(max_retries=1, request_timeout_s=300),
            params=LOCAL_PARAMS,
            tool_format="json",
            system_prompt="You are a shop assistant. Use the tools to look things up.",
        )
        return _run(
            files,
            "local-smollm2",
            agent,
            console,
            concurrency=1,
            dataset=dataset,
            prices={MODEL_NAME: {"input": 0.0, "output": 0.0}},  # runs locally: free
        )


def _epilogue(result: DemoResult, console: Console) -> None:
    console.print(Rule("demo verdict"))
    sloppy = "BLOCKED" if result.sloppy_blocked else "NOT blocked (unexpected)"
    careful = "PASSED" if result.careful_passed else "BLOCKED (unexpected)"
    lines = [
        f"sloppy agent as candidate: {sloppy}",
        f"careful agent as candidate: {careful}",
    ]
    lines += [f"  why the sloppy agent was blocked: {r}" for r in result.block_reasons]
    root = result.files.root
    lines += [
        "",
        "next:",
        f"  agenteval report {root / 'runs' / 'sloppy'}",
        f"  open {root / 'runs' / 'sloppy' / 'report.html'}",
        f"  agenteval gate {root / 'runs' / 'careful'} {root / 'runs' / 'sloppy'}",
        "  a real model on the same cases (built-in tool loop), e.g. a local llama.cpp server:",
        f"  cd {root} && agenteval run cases.jsonl --agent tool-loop --tools shop_tools.py"
        " --endpoint http://127.0.0.1:8080/v1 --model MODEL --out runs/MODEL",
    ]
    console.print("\n".join(lines), markup=False, highlight=False)
