"""The status bar (harness9_ref/tui/_status.py; SPEC R-TUI-1 … R-TUI-4, R-TUI-12)."""

from __future__ import annotations

import json

import pytest

from harness9_ref.text import cell_width, model_label
from harness9_ref.tui import StatusState, ctx_colour, render_status

SID = "f3a2c1b0-4d7e-4c3a-9f12-ab8d1e2c3f01"
BAR = "[harness9] gpt-4o-mini  workdir: /your/project  \u2502  session: f3a2c1b0..."


def line(segments: list[tuple[str, int | None]]) -> str:
    return "".join(text for text, _ in segments)


def test_the_documents_example_is_reproduced_exactly() -> None:
    segments = render_status("gpt-4o-mini", "/your/project", SID, 45200, 128000, 200)
    assert line(segments) == BAR + "  ctx: 45.2K/128K (35%)"
    assert segments == [(BAR + "  ", None), ("ctx: 45.2K/128K (35%)", 10)]


def test_before_the_first_token_update_there_is_no_ctx_part() -> None:
    assert render_status("gpt-4o-mini", "/your/project", SID, None, 128000, 200) == [(BAR, None)]


@pytest.mark.parametrize(
    ("provider", "model", "shown"),
    [
        ("openai", "gpt-4o-mini", "openai:gpt-4o-mini"),
        ("openai", "openai/gpt-4o-mini", "openai:openai/gpt-4o-mini"),  # a router's name, as it is sent
        ("anthropic", "Claude-Sonnet-4", "anthropic:Claude-Sonnet-4"),  # case kept
        ("offline", "gpt-4o-mini", "offline"),  # R-CLI-9: no model is sent
    ],
)
def test_the_label_names_the_provider_and_the_model_its_requests_carry(provider: str, model: str, shown: str) -> None:
    """R-TUI-25."""
    assert model_label(provider, model) == shown
    assert line(render_status(shown, "/w", SID, None, 0, 200)).startswith(f"[harness9] {shown}  workdir: /w  ")


@pytest.mark.parametrize(
    ("provider", "model", "base_url", "shown"),
    [
        ("openai", "qwen2.5-coder", "http://127.0.0.1:8080/v1", "openai:qwen2.5-coder@127.0.0.1:8080"),
        ("openai", "openai/gpt-4o-mini", "https://openrouter.ai/api/v1", "openai:openai/gpt-4o-mini@openrouter.ai"),
        ("openai", "gpt-4o-mini", "https://api.openai.com/v1/", "openai:gpt-4o-mini"),  # the official endpoint
        ("anthropic", "claude-sonnet-4", "https://api.anthropic.com", "anthropic:claude-sonnet-4"),
        ("anthropic", "claude-sonnet-4", "https://k:secret@proxy.test", "anthropic:claude-sonnet-4@proxy.test"),
        ("offline", "gpt-4o-mini", "http://127.0.0.1:8080/v1", "offline"),
    ],
)
def test_the_label_names_the_server_of_any_other_base_url(provider: str, model: str, base_url: str, shown: str) -> None:
    """R-TUI-26a: a local server or router is named, so it is never taken for the official API or for offline."""
    assert model_label(provider, model, base_url) == shown


def test_the_session_shows_its_first_eight_characters_and_three_dots() -> None:
    assert line(render_status("m", "/w", "0123456789abcdef", None, 0, 200)).endswith("session: 01234567...")


