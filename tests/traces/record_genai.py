"""Record ``fixtures/genai/``: every library × mode of ``genai_libs.LIBS`` run for real.

``python tests/traces/record_genai.py [EXTRA_PYTHONPATH]``: starts the fake OpenAI server,
runs ``genai_libs.py`` per library and mode in its own process, and writes
``<lib>-<version>-<mode>.traces.json`` (and ``.logs.json`` when the library emitted
logs). ``EXTRA_PYTHONPATH`` (e.g. a ``pip install --target`` folder holding an older
version) goes first on the path, so another version can be recorded beside the installed
one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from genai_libs import LIBS  # noqa: E402

from fake_server_util import fake_server_process  # noqa: E402


def _version(dist: str, env: dict[str, str]) -> str:
    code = f"import importlib.metadata as m; print(m.version({dist!r}))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    return out.stdout.strip() or "missing"


def main(extra_path: str = "") -> None:
    env = dict(os.environ)
    if extra_path:
        env["PYTHONPATH"] = os.pathsep.join([extra_path, env.get("PYTHONPATH", "")])
    out = HERE / "fixtures" / "genai"
    out.mkdir(parents=True, exist_ok=True)
    with fake_server_process() as url:
        for lib, (dist, modes) in LIBS.items():
            version = _version(dist, env)
            if version == "missing" or (
                extra_path
                and not (Path(extra_path) / dist).exists()
                and not list(Path(extra_path).glob(f"{dist.replace('-', '_')}-*"))
            ):
                continue
            for mode in modes:
                stem = f"{lib}-{version}-{mode}"
                logs = out / f"{stem}.logs.json"
                logs.unlink(missing_ok=True)
                cmd = [sys.executable, str(HERE / "genai_libs.py"), lib, mode, url]
                cmd += [str(out / f"{stem}.traces.json"), str(logs)]
                subprocess.run(cmd, env=env, check=True, timeout=120)
                print(stem)


if __name__ == "__main__":
    main(*sys.argv[1:2])
