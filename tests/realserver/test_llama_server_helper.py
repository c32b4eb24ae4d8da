"""The helper that starts the real llama.cpp server (tests/llama_server.py): it says exactly
what is missing, fails with the server's own log when the server cannot start, and leaves no
process behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.llama_server import BINARY_ENV, MODEL_ENV, LlamaServer, find_parts


@pytest.fixture
def parts() -> tuple[Path, Path]:
    found = find_parts()
    if isinstance(found, str):
        pytest.skip(found)
    return found


def test_a_variable_that_names_no_usable_file_is_the_reason_given(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    not_executable = tmp_path / "llama-server"
    not_executable.write_text("#!/bin/sh\n", encoding="utf-8")
    monkeypatch.setenv(BINARY_ENV, str(not_executable))
    monkeypatch.setenv(MODEL_ENV, str(tmp_path / "absent.gguf"))
    assert find_parts() == (
        f"{BINARY_ENV}={not_executable} is not an executable file; "
        f"{MODEL_ENV}={tmp_path / 'absent.gguf'} is not a file (install both with .ci/install-llama-server VENV)"
    )
    not_executable.chmod(0o755)
    (tmp_path / "absent.gguf").write_bytes(b"")
    assert find_parts() == (not_executable, tmp_path / "absent.gguf")


def test_a_server_that_cannot_load_its_model_fails_with_the_end_of_its_log(parts: tuple[Path, Path], tmp_path: Path) -> None:
    not_a_model = tmp_path / "empty.gguf"
    not_a_model.write_bytes(b"")
    server = LlamaServer(parts[0], not_a_model)
    try:
        with pytest.raises(RuntimeError, match=r"^llama-server exited with status [1-9]") as failed:
            server.start()
        assert str(server.log_path) in str(failed.value) and "empty.gguf" in str(failed.value)
        assert server.log_path.is_file(), "the log is kept when the server fails"
    finally:
        server.stop()
    assert not server.folder.exists()


def test_stop_ends_the_server_and_removes_its_folder(parts: tuple[Path, Path]) -> None:
    with LlamaServer(*parts, 512) as server:
        assert server.port > 0 and server.get("/props")["default_generation_settings"]["n_ctx"] == 512
        process = server._process
        assert process is not None
    assert process.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.killpg(process.pid, 0)
    assert not server.folder.exists()
