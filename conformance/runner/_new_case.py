"""``python -m conformance new-case AREA SLUG``: mint a case id and write a skeleton case file.

Case ids are permanent, meaningless and unique across the suite (``schema/case.json``); picked
by hand they collide. The new id is drawn at random until it is none of the 6-character ids
already written in a case file or a seeded bug. The skeleton is a valid case file that cannot
pass by accident: ``lint`` refuses its placeholder requirement id until a real one is cited,
and its empty input fails until the case is written.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any, Final

from .._cli_args import Abort
from ._cases import CASES_DIR, PROJECT_ROOT
from ._ops import OPS

__all__ = ["add_new_case_command", "mint_id", "new_case"]

_ID_ALPHABET: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_QUOTED_ID: Final = re.compile(r'"([A-Z0-9]{6})"')
# Area folders and slugs as the suite names them: lower case, digits, "-" and "_".
_NAME: Final = re.compile(r"[a-z0-9][a-z0-9_-]*")
PLACEHOLDER_REQUIREMENT: Final = "R-TODO-1"


def _taken_ids(cases_dir: Path, mutants_dir: Path) -> set[str]:
    """Every quoted 6-character id in the case files and seeded bugs, readable or not."""
    files = [*cases_dir.rglob("*.json"), *mutants_dir.rglob("*.json")]
    return {m for path in files for m in _QUOTED_ID.findall(path.read_text(encoding="utf-8", errors="replace"))}


def mint_id(taken: set[str], rng: random.Random | None = None) -> str:
    """A random id of 6 characters from A-Z and 0-9 that is not in ``taken``."""
    draw = rng or random.SystemRandom()
    while True:
        candidate = "".join(draw.choice(_ID_ALPHABET) for _ in range(6))
        if candidate not in taken:
            return candidate


def _area_op(area_dir: Path) -> str | None:
    """The op most of the area's cases run, or None for an area without readable cases."""
    ops: Counter[str] = Counter()
    for path in area_dir.glob("*.json"):
        try:
            op = json.loads(path.read_text(encoding="utf-8")).get("op")
        except (ValueError, AttributeError):
            continue
        if isinstance(op, str):
            ops[op] += 1
    return ops.most_common(1)[0][0] if ops else None


def new_case(
    area: str, slug: str, *, op: str | None = None, cases_dir: Path = CASES_DIR,
    mutants_dir: Path = PROJECT_ROOT / "conformance" / "mutants",
) -> tuple[str, Path]:
    """Write the skeleton of ``<cases_dir>/<area>/<slug>.json``; its id and path.

    Raises:
        Abort: a name is not lower case letters, digits, "-" and "_"; the case exists; the op is
            unknown, or not given for an area without cases. Nothing is written then.
    """
    for what, name in (("area", area), ("slug", slug)):
        if not _NAME.fullmatch(name):
            raise Abort(f"{what} {name!r}: use lower-case letters, digits, '-' and '_'")
    if not cases_dir.is_dir():
        raise Abort(f"no such directory: {cases_dir}")
    path = cases_dir / area / f"{slug}.json"
    if path.exists():
        raise Abort(f"{path} already exists: choose another slug")
    op = op or _area_op(cases_dir / area)
    if op is None:
        raise Abort(f"area {area!r} has no cases yet: name the op with --op")
    if op not in OPS:
        raise Abort(f"unknown op {op!r}; the ops are {', '.join(OPS)}")
    case_id = mint_id(_taken_ids(cases_dir, mutants_dir))
    skeleton: dict[str, Any] = {
        "id": case_id,
        "description": "TODO: what the case checks, in one sentence.",
        "spec": [PLACEHOLDER_REQUIREMENT],
        "op": op,
        "input": {},
        "expect": {"output": None},
    }
    path.parent.mkdir(exist_ok=True)
    with path.open("x", encoding="utf-8") as file:  # never overwrite a case written meanwhile
        file.write(json.dumps(skeleton, indent=2, ensure_ascii=False) + "\n")
    return case_id, path


def _command(args: argparse.Namespace) -> int:
    case_id, path = new_case(args.area, args.slug, op=args.op, cases_dir=args.cases)
    print(f"{case_id} {path}")
    return 0


def add_new_case_command(commands: Any) -> None:
    """Add ``new-case`` to the sub-commands of ``python -m conformance``."""
    parser = commands.add_parser("new-case", help="mint a case id and write a skeleton case file")
    parser.add_argument("area", help="the area folder under the cases directory, e.g. tokens")
    parser.add_argument("slug", help="the file name without .json, e.g. empty-history")
    parser.add_argument("--op", choices=OPS, help="default: the op of the area's cases")
    parser.add_argument("--cases", type=Path, default=CASES_DIR, metavar="DIR")
    parser.set_defaults(handler=_command)