@pytest.mark.parametrize(
    ("used", "window", "text", "colour"),
    [
        (0, 128000, "ctx: 0/128K (0%)", 10),
        (499, 1000, "ctx: 499/1K (49%)", 10),
        (500, 1000, "ctx: 500/1K (50%)", 11),
        (799, 1000, "ctx: 799/1K (79%)", 11),
        (800, 1000, "ctx: 800/1K (80%)", 9),
        (1500, 1000, "ctx: 1.5K/1K (150%)", 9),
        (1049, 2000, "ctx: 1K/2K (52%)", 11),
        (1200000, 1048576, "ctx: 1.2M/1M (114%)", 9),
        (64000, 128000, "ctx: 64K/128K (50%)", 11),
        (102399, 128000, "ctx: 102.4K/128K (79%)", 11),
        (500, 0, "ctx: 500", None),
        (45200, 0, "ctx: 45.2K", None),
    ],
)
def test_the_ctx_part_is_formatted_and_coloured_by_percentage(
    used: int, window: int, text: str, colour: int | None
) -> None:
    segments = render_status("m", "/w", SID, used, window, 500)
    assert segments[-1] == (text, colour)
    assert segments[0][1] is None and segments[0][0].endswith("...  ")


@pytest.mark.parametrize(("pct", "colour"), [(0, 10), (49, 10), (50, 11), (79, 11), (80, 9), (100, 9), (250, 9)])
def test_ctx_colour_thresholds(pct: int, colour: int) -> None:
    assert ctx_colour(pct) == colour


def test_a_bar_that_fits_exactly_is_unchanged() -> None:
    full = line(render_status("gpt-4o-mini", "/your/project", SID, 45200, 128000, 500))
    assert line(render_status("gpt-4o-mini", "/your/project", SID, 45200, 128000, len(full))) == full


def test_a_narrow_screen_replaces_the_start_of_the_workdir_with_an_ellipsis() -> None:
    full = line(render_status("gpt-4o-mini", "/your/project", SID, 45200, 128000, 500))
    segments = render_status("gpt-4o-mini", "/your/project", SID, 45200, 128000, len(full) - 1)
    assert line(segments) == full.replace("/your/project", "\u2026our/project")
    assert segments[-1] == ("ctx: 45.2K/128K (35%)", 10)
    segments = render_status("gpt-4o-mini", "/your/project", SID, 45200, 128000, len(full) - 4)
    assert line(segments) == full.replace("/your/project", "\u2026/project")  # no shorter than the last component
    assert cell_width(line(segments)) == len(full) - 4


# R-TUI-16: the order in which a narrow bar gives things up; the ctx part is kept to the end.
WITH_DIR = "[harness9] gpt-4o-mini  workdir: \u2026/project  \u2502  session: f3a2c1b0...  "
NO_DIR = "[harness9] gpt-4o-mini  \u2502  session: f3a2c1b0...  "
NO_MODEL = "[harness9]  \u2502  session: f3a2c1b0...  "
CTX = ("ctx: 45.2K/128K (35%)", 10)


@pytest.mark.parametrize(
    ("width", "expected"),
    [
        (len(WITH_DIR) + 21, [(WITH_DIR, None), CTX]),
        (len(WITH_DIR) + 20, [(NO_DIR, None), CTX]),
        (len(NO_DIR) + 21, [(NO_DIR, None), CTX]),
        (len(NO_DIR) + 20, [(NO_MODEL, None), CTX]),
        (len(NO_MODEL) + 21, [(NO_MODEL, None), CTX]),
        (len(NO_MODEL) + 20, [(NO_MODEL[:-1], None), CTX]),
        (22, [("[", None), CTX]),
        (21, [CTX]),
        (20, [("ctx: 45.2K/128K (35%", 10)]),
        (1, [("c", 10)]),
    ],
)
def test_a_narrow_bar_gives_up_the_workdir_then_the_model_then_cuts_left_of_ctx(
    width: int, expected: list[tuple[str, int | None]]
) -> None:
    assert render_status("gpt-4o-mini", "/home/user/your/project", SID, 45200, 128000, width) == expected


def test_without_a_ctx_part_the_same_order_then_the_session_part_then_a_cut() -> None:
    head = "[harness9]  \u2502  session: f3a2c1b0..."
    assert render_status("gpt-4o-mini", "/your/project", SID, None, 0, len(head)) == [(head, None)]
    assert render_status("gpt-4o-mini", "/your/project", SID, None, 0, 20) == [("[harness9]", None)]
    assert render_status("gpt-4o-mini", "/your/project", SID, None, 0, 6) == [("[harne", None)]


