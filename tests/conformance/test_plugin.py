"""The pytest plugin ``h9`` (conformance/traffic/pytest_plugin.py), run the way a user runs it.

Each test writes a small project into a temporary folder, an application test that talks to
the providers through the official SDKs, and runs pytest on it in a child process: first
recording through the proxy (``--h9-record=once``, with keys, against a local upstream), then
replaying without keys and without the upstream, then with a changed request, a missing
cassette and ``new_episodes`` (SPEC R-REC-7).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.traffic._cassette import load_cassette
from conformance.traffic._record import find_exchanges
from conformance.traffic._replay import ReplayServer
from tests.conformance.proxy_upstream import PYTHON_ENV_KEYS

pytestmark = pytest.mark.tooling  # tier 2 of tests/README.md: whole programs of the suite's tooling

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "providers"
BY_NAME = {e.name: e for e in find_exchanges([FIXTURES])}
OPENAI_KEY = "sk-proj-Plugin7Key6Never5Written4"
ANTHROPIC_KEY = "sk-ant-api03-Plugin3Key2Never1"

APP_TEST = '''
import json, os, urllib.request
import pytest

OPENAI_BODY = json.loads({openai!r})
EXTRA_BODY = json.loads({extra!r})
ANTHROPIC_BODY = json.loads({anthropic!r})


def post(url, body, headers):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def plain_chat(body):
    """The same requests as chat() without the SDKs (APP_PLAIN: runs that test the plugin alone)."""
    key = {{"authorization": "Bearer " + os.environ.get("OPENAI_API_KEY", ""), "content-type": "application/json"}}
    text = post(os.environ["OPENAI_BASE_URL"] + "/chat/completions", body, key)["choices"][0]["message"]["content"]
    if os.environ.get("APP_EXTRA"):
        answer = post(os.environ["OPENAI_BASE_URL"] + "/chat/completions", EXTRA_BODY, key)
        text += answer["choices"][0]["message"]["tool_calls"][0]["function"]["name"]
    headers = {{"x-api-key": os.environ.get("ANTHROPIC_API_KEY", ""), "content-type": "application/json"}}
    message = post(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", ANTHROPIC_BODY, headers)
    return [text, message["content"][0]["text"], message["usage"]["output_tokens"]]


def chat():
    body = dict(OPENAI_BODY)
    if os.environ.get("APP_CHANGE"):
        body["messages"] = [{{"role": "user", "content": "Something else entirely."}}]
    if os.environ.get("APP_PLAIN"):
        return plain_chat(body)
    import anthropic, openai

    client = openai.OpenAI(max_retries=0, timeout=10)
    text = client.chat.completions.create(**body).choices[0].message.content
    if os.environ.get("APP_EXTRA"):
        call = client.chat.completions.create(**EXTRA_BODY).choices[0].message.tool_calls[0]
        text += call.function.name
    message = anthropic.Anthropic(max_retries=0, timeout=10).messages.create(**ANTHROPIC_BODY)
    return [text, message.content[0].text, message.usage.output_tokens]


@pytest.mark.h9_cassette
def test_chat():
    with open(os.environ["APP_RESULT"], "w") as out:
        json.dump(chat(), out)


@pytest.mark.h9_cassette("shared")
def test_never_recorded():
    url = os.environ["OPENAI_BASE_URL"] + "/chat/completions"
    request = urllib.request.Request(url, data=json.dumps(OPENAI_BODY).encode())
    with pytest.raises(urllib.error.HTTPError, match="418"):
        urllib.request.urlopen(request, timeout=10)


def test_without_cassette():
    assert "OPENAI_BASE_URL" not in os.environ and "ANTHROPIC_BASE_URL" not in os.environ
'''


def plugin_args() -> list[str]:
    """``-p conformance.traffic.pytest_plugin`` unless the installed entry point already loads it."""
    installed = importlib.metadata.entry_points(group="pytest11")
    return [] if any(ep.value == "conformance.traffic.pytest_plugin" for ep in installed) else [
        "-p", "conformance.traffic.pytest_plugin"
    ]


def run(project: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """A child pytest run of ``project``."""
    environment = {k: v for k, v in os.environ.items() if k not in PYTHON_ENV_KEYS}
    environment.update(APP_RESULT=str(project / "result.json"), **env)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", *plugin_args(), *args],
        cwd=project, env=environment, timeout=120, capture_output=True, text=True, errors="replace", check=False,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    chosen = {"openai": "openai/text", "extra": "openai/tool-call", "anthropic": "anthropic/text"}
    bodies = {name: json.dumps(BY_NAME[fixture].request_body) for name, fixture in chosen.items()}
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_app.py").write_text(APP_TEST.format(**bodies), encoding="utf-8")
    return tmp_path


def configure(project: Path, upstream: str) -> None:
    (project / "pytest.ini").write_text(
        f"[pytest]\nh9_openai_upstream = {upstream}\nh9_anthropic_upstream = {upstream}\n",
        encoding="utf-8",
    )


@pytest.mark.sdk
def test_record_once_replay_without_keys_refuse_a_change_record_new_episodes(project: Path) -> None:
    # Only the child runs use the SDKs: finding them is enough here, importing takes seconds.
    missing = [name for name in ("openai", "anthropic") if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"the official SDKs are not installed: {', '.join(missing)}")
    keys = {"OPENAI_API_KEY": OPENAI_KEY, "ANTHROPIC_API_KEY": ANTHROPIC_KEY}
    with ReplayServer([BY_NAME["openai/text"], BY_NAME["anthropic/text"]]) as upstream:
        configure(project, upstream.base_url)
        recorded = run(project, "--h9-record=once", "-k", "test_chat", **keys)
        assert recorded.returncode == 0, recorded.stdout + recorded.stderr
        sent = {dict(seen.headers).get("authorization") for seen in upstream.requests_seen}
        assert f"Bearer {OPENAI_KEY}" in sent  # the real key went to the API
    cassette = project / "tests" / "cassettes" / "test_app" / "test_chat"
    names = [e.name for e in load_cassette(cassette)]
    assert names == ["openai/0001-post-v1-chat-completions", "anthropic/0002-post-v1-messages"]
    for path in cassette.rglob("*"):
        if path.is_file():
            assert OPENAI_KEY.encode() not in path.read_bytes()
            assert ANTHROPIC_KEY.encode() not in path.read_bytes()
    first = json.loads((project / "result.json").read_text())
    assert first[0] == json.loads(BY_NAME["openai/text"].body)["choices"][0]["message"]["content"]

    # The upstream is gone and no key is set: the cassette answers.
    replayed = run(project, "-k", "test_chat or test_without_cassette")
    assert replayed.returncode == 0, replayed.stdout
    assert "2 passed" in replayed.stdout
    assert json.loads((project / "result.json").read_text()) == first

    # The SDKs are slow to import and proven above; the runs below test the plugin alone.
    changed = run(project, "-k", "test_chat", APP_CHANGE="1", APP_PLAIN="1")
    assert changed.returncode == 1
    assert "1 requests matched no recorded exchange" in changed.stdout
    assert "closest is openai/0001-post-v1-chat-completions, body /messages" in changed.stdout

    with ReplayServer([BY_NAME["openai/tool-call"]]) as upstream:  # only the new request
        configure(project, upstream.base_url)
        extra = run(project, "--h9-record=new_episodes", "-k", "test_chat", APP_EXTRA="1", APP_PLAIN="1", **keys)
        assert extra.returncode == 0, extra.stdout
        assert len(upstream.requests_seen) == 1
    assert [e.name for e in load_cassette(cassette)][2] == "openai/0003-post-v1-chat-completions"
    assert run(project, "-k", "test_chat", APP_EXTRA="1", APP_PLAIN="1").returncode == 0
    assert json.loads((project / "result.json").read_text())[1:] == first[1:]


def test_a_missing_cassette_fails_in_replay_and_is_skipped_without_keys_when_recording(
    project: Path,
) -> None:
    configure(project, "http://127.0.0.1:9")
    replay = run(project, "-k", "test_never_recorded")
    assert replay.returncode == 1
    assert "there is no recording yet: record it with --h9-record=once" in replay.stdout
    assert "no recorded exchange has this method and path (recorded: none)" in replay.stdout
    once = run(project, "--h9-record=once", "-k", "test_never_recorded")
    assert once.returncode == 0 and "1 skipped" in once.stdout
    folder = project / "tests" / "cassettes" / "test_app" / "shared"
    needs = f"--h9-record=once: recording {folder} needs OPENAI_API_KEY or ANTHROPIC_API_KEY"
    assert needs in once.stdout
    assert not (project / "tests" / "cassettes").exists()


FAULT_APP = '''
import json, os, urllib.error, urllib.request
import pytest

BODY = json.loads({body!r})


def post(headers=None):
    url = os.environ["OPENAI_BASE_URL"] + "/chat/completions"
    sent = {{"content-type": "application/json", **(headers or {{}})}}
    request = urllib.request.Request(url, data=json.dumps(BODY).encode(), headers=sent)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("retry-after")


@pytest.mark.h9_cassette("chat", faults=["request=1, status=429, retry-after=3"])
def test_marker_faults():
    assert post() == (429, "3")
    assert post() == 200  # replay once: the 429 used up nothing


@pytest.mark.h9_cassette("chat", replay="repeat", timing="recorded")
def test_add_fault(h9_cassette):
    h9_cassette.add_fault("request=2, status=503")
    assert post() == 200
    assert post() == (503, None)
    assert post({{"x-harness9-fault": "status=500"}}) == (500, None)
    assert post() == 200


@pytest.mark.h9_cassette("chat", faults=["status=418"])
def test_bad_rule():
    pass
'''


def test_the_marker_and_add_fault_give_the_server_its_faults_and_a_bad_rule_fails_the_test(tmp_path: Path) -> None:
    """SPEC R-REC-8: the plugin's ``faults``, ``h9_cassette.add_fault`` and the header."""
    (tmp_path / "tests").mkdir()
    body = json.dumps(BY_NAME["openai/text"].request_body)
    (tmp_path / "tests" / "test_app.py").write_text(FAULT_APP.format(body=body), encoding="utf-8")
    cassette = tmp_path / "tests" / "cassettes" / "test_app" / "chat"
    shutil.copytree(BY_NAME["openai/text"].directory, cassette / "0001-post-v1-chat-completions")
    done = run(tmp_path)
    assert done.returncode == 1, done.stdout
    assert "2 passed, 1 error" in done.stdout, done.stdout
    assert "ERROR at setup of test_bad_rule" in done.stdout
    assert "\nh9_cassette: --fault: status=418 should be one of 429, 500, 502, 503, 529\n" in done.stdout
    assert "another exception occurred" not in done.stdout
