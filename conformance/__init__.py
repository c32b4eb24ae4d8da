"""The harness9 conformance suite: cases, the runner and the adapter protocol.

Run ``python -m conformance run --adapter CMD`` against any implementation's adapter (protocol
v1, see ``conformance/schema/protocol-v1``), ``lint`` to check the case files, and ``mutants``
to check that the suite catches the seeded bugs in ``conformance/mutants``. The names below
let tests drive the same machinery in-process. Standard library only.
"""

from ._cases import (
    CASES_DIR,
    PROJECT_ROOT,
    SPEC_PATH,
    Case,
    CaseError,
    lint_cases,
    load_cases,
    read_id_list,
    spec_requirement_ids,
)
from ._compare import Verdict, evaluate, first_difference, json_equal
from ._mutants import MutantResult, run_mutants
from ._ops import OPS, PROTOCOL_VERSION
from ._report import CaseResult, SuiteResult
from ._runner import (
    DEFAULT_ADAPTER_COMMAND,
    DEFAULT_TIMEOUT,
    Adapter,
    AdapterError,
    Response,
    run_case,
    run_suite,
)

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
