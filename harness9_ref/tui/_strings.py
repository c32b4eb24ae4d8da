"""Every user-visible string of the terminal UI, in Chinese and English (SPEC R-TUI-17).

One pinned text, ``STRINGS_TABLE``, holds both tables, so SPEC.md and the code cannot drift
apart and a port can copy the block verbatim. ``STRINGS[lang][key]`` is that text parsed:
``[lang]`` starts a table, each other line is ``key = text``. A text never starts or ends with
white space (an editor would strip it from SPEC.md); indentation and separators are layout and
stay in the code. Templates use ``str.format`` fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

__all__ = ["DEFAULT_LANG", "LANGS", "STRINGS", "STRINGS_TABLE", "parse_strings", "strings_for"]  # gets re-exported

DEFAULT_LANG: Final = "zh"  # R-TUI-17: the document's strings are the default

STRINGS_TABLE: Final = """\
[zh]
status_name = [harness9]
status_workdir = workdir: {workdir}
status_session = session: {session}...
status_ctx = ctx: {used}/{window} ({pct}%)
status_ctx_unknown = ctx: {used}
compaction_notice = \u26a1 上下文已压缩 \u2014 {tokens_before} \u2192 {tokens_after} tokens\uff08{msgs_before} \u2192 {msgs_after} 条消息\uff09
compacting = 正在压缩上下文\u2026
unknown_command = 未知命令：{input}
interrupted = 已中断
error_line = 错误：{message}
cancelled = 已取消
busy_prompt = 正在运行一轮对话；请等待它结束或按 Ctrl+C 中断
busy_command = 运行中不能使用 {command}；请先按 Ctrl+C 中断
tool_more_lines = (+{n} more lines)
tool_one_more_line = (+1 more line)
tool_empty = (empty)
resume_header = 可用会话（{n} 条）：
resume_header_page = 可用会话（第 {page} 页，{n} 条）：
resume_prompt = 输入序号选择（非数字 Enter 取消）：
resume_prompt_next = 输入序号选择，n 下一页（其他 Enter 取消）：
resume_prompt_previous = 输入序号选择，p 上一页（其他 Enter 取消）：
resume_prompt_pages = 输入序号选择，n 下一页，p 上一页（其他 Enter 取消）：
no_sessions = 没有可恢复的会话
search_header = 匹配的会话（{n} 条）：
search_header_page = 匹配的会话（第 {page} 页，{n} 条）：
search_empty = 没有匹配的会话
search_usage = 用法：/search 关键词
message_word = 条消息
messages_word = 条消息
age_now = 刚刚
age_minutes = {n} 分钟前
age_hours = {n} 小时前
age_days = {n} 天前
approve_prompt = 运行命令？{command}  [y] 是 / [n] 否 / [a] 本会话总是
approve_yes = 已允许
approve_always = 已允许，本会话不再询问
approve_no = 已拒绝
help_commands = 命令：
help_new = /new  新建会话
help_resume = /resume  列出最近的会话并恢复其中一个
help_search = /search 关键词  搜索会话
help_compact = /compact [重点]  立即压缩上下文
help_help = /help  显示本帮助
help_exit = /exit  退出
help_keys = 按键：Tab 补全命令，↑↓ 历史输入，PageUp/PageDown 滚动，Ctrl+C 中断或退出
[en]
status_name = [harness9]
status_workdir = workdir: {workdir}
status_session = session: {session}...
status_ctx = ctx: {used}/{window} ({pct}%)
status_ctx_unknown = ctx: {used}
compaction_notice = \u26a1 context compacted \u2014 {tokens_before} \u2192 {tokens_after} tokens ({msgs_before} \u2192 {msgs_after} messages)
compacting = compacting the context\u2026
unknown_command = unknown command: {input}
interrupted = interrupted
error_line = error: {message}
cancelled = cancelled
busy_prompt = a turn is running; wait for it or press Ctrl+C
busy_command = {command} is not available while a turn is running; press Ctrl+C first
tool_more_lines = (+{n} more lines)
tool_one_more_line = (+1 more line)
tool_empty = (empty)
resume_header = Sessions ({n}):
resume_header_page = Sessions (page {page}, {n}):
resume_prompt = Type a number to open one (anything else and Enter cancels):
resume_prompt_next = Type a number to open one, n for the next page (anything else and Enter cancels):
resume_prompt_previous = Type a number to open one, p for the previous page (anything else and Enter cancels):
resume_prompt_pages = Type a number to open one, n for the next page, p for the previous one (anything else and Enter cancels):
no_sessions = no session to resume
search_header = Matching sessions ({n}):
search_header_page = Matching sessions (page {page}, {n}):
search_empty = no session matches
search_usage = usage: /search WORDS
message_word = message
messages_word = messages
age_now = just now
age_minutes = {n} min ago
age_hours = {n} h ago
age_days = {n} d ago
approve_prompt = Run command? {command}  [y]es / [n]o / [a]lways in this session
approve_yes = allowed
approve_always = allowed; no more questions in this session
approve_no = declined
help_commands = Commands:
help_new = /new  start a new session
help_resume = /resume  list recent sessions and resume one
help_search = /search WORDS  search the sessions
help_compact = /compact [FOCUS]  compact the context now
help_help = /help  show this help
help_exit = /exit  quit
help_keys = Keys: Tab completes a command, Up/Down recall inputs, PageUp/PageDown scroll, Ctrl+C interrupts a turn or quits"""


def parse_strings(table: str) -> dict[str, dict[str, str]]:
    """``{lang: {key: text}}`` from a table in the form of ``STRINGS_TABLE`` (R-TUI-17).

    Raises:
        ValueError: a line is neither ``[lang]`` nor ``key = text``, a key comes twice in one
            language, a line precedes the first ``[lang]``, or the languages' keys differ (a
            string missing in one language would show a KeyError on the user's screen).
    """
    tables: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for number, line in enumerate(table.split("\n"), start=1):
        if line.startswith("[") and line.endswith("]"):
            current = tables.setdefault(line[1:-1], {})
            continue
        key, sep, text = line.partition(" = ")
        if current is None or not sep or not key.isidentifier():
            raise ValueError(f"line {number} of the strings table is not 'key = text': {line!r}")
        if key in current:
            raise ValueError(f"line {number}: {key!r} comes twice")
        current[key] = text
    keys = {lang: set(texts) for lang, texts in tables.items()}
    first = next(iter(keys.values()), set())
    for lang, have in keys.items():
        if have != first:
            raise ValueError(f"the keys of [{lang}] differ from the first table's: {sorted(have ^ first)}")
    return tables


STRINGS: Final[Mapping[str, Mapping[str, str]]] = MappingProxyType(
    {lang: MappingProxyType(texts) for lang, texts in parse_strings(STRINGS_TABLE).items()}
)
LANGS: Final = tuple(STRINGS)  # ("zh", "en"): the choices of --lang (R-CLI-14)


def strings_for(lang: str) -> Mapping[str, str]:
    """The table of ``lang``.

    Raises:
        ValueError: ``lang`` is not one of LANGS.
    """
    try:
        return STRINGS[lang]
    except KeyError:
        raise ValueError(f"unknown language {lang!r}: expected one of {', '.join(LANGS)}") from None
