"""The ``cli`` op's folder and the runner's view of its answer: a port's own program, run.

Why the runner does this and not the adapter: the command line (SPEC R-CLI) is a program whose
output holds paths, fresh session ids and the time, all of which change from run to run. The
runner lays out one fresh folder per case (``work/``, the program's working directory, and
``home/``, its private home folder holding the default database of R-MGR-1), hands the adapter
the whole environment each command runs with (so no key, locale or home of the machine leaks
in), and afterwards puts placeholders where the answer names what varies: ``{workdir}``,
``{home}``, ``{root}``, a replay server's ``{openai_base_url}``, ``{anthropic_base_url}`` and
``{server}``, ``{id1}``, ``{id2}``, … for session ids the case never wrote, and ``{now}`` for a
minute of the run's own span. It then keeps of each command's answer only the members the case
expects, some of them views of the text (``stdout_json``: its lines as JSON values;
``stdout_json_has``: the values some line holds, objects matched on the members given;
``stdout_has``, ``stderr_has``: texts it contains; ``stdout_lacks``, ``stderr_lacks``: texts it
does not contain), so a case pins exactly what SPEC pins.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from ._compare import first_difference
from ._workspace import _inside, _link, _listing, _query

__all__ = ["CLI_OP", "CliFolder", "cli_prepared"]

CLI_OP: Final = "cli"
WORKDIR: Final = "work"
HOME: Final = "home"
DATABASE: Final = "home/.harness9/sessions.db"  # R-MGR-1's default under the private home
TOOL_RESULTS: Final = "home/.harness9/tool-results"
COMMAND_TIMEOUT: Final = 15.0  # seconds one command may run before the adapter kills it
# What every command's environment holds unless the case says otherwise (a value null removes
# one): the private home, a locale that chooses English (R-LANG-1) and UTC for listed times.
BASE_ENV: Final = {"LANG": "C.UTF-8", "TZ": "UTC"}
_UUID: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
_MINUTE: Final = re.compile(r"\b\d{4}-\d\d-\d\d \d\d:\d\d\b")
_VIEWS: Final = ("exit", "stdout", "stderr", "stdout_json", "stdout_json_has", "stdout_has", "stderr_has",
                  "stdout_lacks", "stderr_lacks")


def _filled(value: Any, places: Mapping[str, str]) -> Any:
    """``value`` with each ``{name}`` of ``places`` in its strings replaced by the path or URL."""
    if isinstance(value, str):
        for name, text in places.items():
            value = value.replace("{" + name + "}", text)
        return value
    if isinstance(value, list):
        return [_filled(item, places) for item in value]
    if isinstance(value, dict):
        return {key: _filled(item, places) for key, item in value.items()}
    return value


def _command(command: Mapping[str, Any], home: Path, places: Mapping[str, str]) -> dict[str, Any]:
    env: dict[str, Any] = {"HOME": str(home), **BASE_ENV, **command.get("env", {})}
    sent = {"argv": _filled(command["argv"], places), "env": {
        name: _filled(value, places) for name, value in env.items() if value is not None
    }}
    if "stdin" in command:
        sent["stdin"] = command["stdin"]
    return sent


@dataclass(frozen=True, slots=True)
class CliFolder:
    """One ``cli`` case's fresh folder: what to send, and how to read what the run left."""

    root: Path
    send: dict[str, Any]
    places: dict[str, str]  # placeholder name -> the path or URL it stands for

    def observe(self, expect: Mapping[str, Any]) -> dict[str, Any]:
        """What the case expects to find afterwards: ``files`` as the session op's cases list
        them, ``database`` rows of the default database (R-MGR-1) by the case's SQL."""
        seen: dict[str, Any] = {}
        if "files" in expect:
            seen["files"] = _listing(self.root)
        if "database" in expect:
            seen["database"] = {sql: _query(self.root / DATABASE, sql) for sql in expect["database"]}
        return seen

    def answer(self, output: Any, spec: Mapping[str, Any], expected: Any, span: tuple[float, float]) -> Any:
        """The adapter's answer as the case compares it: normalised, then viewed command by
        command. An answer that is not one object per command is returned as it is, so it
        fails with the whole of it shown."""
        if not (isinstance(output, list) and isinstance(expected, list) and len(output) == len(expected)
                and all(isinstance(item, dict) for item in (*output, *expected))):
            return output
        chosen = json.dumps(spec)  # ids the case wrote stay as they are
        first, last = int(span[0]) // 60 * 60, int(span[1]) // 60 * 60
        minutes = frozenset(time.strftime("%Y-%m-%d %H:%M", time.gmtime(t)) for t in range(first, last + 1, 60))
        ids: dict[str, str] = {}
        views = []
        for result, want in zip(output, expected, strict=True):
            normal = {key: _normalised(value, self.places, chosen, ids, minutes) if isinstance(value, str)
                      else value for key, value in result.items()}
            views.append(_view(normal, want))
        return views


