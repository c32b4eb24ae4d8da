"""Allow rules in the real program inside tmux (SPEC R-APPR-7 … R-APPR-9).

Same harness as test_screen_tmux.py: the offline provider's ``run …`` prompts make real
commands, the rule question follows ``a``, and the rule is kept in ``allow.json`` of the home
folder (``HARNESS9_HOME``), where a second program started later reads it.
"""

from __future__ import annotations

import json
import os

from harness9_ref.text import STRINGS

from .test_screen_tmux import Screen, pytestmark, started  # noqa: F401  (pytestmark: skipped without tmux)
from .test_screen_tmux_daily import answer_question, rows

ZH = STRINGS["zh"]


def restart(screen: Screen, *options: str) -> None:
    """Leave the program and start it again on the same home folder."""
    screen.type("/exit")
    screen.keys("Enter")
    assert screen.wait_exit() == "0"
    screen.tmux("kill-session", "-t", "main")
    started(screen, *options)


def test_a_rule_chosen_after_a_covers_later_commands_of_its_directory_only(screen: Screen) -> None:
    started(screen)
    answer_question(screen, "echo rule-one", "a")
    directory = os.path.realpath(screen.workdir)
    screen.wait_text(ZH["allow_prompt"].split("{")[0])
    assert ZH["allow_choice"].format(k=3, rule="echo *") in " ".join(screen.text().split())
    screen.answer("3")  # R-APPR-8: the third offer, the command's first word and the wildcard
    screen.wait_text("\u2190 bash: rule-one")
    screen.wait_idle()
    kept = json.loads((screen.db.parent / "allow.json").read_text(encoding="utf-8"))
    assert kept["directories"] == {directory: [["echo", "*"]]}  # R-APPR-9
    screen.say("run echo rule-two")
    assert "\u2190 bash: rule-two" in rows(screen)
    assert "1 | echo rule-two" not in rows(screen)  # R-APPR-7
    restart(screen)  # the rule outlives the program
    screen.say("run echo rule-three")
    assert "\u2190 bash: rule-three" in rows(screen)
    assert "1 | echo rule-three" not in rows(screen)
    other = screen.tmp_path / "other"
    other.mkdir()
    restart(screen, "--workdir", str(other))  # R-APPR-7: never another directory's
    answer_question(screen, "echo elsewhere", "n")
    screen.wait_idle()
    assert "\u2190 bash: elsewhere" not in rows(screen)
