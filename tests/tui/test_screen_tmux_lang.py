"""The terminal UI speaks the locale's language under tmux (SPEC R-LANG-1, R-LANG-2, R-LANG-3).

The program is started without ``--lang`` and without HARNESS9_LANG, so only LC_ALL,
LC_MESSAGES and LANG choose. ``zh_CN.UTF-8`` need not be installed on the machine: the
language follows the variable's name, and the screen still draws UTF-8 (R-LANG-1).
"""

from __future__ import annotations

import re

import pytest

from .test_screen_tmux import Screen

# What each language shows: the start hint (R-TUI-23), R-LANG-3's error of /compact on a session
# with nothing to summarise, and the start of the compaction notice (R-TUI-5, R-TUI-21).
TEXTS = {
    "zh": ("输入 /help 查看命令和按键", "错误：还没有足够早的内容可以总结", "\u26a1 上下文已压缩"),
    "en": ("Type /help for the commands and keys", "error: nothing is old enough to summarise yet", "\u26a1 context compacted"),
}


@pytest.mark.parametrize(
    ("locale", "lang"),
    [
        (("LANG=zh_CN.UTF-8",), "zh"),
        (("LANG=en_US.UTF-8",), "en"),
        (("LC_ALL=C.UTF-8", "LANG=zh_CN.UTF-8"), "en"),  # LC_ALL overrides LANG
        (("LC_ALL=zh_TW.UTF-8", "LANG=en_US.UTF-8"), "zh"),
    ],
)
def test_the_ui_speaks_the_locales_language(screen: Screen, locale: tuple[str, ...], lang: str) -> None:
    hint, error, notice = TEXTS[lang]
    other = TEXTS["en" if lang == "zh" else "zh"]
    screen.start(lang=None, locale=locale)
    screen.wait_idle()
    assert hint in screen.text()
    screen.say("/compact")
    screen.wait_text(error)
    screen.say_until(notice)
    text = screen.text()
    assert not any(line in text for line in other)  # one language, no mixing
    if lang == "en":
        assert re.search(r"[\u4e00-\u9fff]", text) is None, text  # not one Chinese character
    screen.type("/exit")
    screen.keys("Enter")
    assert screen.wait_exit() == "0"


def test_the_option_overrides_the_locale(screen: Screen) -> None:
    screen.start("--lang", "en", lang=None, locale=("LC_ALL=zh_CN.UTF-8",))
    screen.wait_idle()
    assert TEXTS["en"][0] in screen.text()
    screen.type("/exit")
    screen.keys("Enter")
    assert screen.wait_exit() == "0"