@contextmanager
def cli_prepared(spec: Mapping[str, Any], base_urls: Mapping[str, str] | None = None) -> Iterator[CliFolder]:
    """Lay out a ``cli`` case's folder for the length of the case.

    ``base_urls`` maps a provider to the URL of the replay server serving the case's
    ``fixtures``; ``{openai_base_url}`` in an argument or variable names it.
    """
    with tempfile.TemporaryDirectory(prefix="harness9-cli-") as tmp:
        root = Path(tmp).resolve()
        work, home = root / WORKDIR, root / HOME
        work.mkdir()
        home.mkdir(mode=0o700)
        places = {"workdir": str(work), "home": str(home), "root": str(root)}
        for provider, url in (base_urls or {}).items():
            places[f"{provider}_base_url"] = url
            places["server"] = urlsplit(url).netloc  # R-TUI-26's server, as lines name it
        for relative, text in spec.get("files", {}).items():  # an allow file names the folder
            path = _inside(root, relative)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(_filled(text, places), encoding="utf-8")
        _link(root, spec.get("symlinks", {}))
        send: dict[str, Any] = {"workdir": str(work), "home": str(home), "timeout": COMMAND_TIMEOUT}
        if "sessions" in spec:
            send.update(database=str(root / DATABASE), tool_results_dir=str(root / TOOL_RESULTS),
                        sessions=_filled(spec["sessions"], places))  # a session's workdir may name the folder
        send["commands"] = [_command(command, home, places) for command in spec["commands"]]
        yield CliFolder(root, send, places)


def _normalised(text: str, places: Mapping[str, str], chosen: str, ids: dict[str, str],
                minutes: frozenset[str]) -> str:
    for name, value in sorted(places.items(), key=lambda item: -len(item[1])):  # longest first
        text = text.replace(value, "{" + name + "}")

    def fresh(match: re.Match[str]) -> str:
        found = match.group(0)
        if found in chosen:
            return found
        return ids.setdefault(found, f"{{id{len(ids) + 1}}}")

    text = _UUID.sub(fresh, text)
    return _MINUTE.sub(lambda m: "{now}" if m.group(0) in minutes else m.group(0), text)


def _json_lines(text: str) -> list[Any]:
    """Standard output as JSON texts, one a line (R-CLI-16); a line that is none is shown as it is."""
    values: list[Any] = []
    for line in text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"):
        try:
            values.append(json.loads(line))
        except ValueError:
            values.append(f"not a JSON text: {line}")
    return values


def _holds(value: Any, part: Any) -> bool:
    """``value`` holds ``part``: an object every member of ``part``'s (recursively), else equal."""
    if isinstance(part, dict):
        return isinstance(value, dict) and all(k in value and _holds(value[k], v) for k, v in part.items())
    return first_difference(part, value) is None


def _view(result: Mapping[str, Any], want: Mapping[str, Any]) -> dict[str, Any]:
    """The members of one command's answer that ``want`` (the case's expectation) names."""
    view: dict[str, Any] = {}
    for key in want:
        if key in ("exit", "stdout", "stderr"):
            view[key] = result.get(key)
        elif key == "stdout_json":
            view[key] = _json_lines(str(result.get("stdout")))
        elif key == "stdout_json_has" and isinstance(want[key], list):
            lines = _json_lines(str(result.get("stdout")))
            view[key] = [part if any(_holds(line, part) for line in lines) else f"no line of stdout holds it: {part}"
                         for part in want[key]]
        elif key in ("stdout_has", "stderr_has") and isinstance(want[key], list):
            stream = key.removesuffix("_has")
            text = str(result.get(stream))
            view[key] = [part if part in text else f"absent from {stream}: {text}" for part in want[key]]
        elif key in ("stdout_lacks", "stderr_lacks") and isinstance(want[key], list):
            stream = key.removesuffix("_lacks")
            text = str(result.get(stream))
            view[key] = [part if part not in text else f"present in {stream}: {text}" for part in want[key]]
        else:
            view[key] = f"not a view of a command's answer; one of {', '.join(_VIEWS)}"
    return view
