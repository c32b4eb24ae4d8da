"""Every user-visible string of the terminal UI, in Chinese and English, and its layout
constants (SPEC R-TUI-1 … R-TUI-19).

One pinned text, ``STRINGS_TABLE``, holds both tables, so SPEC.md and the code cannot drift
apart and a port can copy the block verbatim. ``STRINGS[lang][key]`` is that text parsed:
``[lang]`` starts a table, each other line is ``key = text``. A text never starts or ends with
white space (an editor would strip it from SPEC.md); indentation and separators are layout and
stay in the code, below the tables, with the Chinese texts under the names SPEC section 11
uses. Templates use ``str.format`` fields. How lines are made from events and messages is
rendering, in ``_lines.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from ..memory.storage import WINDOW_SOURCES

__all__ = [
    "BUSY_COMMAND",
    "BUSY_PROMPT",
    "CANCELLED_NOTICE",
    "COLOUR_HIGH",
    "COLOUR_OK",
    "COLOUR_WARN",
    "COMMANDS",
    "COMPACTING_NOTICE",
    "COMPACTION_NOTICE",
    "COMPACTION_TIERS",
    "COMPACT_COMMAND",
    "CONTEXT_COMMAND",
    "CONTEXT_COUNTED",
    "CONTEXT_INDENT",
    "CONTEXT_PARTS",
    "CONTEXT_SOURCES",
    "CONTEXT_WINDOW_SOURCES",
    "CURSES_MISSING",
    "DEFAULT_LANG",
    "ELLIPSIS",
    "ERROR_PREFIX",
    "FORK_COMMAND",
    "HELP_COMMAND",
    "HIGH_PERCENT",
    "INPUT_PROMPT",
    "INPUT_PROMPT_APPROVE",
    "INPUT_PROMPT_BUSY",
    "INTERRUPTED_NOTICE",
    "LANGS",
    "LIST_FOLDER",
    "LIST_ITEM",
    "LIST_TITLE",
    "NO_SESSIONS",
    "PAGE_SIZE",
    "RESUME_HEADER",
    "RESUME_ITEM",
    "RESUME_PROMPT",
    "RESUME_TIME_FORMAT",
    "REWIND_COMMAND",
    "REWIND_ITEM",
    "SEARCH_COMMAND",
    "SHOW_COMMAND",
    "STATUS_BAR",
    "STATUS_CTX",
    "STATUS_CTX_GAP",
    "STATUS_CTX_UNKNOWN_WINDOW",
    "STATUS_MODEL",
    "STATUS_SEPARATOR",
    "STATUS_WORKDIR_GAP",
    "STRINGS",
    "STRINGS_TABLE",
    "UNKNOWN_COMMAND",
    "WARN_PERCENT",
    "parse_strings",
    "strings_for",
]

DEFAULT_LANG: Final = "zh"  # R-TUI-17: the document's strings are the default

STRINGS_TABLE: Final = """\
[zh]
status_name = [harness9]
status_workdir = workdir: {workdir}
status_session = session: {session}...
status_ctx = ctx: {used}/{window} ({pct}%)
status_ctx_unknown = ctx: {used}
compaction_notice = \u26a1 上下文已压缩 \u2014 {tokens_before} \u2192 {tokens_after} tokens\uff08{msgs_before} \u2192 {msgs_after} 条消息\uff09
compaction_cleared = \u26a1 上下文已压缩：清除了 {cleared} 条旧工具结果 \u2014 {tokens_before} \u2192 {tokens_after} tokens
compaction_summary = \u26a1 上下文已压缩：总结了较早的对话 \u2014 {tokens_before} \u2192 {tokens_after} tokens\uff08{msgs_before} \u2192 {msgs_after} 条消息\uff09
retry_notice = \u21bb {delay} 秒后重试：{message}\uff08第 {attempt} 次，共 {max_attempts} 次\uff09
not_saved_notice = \u26a0 本轮有 {unsaved} 条消息未能保存（共 {total} 条）：{message}
model_not_found = {provider} 没有模型 {model}：请用 --model 或 LLM_MODEL 选择一个模型（{message}）
compaction_fallback = \u26a1 上下文已压缩：总结失败，丢弃了较早的消息 \u2014 {tokens_before} \u2192 {tokens_after} tokens\uff08{msgs_before} \u2192 {msgs_after} 条消息\uff09
compaction_paused = \u26a1 上下文已压缩：总结连续失败，暂停总结并丢弃了较早的消息 \u2014 {tokens_before} \u2192 {tokens_after} tokens\uff08{msgs_before} \u2192 {msgs_after} 条消息\uff09
compaction_shortened = \u26a1 上下文已压缩：截短了过长的消息 \u2014 {tokens_before} \u2192 {tokens_after} tokens
compaction_degraded = \u26a1 上下文已压缩：为放进上下文窗口进一步裁剪了请求 \u2014 {tokens_before} \u2192 {tokens_after} tokens\uff08{msgs_before} \u2192 {msgs_after} 条消息\uff09
window_notice_error = \u26a0 模型服务报告上下文窗口为 {window} tokens（不是 {previous}）；之后的请求都按这个窗口压缩
window_notice_truncation = \u26a0 模型服务只计入了 {window} tokens，丢弃了请求的开头；上下文窗口按 {window} tokens 处理（不是 {previous}）
compaction_also_cleared = ，另清除了 {cleared} 条旧工具结果
compacting = 正在压缩上下文\u2026
context_header = 下一次请求：{total} / {window} tokens（{pct}%，{source}）
context_header_unknown = 下一次请求：{total} tokens（{source}，窗口未知）
context_part = {label}：{tokens} tokens（{pct}%）
context_part_count = {label}（{count}）：{tokens} tokens（{pct}%）
context_part_unknown = {label}：{tokens} tokens
context_part_count_unknown = {label}（{count}）：{tokens} tokens
context_trigger = 压缩触发点：{budget} tokens（{pct}%）
context_trigger_off = 自动压缩已关闭：只在模型因请求过长而拒绝时压缩
context_system = 系统提示
context_tools = 工具定义
context_summary = 摘要
context_messages = 消息
context_tool_results = 工具结果
context_cleared = 已清除的工具结果
context_exact = 精确计数
context_anchored = 按上次实际用量推算
context_estimate = 估算
context_window_line = 窗口来源：{source}
context_window_option = --context-window 选项
context_window_registry = 模型注册表
context_window_default = 假定值（模型未知）
context_window_server = 模型服务报告
context_window_error = 从模型服务的超长错误得知
context_window_truncation = 从模型服务截断请求得知
show_window = 窗口：{window} tokens（{source}，模型 {model}）
instructions_context_file = AGENTS.md：{path}，{tokens} tokens
instructions_context_file_cut = AGENTS.md：{path}，{tokens} tokens（已截断）
instructions_context_none = AGENTS.md：无
instructions_not_a_file = 已跳过 AGENTS.md：{path} 不是普通文件
instructions_unreadable = 已跳过 AGENTS.md：无法读取 {path}（{reason}）
instructions_too_large = AGENTS.md 过大：{path} 有 {size} 字节，超过 {limit} 字节；只使用开头部分
instructions_not_utf8 = 已跳过 AGENTS.md：{path} 不是有效的 UTF-8 文本
unknown_command = 未知命令：{input}
interrupted = 已中断
error_line = 错误：{message}
cli_error = harness9-ref: 错误：{message}
cli_warning = harness9-ref: 警告：{message}
cli_internal = 内部错误：{message}
cli_unexpected = 意外失败
cli_offline = harness9-ref: 未设置 API 密钥（{key}），使用离线提供方
cli_continue_none = harness9-ref: -c：没有可继续的会话，开始新会话
cli_keyless = harness9-ref: 未设置 API 密钥（{key}），向 {server} 发送不带密钥的请求
waiting = 正在等待模型\u2026 {seconds} 秒
cli_not_run = harness9-ref: 未运行（需要 --yes）：{command}
cli_not_run_lines = harness9-ref: 未运行（需要 --yes），共 {n} 行的命令：
cli_not_created = ；未创建会话
cli_no_match = harness9-ref: 没有匹配的会话：{query}
cli_no_index = harness9-ref: 没有可用的全文索引（此 SQLite 没有 FTS5 trigram 分词器，或索引不属于本程序）；改为逐条扫描
cli_no_index_pg = harness9-ref: 没有可用的三元组索引（数据库没有 pg_trgm 扩展且无权安装，或本机的 Unicode 版本与数据库记录的不同）；由服务器逐条扫描
cli_pruned = 已清理 {sessions}、{messages}，释放 {size}
cli_would_prune = 将清理 {sessions}、{messages}
cli_copied = 已复制 {sessions}、{messages}
cli_no_curses = 终端界面需要 curses 模块，而此 Python 没有；'harness9-ref run PROMPT' 不需要它
cli_no_terminal = 终端界面需要终端；没有终端时请用 'harness9-ref run PROMPT'
err_screen = 无法启动终端界面：{reason}
err_not_saved = 本轮有 {unsaved} 条消息未能保存（共 {total} 条）：{message}
err_provider_needs_key = --provider {provider} 需要设置 {key}
err_base_url = {provider}：无效的基础 URL {url}：应为 http:// 或 https:// 加主机名
err_db_scheme = {source}：不支持 {scheme}:// URL；请给出 SQLite 文件的路径或 postgresql:// URL
err_db_folder = {source} {path}：文件夹 {folder} 不存在
err_not_ours = {path}：不是 harness9 数据库（其中有它自己的表）
err_db_special = {path}：不是普通文件（设备、FIFO、套接字或文件夹都不能作数据库）；请给出 SQLite 文件的路径或 postgresql:// URL
err_db_unwritable = {path}：数据库无法写入：{reason}
err_session_in_use = 会话 {session} 正被本机另一个 harness9-ref 使用；不带 -c 或 --resume 即开始新会话，或等它结束
err_session_lock = {path}：会话锁文件无法打开：{reason}
err_workdir = --workdir {path}：不是文件夹
err_lang_env = HARNESS9_LANG：应为 zh 或 en，实际为 {value}
err_ttl_env = HARNESS9_SESSION_TTL_DAYS：应为正整数天数，实际为 {value}
err_compact_at = {source}：应为 (0, 1] 中的数或 off，实际为 {value}
err_timeout = {source}：应为 (0, 86400] 中的秒数，实际为 {value}
err_count_tokens = --count-tokens 需要 anthropic 提供方，而不是 {provider}
err_raw_tui = --raw 需要行模式（run、sessions、show、search 或 prune）；终端界面总是把控制字符显示为可见的符号
err_json_run = --json 需要 run：只有一次运行才有可写成 JSON 行的事件
err_prompt_empty = PROMPT 为空
err_copy_missing = copy {name} {path}：没有这个文件
err_copy_same = copy：SRC 和 DST 是同一个数据库
err_copy_taken = {name} 已有其中 {n} 个会话（{ids}）；什么也没有复制（--overwrite 会替换它们）
err_no_session = 没有 id 为 {id} 的会话
err_no_prefix = 没有以 {prefix} 开头的会话 id
err_ambiguous = {prefix} 匹配 {count} 个会话：{ids}
err_not_ref = {text} 不是会话 id 或其前缀
err_not_prefix = {text} 不是会话 id，也不是其前缀（4 到 35 个 0-9、a-f 和 - 字符）
err_query_empty = 搜索关键词为空
err_nothing_to_compact = 还没有足够早的内容可以总结
err_max_turns = 已达到轮数上限（{max_turns} 轮）
err_model_name = {source}：应为模型名，实际为 {value}
err_all_needs_list = allow --all 需要 --list
err_no_such_rule = allow --remove：{workdir} 没有规则 {rule}
err_allow_unusable = {path}：不是可用的允许规则文件（{reason}）；它保持原样，其中的规则不被使用
err_fork_unwritable = fork 要写入一个新会话，而数据库无法写入：{message}
err_fork_beyond = 会话 {id}：分叉最多保留它的消息数 {count} 条，而不是 {at}
err_fork_result = 会话 {id} 的第 {k} 条消息是工具结果；只保留前 {at} 条的分叉会停在调用和它的结果之间
cancelled = 已取消
busy_prompt = 正在运行一轮对话；请等待它结束或按 Ctrl+C 中断
busy_command = 运行中不能使用 {command}；请先按 Ctrl+C 中断
edit_failed = 编辑器没有正常结束；输入保持不变
edit_failed_reason = 无法启动编辑器：{reason}
tool_lines = （{n} 行，{size}）
tool_empty = （空）
resume_header = 可用会话（{n} 条）：
resume_header_page = 可用会话（第 {page} 页，本页 {n} 条）：
resume_prompt = 输入序号选择（非数字 Enter 取消）：
resume_prompt_next = 输入序号选择，n 下一页（其他 Enter 取消）：
resume_prompt_previous = 输入序号选择，p 上一页（其他 Enter 取消）：
resume_prompt_pages = 输入序号选择，n 下一页，p 上一页（其他 Enter 取消）：
no_sessions = 没有可恢复的会话
search_header = 匹配的会话（{n} 条）：
search_header_page = 匹配的会话（第 {page} 页，本页 {n} 条）：
search_empty = 没有匹配的会话
search_usage = 用法：/search 关键词
message_word = 条消息
messages_word = 条消息
age_now = 刚刚
age_minutes = {n} 分钟前
age_hours = {n} 小时前
age_days = {n} 天前
approve_prompt = 运行上面的命令？[y] 是 / [n] 否 / [a] 总是…
approve_header = 要运行的命令，共 {n} 行（每行前是行号和 |）：
approve_read_first = 命令比窗格高：先按 PageUp 看到它的第 1 行，y 和 a 才有效
approve_yes = 已允许
approve_always = 已允许，本会话不再询问
approve_no = 已拒绝
approve_change_prompt = 修改文件？{subject}  [y] 是 / [n] 否 / [a] 本会话总是
diff_more = …（还有 {n} 行差异）
allow_prompt = 在 {workdir} 中总是允许：{choices}  [s] 本会话的所有命令  [Enter] 返回
allow_prompt_none = 没有规则能涵盖此命令（含 shell 运算符、展开、注释、未闭合的引号或赋值）：[s] 本会话的所有命令  [Enter] 返回
allow_choice = [{k}] {rule}
allow_added = 已允许；今后在 {workdir} 中符合 {rule} 的命令不再询问
allow_none = {workdir} 没有允许规则
allow_none_all = 没有允许规则
allow_removed = 已删除 {workdir} 的规则 {rule}
help_commands = 命令：
help_new = /new  新建会话
help_resume = /resume  列出最近的会话并恢复其中一个
help_search = /search 关键词  搜索会话
help_compact = /compact [重点]  立即压缩上下文
help_context = /context  显示下一次请求包含的内容
help_help = /help  显示本帮助
help_exit = /exit  退出
help_keys = 按键：Tab 补全命令，↑↓ 历史输入，PageUp/PageDown 滚动，Ctrl+C 清空输入、中断或退出
help_keys_edit = Enter 发送；Alt+Enter（或 \\ 后按 Enter）换行；Ctrl+W 删除一个词；Ctrl+X Ctrl+E 在 $EDITOR 中编辑
start_hint = 输入 /help 查看命令和按键
new_session = 已新建会话 {session}
help_fork = /fork  在本会话的副本中继续
help_rewind = /rewind  回到你的某条输入之前（在副本中）
fork_done = 已复制为新会话 {session}（{messages}）
fork_nothing = 无法复制：本会话还没有保存任何消息
rewind_header = 你的输入（{n} 条）：
rewind_header_page = 你的输入（第 {page} 页，本页 {n} 条）：
rewind_prompt = 输入序号回到该条输入之前（其他 Enter 取消）：
rewind_prompt_previous = 输入序号回到该条输入之前，p 更早的输入（其他 Enter 取消）：
rewind_prompt_next = 输入序号回到该条输入之前，n 更晚的输入（其他 Enter 取消）：
rewind_prompt_pages = 输入序号回到该条输入之前，p 更早的输入，n 更晚的输入（其他 Enter 取消）：
rewind_empty = 没有可以回到之前的输入
rewind_done = 已回到第 {k} 条输入之前，新会话 {session}；该输入已放回输入行，可修改后发送
err_pool_timeout = {db}：{seconds} 秒内连接池没有空出连接
help_show = /show [序号]  完整显示最后一个（或第几个）工具结果；Ctrl+O 显示最后一个
show_none = 还没有可显示的工具结果
show_usage = 用法：/show [序号]，序号为 1 到 {n}
undo_header = 被回退的轮次改动过的文件：{n} 个
undo_question = 把这些文件恢复原样？输入 y 回车恢复（其他 Enter 保持现状）：
undo_restored = 已恢复 {path}
undo_removed = 已删除 {path}（之前不存在）
undo_changed = 未恢复：{path} 之后又被别的程序改动过，保持现状
undo_not_kept = 未恢复：{path} 改动时大于 {limit}，原内容没有保存
undo_failed = 未恢复：{path}：{reason}
undo_kept = 文件保持现状
undo_hint = 被丢弃的消息改动过的文件（{n} 个）：{paths}；加 --restore-files 查看差异并恢复
cli_continue_none_here = harness9-ref: -c：{folder} 中没有可继续的会话，开始新会话（--any-folder 继续任一目录最近的会话）
cli_other_folder = harness9-ref: 该会话始于 {folder}；工具在当前目录 {here} 中运行
cli_sessions_elsewhere = harness9-ref: {folder} 中没有会话；--any-folder 列出所有目录的会话
folder_unknown = （目录未知）
provider_unknown = （模型未知）
show_origin = 会话始于 {folder}，模型 {provider}
sessions_count_one = {n} 个会话
sessions_count = {n} 个会话
messages_count_one = {n} 条消息
messages_count = {n} 条消息
[en]
status_name = [harness9]
status_workdir = workdir: {workdir}
status_session = session: {session}...
status_ctx = ctx: {used}/{window} ({pct}%)
status_ctx_unknown = ctx: {used}
compaction_notice = \u26a1 context compacted \u2014 {tokens_before} \u2192 {tokens_after} tokens ({msgs_before} \u2192 {msgs_after} messages)
compaction_cleared = \u26a1 context compacted: old tool results cleared ({cleared}) \u2014 {tokens_before} \u2192 {tokens_after} tokens
compaction_summary = \u26a1 context compacted: earlier conversation summarized \u2014 {tokens_before} \u2192 {tokens_after} tokens ({msgs_before} \u2192 {msgs_after} messages)
retry_notice = \u21bb retrying in {delay} s: {message} (attempt {attempt} of {max_attempts})
not_saved_notice = \u26a0 {unsaved} of {total} messages of this turn were not saved: {message}
model_not_found = {provider} has no model {model}: choose one with --model or LLM_MODEL ({message})
compaction_fallback = \u26a1 context compacted: the summary failed, earlier messages dropped \u2014 {tokens_before} \u2192 {tokens_after} tokens ({msgs_before} \u2192 {msgs_after} messages)
compaction_paused = \u26a1 context compacted: summaries paused after repeated failures, earlier messages dropped \u2014 {tokens_before} \u2192 {tokens_after} tokens ({msgs_before} \u2192 {msgs_after} messages)
compaction_shortened = \u26a1 context compacted: long messages shortened \u2014 {tokens_before} \u2192 {tokens_after} tokens
compaction_degraded = \u26a1 context compacted: cut further to fit the context window \u2014 {tokens_before} \u2192 {tokens_after} tokens ({msgs_before} \u2192 {msgs_after} messages)
window_notice_error = \u26a0 the model server reports a context window of {window} tokens (not {previous}); every request is compacted to fit it from now on
window_notice_truncation = \u26a0 the model server counted only {window} tokens and dropped the start of the request; the context window is taken as {window} tokens (not {previous})
compaction_also_cleared = ; old tool results cleared ({cleared})
compacting = compacting the context\u2026
context_header = next request: {total} / {window} tokens ({pct}%, {source})
context_header_unknown = next request: {total} tokens ({source}, window unknown)
context_part = {label}: {tokens} tokens ({pct}%)
context_part_count = {label} ({count}): {tokens} tokens ({pct}%)
context_part_unknown = {label}: {tokens} tokens
context_part_count_unknown = {label} ({count}): {tokens} tokens
context_trigger = compaction trigger: {budget} tokens ({pct}%)
context_trigger_off = automatic compaction is off: only a request the model refuses as too long is compacted
context_system = system prompt
context_tools = tool definitions
context_summary = summary
context_messages = messages
context_tool_results = tool results
context_cleared = cleared tool results
context_exact = exact count
context_anchored = anchored on the last count
context_estimate = estimate
context_window_line = window: {source}
context_window_option = the --context-window option
context_window_registry = the model registry
context_window_default = assumed (the model is unknown)
context_window_server = reported by the model server
context_window_error = learned from the model server's overflow error
context_window_truncation = learned when the model server cut a request
show_window = window: {window} tokens ({source}, for {model})
instructions_context_file = AGENTS.md: {path}, {tokens} tokens
instructions_context_file_cut = AGENTS.md: {path}, {tokens} tokens (cut)
instructions_context_none = AGENTS.md: none
instructions_not_a_file = AGENTS.md skipped: {path} is not a regular file
instructions_unreadable = AGENTS.md skipped: cannot read {path} ({reason})
instructions_too_large = AGENTS.md too large: {path} has {size} bytes, more than {limit}; only its start is used
instructions_not_utf8 = AGENTS.md skipped: {path} is not valid UTF-8
unknown_command = unknown command: {input}
interrupted = interrupted
error_line = error: {message}
cli_error = harness9-ref: error: {message}
cli_warning = harness9-ref: warning: {message}
cli_internal = internal error: {message}
cli_unexpected = unexpected failure
cli_offline = harness9-ref: no API key set ({key}); using the offline provider
cli_continue_none = harness9-ref: -c: no session to continue; starting a new one
cli_keyless = harness9-ref: no API key set ({key}); sending requests to {server} without one
waiting = waiting for the model\u2026 {seconds} s
cli_not_run = harness9-ref: not run (needs --yes): {command}
cli_not_run_lines = harness9-ref: not run (needs --yes), a command of {n} lines:
cli_not_created = ; no session was created
cli_no_match = harness9-ref: no session matches: {query}
cli_no_index = harness9-ref: no usable full-text index (no FTS5 trigram tokenizer in this SQLite, or a foreign index); searching by scan
cli_no_index_pg = harness9-ref: no usable trigram index (no pg_trgm extension in the database and no right to install it, or this host's Unicode version is not the database's); searching by scan
cli_pruned = pruned {sessions}, {messages}, {size} reclaimed
cli_would_prune = would prune {sessions}, {messages}
cli_copied = copied {sessions}, {messages}
cli_no_curses = the terminal UI needs the curses module, which this Python does not have; 'harness9-ref run PROMPT' works without it
cli_no_terminal = the terminal UI needs a terminal; use 'harness9-ref run PROMPT' without one
err_screen = cannot start the terminal UI: {reason}
err_not_saved = {unsaved} of {total} messages of this turn were not saved: {message}
err_provider_needs_key = --provider {provider} needs {key}
err_base_url = {provider}: invalid base URL {url}: expected http:// or https:// and a host
err_db_scheme = {source}: {scheme}:// URLs are not supported; give the path of an SQLite file or a postgresql:// URL
err_db_folder = {source} {path}: the folder {folder} does not exist
err_not_ours = {path}: not a harness9 database (it has tables of its own)
err_db_special = {path}: not a regular file (a device, FIFO, socket or folder cannot hold a database); give the path of an SQLite file or a postgresql:// URL
err_db_unwritable = {path}: the database cannot be written: {reason}
err_session_in_use = session {session} is in use by another harness9-ref on this computer; start a new session (without -c or --resume) or wait until it ends
err_session_lock = {path}: the sessions' lock file cannot be opened: {reason}
err_workdir = --workdir {path}: not a directory
err_lang_env = HARNESS9_LANG: expected zh or en, got {value}
err_ttl_env = HARNESS9_SESSION_TTL_DAYS: expected a positive number of days, got {value}
err_compact_at = {source}: expected a number in (0, 1] or off, got {value}
err_timeout = {source}: expected a number of seconds in (0, 86400], got {value}
err_count_tokens = --count-tokens needs the anthropic provider, not {provider}
err_raw_tui = --raw needs a line mode (run, sessions, show, search or prune); the terminal UI always shows control characters made visible
err_json_run = --json needs run: only a run has events to write as JSON lines
err_prompt_empty = PROMPT is empty
err_copy_missing = copy {name} {path}: no such file
err_copy_same = copy: SRC and DST are the same database
err_copy_taken = {name} already holds {n} of these sessions ({ids}); nothing was copied (--overwrite replaces them)
err_no_session = no session with id {id}
err_no_prefix = no session id starts with {prefix}
err_ambiguous = {prefix} matches {count} sessions: {ids}
err_not_ref = {text} is not a session id or prefix
err_not_prefix = {text} is not a session id or a prefix of one (4 to 35 characters of 0-9, a-f and -)
err_query_empty = the search query is empty
err_nothing_to_compact = nothing is old enough to summarise yet
err_max_turns = turn limit reached ({max_turns} turns)
err_model_name = {source}: expected a model name, got {value}
err_all_needs_list = allow --all needs --list
err_no_such_rule = allow --remove: no rule {rule} for {workdir}
err_allow_unusable = {path}: not a usable allow-rules file ({reason}); it is left as it is and its rules are not used
err_fork_unwritable = fork writes a new session, and the database cannot be written: {message}
err_fork_beyond = session {id}: a fork keeps at most its message count, {count}, not {at}
err_fork_result = message {k} of session {id} is a tool result; a fork of its first {at} messages would end between a call and its result
cancelled = cancelled
busy_prompt = a turn is running; wait for it or press Ctrl+C
busy_command = {command} is not available while a turn is running; press Ctrl+C first
edit_failed = the editor did not end well; the input is unchanged
edit_failed_reason = could not start the editor: {reason}
tool_lines = ({n} lines, {size})
tool_empty = (empty)
resume_header = Sessions ({n}):
resume_header_page = Sessions (page {page}, {n} shown):
resume_prompt = Type a number to open one (anything else and Enter cancels):
resume_prompt_next = Type a number to open one, n for the next page (anything else and Enter cancels):
resume_prompt_previous = Type a number to open one, p for the previous page (anything else and Enter cancels):
resume_prompt_pages = Type a number to open one, n for the next page, p for the previous one (anything else and Enter cancels):
no_sessions = no session to resume
search_header = Matching sessions ({n}):
search_header_page = Matching sessions (page {page}, {n} shown):
search_empty = no session matches
search_usage = usage: /search WORDS
message_word = message
messages_word = messages
age_now = just now
age_minutes = {n} min ago
age_hours = {n} h ago
age_days = {n} d ago
approve_prompt = Run the command above? [y]es / [n]o / [a]lways…
approve_header = Command to run, {n} line(s) (each after its number and |):
approve_read_first = The command is taller than the pane: PageUp to its line 1 first; y and a work once it has been shown
approve_yes = allowed
approve_always = allowed; no more questions in this session
approve_no = declined
approve_change_prompt = Apply this change? {subject}  [y]es / [n]o / [a]lways in this session
diff_more = … ({n} more diff lines)
allow_prompt = Always allow in {workdir}: {choices}  [s] every command, this session only  [Enter] back
allow_prompt_none = No rule can cover this command (shell operators, an expansion, a comment, an open quote or an assignment): [s] every command, this session only  [Enter] back
allow_choice = [{k}] {rule}
allow_added = allowed; commands matching {rule} now run without asking in {workdir}
allow_none = no allow rules for {workdir}
allow_none_all = no allow rules
allow_removed = removed the rule {rule} for {workdir}
help_commands = Commands:
help_new = /new  start a new session
help_resume = /resume  list recent sessions and resume one
help_search = /search WORDS  search the sessions
help_compact = /compact [FOCUS]  compact the context now
help_context = /context  show what the next request holds
help_help = /help  show this help
help_exit = /exit  quit
help_keys = Keys: Tab completes a command, Up/Down recall inputs, PageUp/PageDown scroll, Ctrl+C clears, interrupts or quits
help_keys_edit = Enter sends; Alt+Enter (or \\ then Enter) starts a new line; Ctrl+W deletes a word; Ctrl+X Ctrl+E edits in $EDITOR
start_hint = Type /help for the commands and keys
new_session = new session {session}
help_fork = /fork  continue in a copy of this session
help_rewind = /rewind  go back to before one of your prompts, in a copy
fork_done = forked into new session {session} ({messages})
fork_nothing = nothing to fork: this session has no stored message yet
rewind_header = Your prompts ({n}):
rewind_header_page = Your prompts (page {page}, {n} shown):
rewind_prompt = Type a number to go back to before that prompt (anything else and Enter cancels):
rewind_prompt_previous = Type a number to go back to before that prompt, p for earlier ones (anything else and Enter cancels):
rewind_prompt_next = Type a number to go back to before that prompt, n for later ones (anything else and Enter cancels):
rewind_prompt_pages = Type a number to go back to before that prompt, p for earlier ones, n for later ones (anything else and Enter cancels):
rewind_empty = no prompt to go back to
rewind_done = back to before prompt {k}, in new session {session}; the prompt is in the input line to edit and send
err_pool_timeout = {db}: no connection of the pool came free within {seconds} s
help_show = /show [N]  show the last (or the N-th) tool result whole; Ctrl+O shows the last
show_none = no tool result to show yet
show_usage = usage: /show [N], N from 1 to {n}
undo_header = files the dropped turns changed: {n}
undo_question = Put these files back as they were? Type y and Enter to restore them (anything else and Enter keeps them):
undo_restored = restored {path}
undo_removed = removed {path} (it did not exist before)
undo_changed = not restored: {path} was changed since by something else; it is left as it is
undo_not_kept = not restored: {path} was larger than {limit} when changed, so what it held was not kept
undo_failed = not restored: {path}: {reason}
undo_kept = files left as they are
undo_hint = files the dropped messages changed ({n}): {paths}; add --restore-files to see their diffs and put them back
cli_continue_none_here = harness9-ref: -c: no session of {folder} to continue; starting a new one (--any-folder continues the most recent of any folder)
cli_other_folder = harness9-ref: this session was started in {folder}; its tools now run in {here}
cli_sessions_elsewhere = harness9-ref: no session of {folder}; --any-folder lists those of every folder
folder_unknown = (folder unknown)
provider_unknown = (provider unknown)
show_origin = started in {folder} with {provider}
sessions_count_one = {n} session
sessions_count = {n} sessions
messages_count_one = {n} message
messages_count = {n} messages"""


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


# --- The Chinese texts under the names SPEC section 11 uses, and what is layout rather than
# language (separators, indentation, limits, colours).

_ZH: Final = STRINGS["zh"]

# R-TUI-1: the status bar is name, workdir part, separator, session part, and
# the ctx part after STATUS_CTX_GAP. The separator is U+2502 with two spaces on each side.
STATUS_WORKDIR_GAP: Final = "  "  # between the model and "workdir:"; left out with the workdir part (R-TUI-16)
STATUS_SEPARATOR: Final = "  \u2502  "
STATUS_MODEL: Final = "{name} {model}"  # the name part: STRINGS' status_name, one space, the model
STATUS_BAR: Final = (
    STATUS_MODEL.replace("{name}", _ZH["status_name"])
    + STATUS_WORKDIR_GAP + _ZH["status_workdir"] + STATUS_SEPARATOR + _ZH["status_session"]
)
STATUS_CTX_GAP: Final = "  "  # R-TUI-1: between "<id8>..." and "ctx:"
STATUS_CTX: Final = _ZH["status_ctx"]  # R-TUI-2, counts formatted by R-FMT
STATUS_CTX_UNKNOWN_WINDOW: Final = _ZH["status_ctx_unknown"]  # R-TUI-2: the window is 0 (unknown); uncoloured
ELLIPSIS: Final = "\u2026"  # R-TUI-12: replaces the start of a workdir that does not fit

# R-TUI-3: ANSI 256-colour numbers of the ctx part, by pct = used * 100 // window.
COLOUR_OK: Final = 10  # green, pct < WARN_PERCENT
COLOUR_WARN: Final = 11  # yellow, WARN_PERCENT <= pct < HIGH_PERCENT
COLOUR_HIGH: Final = 9  # red, pct >= HIGH_PERCENT (also above 100)
WARN_PERCENT: Final = 50
HIGH_PERCENT: Final = 80

# R-TUI-5: U+26A1, U+2014, U+2192 and the full-width parentheses U+FF08 / U+FF09.
COMPACTION_NOTICE: Final = _ZH["compaction_notice"]

# R-TUI-21: the notice of each tier of a compaction; the generic notice when the tier is None.
COMPACTION_TIERS: Final = ("cleared", "summary", "fallback", "paused", "shortened", "degraded")

# R-TUI-20: /context's lines. Each part's label is STRINGS' "context_" + its name; these parts
# show their count; the part lines are indented by CONTEXT_INDENT.
CONTEXT_PARTS: Final = ("system", "tools", "summary", "messages", "tool_results", "cleared")
CONTEXT_COUNTED: Final = ("tools", "messages", "tool_results", "cleared")
CONTEXT_SOURCES: Final = ("exact", "anchored", "estimate")
# R-WIN-7: where the window in force comes from: as the agent started it, or as learned (R-CKP-9)
CONTEXT_WINDOW_SOURCES: Final = ("option", "registry", "default", *WINDOW_SOURCES)
CONTEXT_INDENT: Final = "  "

# R-TUI-6, R-TUI-14: the one table of commands, in completion order.
COMMANDS: Final = ("/new", "/resume", "/fork", "/rewind", "/search", "/compact", "/context", "/show", "/help", "/exit")
FORK_COMMAND: Final = "/fork"  # R-FORK-3: the current session, whole, into a new one
REWIND_COMMAND: Final = "/rewind"  # R-FORK-4: back to before one of the prompts, in a new session
COMPACT_COMMAND: Final = "/compact"  # R-LONG-9: takes a focus after a space
SEARCH_COMMAND: Final = "/search"  # R-TUI-18: takes the query after a space
HELP_COMMAND: Final = "/help"
CONTEXT_COMMAND: Final = "/context"  # R-TUI-20: what the next request holds
SHOW_COMMAND: Final = "/show"  # R-TUI-41: a tool result whole; takes its number after a space
COMPACTING_NOTICE: Final = _ZH["compacting"]  # shown while /compact summarises
UNKNOWN_COMMAND: Final = _ZH["unknown_command"].replace("{input}", "")  # R-TUI-6: followed by the input

# R-TUI-8, R-TUI-18: the /resume and /search listings.
PAGE_SIZE: Final = 10  # items per page
LIST_ITEM: Final = "  [{k}] {id8}  {age}  {count} {messages}"  # R-TUI-18; the words come from STRINGS
LIST_TITLE: Final = "  {title}"  # after LIST_ITEM when the title (or snippet) is not empty
LIST_FOLDER: Final = "  {folder}"  # R-TUI-43: after LIST_ITEM, a /resume session of another folder
REWIND_ITEM: Final = "  [{k}] {preview}"  # R-FORK-4: one prompt of /rewind; ends after "]" when the preview is empty
RESUME_HEADER: Final = _ZH["resume_header"]
RESUME_ITEM: Final = LIST_ITEM + LIST_TITLE
RESUME_PROMPT: Final = _ZH["resume_prompt"]
RESUME_TIME_FORMAT: Final = "%Y-%m-%d %H:%M"  # R-CLI-12's listings; /resume shows ages (R-TUI-19)
NO_SESSIONS: Final = _ZH["no_sessions"]  # instead of the listing when there is no session
CANCELLED_NOTICE: Final = _ZH["cancelled"]  # R-TUI-8: the choice was not a listed number

INPUT_PROMPT: Final = "> "  # before the input line; also before the user's prompts in the pane
INPUT_PROMPT_BUSY: Final = "* "  # before the input line while a turn runs
INPUT_PROMPT_APPROVE: Final = "? "  # before the input line while a command waits for approval (R-APPR-2)
INTERRUPTED_NOTICE: Final = _ZH["interrupted"]  # R-TUI-9: Ctrl+C cancelled the running turn
ERROR_PREFIX: Final = _ZH["error_line"].replace("{message}", "")  # R-TUI-10: followed by the message

# Shown (as error lines) when a prompt, /new or /resume is entered while a turn runs; the
# prompt stays in the input line. The engine runs one turn at a time (R-ENG-16).
BUSY_PROMPT: Final = _ZH["busy_prompt"]
BUSY_COMMAND: Final = _ZH["busy_command"]

# R-TUI-13: what the program says (after "harness9-ref: error: ") when curses is missing, in English.
CURSES_MISSING: Final = STRINGS["en"]["cli_no_curses"]