def test_a_cut_never_leaves_half_a_session_id() -> None:
    """R-TUI-16a: the gap before ctx: may shrink to one space; a shorter room drops the session part."""
    fits = render_status("gpt-4o-mini", "/your/project", SID, 45200, 128000, 57)
    assert fits[0] == ("[harness9]  \u2502  session: f3a2c1b0... ", None)
    narrower = render_status("gpt-4o-mini", "/your/project", SID, 45200, 128000, 56)
    assert narrower[0] == ("[harness9]  ", None) and narrower[1][0] == "ctx: 45.2K/128K (35%)"


def test_english_uses_the_same_bar() -> None:
    for width in (500, 60, 30, 10):
        en = render_status("gpt-4o-mini", "/your/project", SID, 45200, 128000, width, "en")
        assert en == render_status("gpt-4o-mini", "/your/project", SID, 45200, 128000, width)


@pytest.mark.parametrize("width", [0, -3])
def test_no_width_gives_no_segments(width: int) -> None:
    assert render_status("m", "/w", SID, 1, 10, width) == []


def test_wide_characters_count_two_cells() -> None:
    workdir = "/home/用户/项目"
    full = line(render_status("m", workdir, SID, 100, 1000, 500))
    assert cell_width(full) == len(full) + 4
    segments = render_status("m", workdir, SID, 100, 1000, cell_width(full) - 1)
    assert line(segments) == full.replace(workdir, "\u2026ome/用户/项目")
    segments = render_status("m", workdir, SID, 100, 1000, cell_width(full) - 5)
    assert line(segments) == full.replace(workdir, "\u2026用户/项目")
    segments = render_status("m", workdir, SID, 100, 1000, cell_width(full) - 6)
    assert line(segments) == full.replace(workdir, "\u2026户/项目")  # "用户" does not fit: one cell to spare
    assert cell_width(line(segments)) == cell_width(full) - 7
    segments = render_status("m", workdir, SID, 100, 1000, cell_width(full) - 9)
    assert line(segments) == full.replace(workdir, "\u2026/项目")


def test_a_wide_model_name_is_counted_in_cells_and_left_out_whole() -> None:
    with_model = "[harness9] 模型  \u2502  session: f3a2c1b0..."
    assert cell_width(with_model) == len(with_model) + 2
    assert render_status("模型", "/w", SID, None, 0, cell_width(with_model)) == [(with_model, None)]
    assert render_status("模型", "/w", SID, None, 0, cell_width(with_model) - 1) == [
        ("[harness9]  \u2502  session: f3a2c1b0...", None)
    ]


def test_the_segments_are_json_friendly() -> None:
    segments = render_status("gpt-4o-mini", "/your/project", SID, 45200, 128000, 200)
    assert json.loads(json.dumps(segments)) == [list(s) for s in segments]


class TestStatusState:
    def test_it_starts_without_a_ctx_part(self) -> None:
        assert StatusState() == StatusState(None, 0)
        assert StatusState().to_dict() == {"used": None, "window": 0}

    def test_used_follows_every_update_and_the_window_is_set_once(self) -> None:
        state = StatusState()
        state = state.updated(6, 0)
        assert (state.used, state.window) == (6, 0)
        state = state.updated(812, 128000)
        assert (state.used, state.window) == (812, 128000)
        state = state.updated(15, 64000)
        assert (state.used, state.window) == (15, 128000)
        state = state.updated(845, 0)
        assert (state.used, state.window) == (845, 128000)

    def test_apply_takes_the_json_data_of_a_token_update(self) -> None:
        state = StatusState().apply({"estimated_tokens": 45200, "context_window": 128000})
        assert state.to_dict() == {"used": 45200, "window": 128000}

    def test_a_fresh_state_after_new_or_resume_takes_the_window_again(self) -> None:
        state = StatusState().updated(10, 1000)
        assert StatusState().updated(20, 2000).window == 2000
        assert state.window == 1000
