"""The harness9 conformance suite: cases, the runner and the adapter protocol.

Run ``python -m conformance run --adapter CMD`` against any implementation's adapter (protocol
v1, see ``conformance/schema/protocol-v1``), ``show CASE`` to see what a case sends and expects,
``lint`` to check the case files, and ``mutants`` to check that the suite catches the seeded bugs
in ``conformance/mutants``. The names below
let tests drive the same machinery in-process. Standard library only.

The names are loaded when first used (PEP 562), so that importing a submodule (the pytest
plugin ``conformance.traffic.pytest_plugin``, which pytest loads before anything else) does not import
the runner and the reference with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._suite import run_case, run_suite
    from .mutation._mutants import MutantResult, run_mutants
    from .porting._porting import PortAdapter as Adapter
    from .runner._cases import (
        CASES_DIR,
        PROJECT_ROOT,
        SPEC_PATH,
        Case,
        CaseError,
        defined_requirement_ids,
        load_cases,
        read_id_list,
        spec_requirement_ids,
    )
    from .runner._compare import first_difference, json_equal
    from .runner._lint import lint_cases
    from .runner._ops import OPS, PROTOCOL_VERSION
    from .runner._results import CaseResult, SuiteResult
    from .runner._runner import DEFAULT_ADAPTER_COMMAND, DEFAULT_TIMEOUT, AdapterError
    from .runner._verdicts import Response, Verdict, evaluate

_HOMES = {
    **dict.fromkeys(("CASES_DIR", "PROJECT_ROOT", "SPEC_PATH", "Case", "CaseError", "load_cases",
                     "read_id_list", "spec_requirement_ids", "defined_requirement_ids"), "runner._cases"),
    **dict.fromkeys(("first_difference", "json_equal"), "runner._compare"),
    "lint_cases": "runner._lint",
    **dict.fromkeys(("Response", "Verdict", "evaluate"), "runner._verdicts"),
    **dict.fromkeys(("MutantResult", "run_mutants"), "mutation._mutants"),
    **dict.fromkeys(("OPS", "PROTOCOL_VERSION"), "runner._ops"),
    **dict.fromkeys(("CaseResult", "SuiteResult"), "runner._results"),
    **dict.fromkeys(("DEFAULT_ADAPTER_COMMAND", "DEFAULT_TIMEOUT", "AdapterError"), "runner._runner"),
    **dict.fromkeys(("run_case", "run_suite"), "_suite"),
    "Adapter": "porting._porting",  # the runner's adapter with the port's declarations
}
_RENAMED = {"Adapter": "PortAdapter"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), _RENAMED.get(name, name))
    globals()[name] = value
    return value


__all__ = (
    "CASES_DIR",
    "DEFAULT_ADAPTER_COMMAND",
    "DEFAULT_TIMEOUT",
    "OPS",
    "PROJECT_ROOT",
    "PROTOCOL_VERSION",
    "SPEC_PATH",
    "Adapter",
    "AdapterError",
    "Case",
    "CaseError",
    "CaseResult",
    "MutantResult",
    "Response",
    "SuiteResult",
    "Verdict",
    "defined_requirement_ids",
    "evaluate",
    "first_difference",
    "json_equal",
    "lint_cases",
    "load_cases",
    "read_id_list",
    "run_case",
    "run_mutants",
    "run_suite",
    "spec_requirement_ids",
)
