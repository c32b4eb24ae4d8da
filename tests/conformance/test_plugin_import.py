"""Loading the pytest plugin imports nothing but the standard library and pytest.

Why: pytest loads entry-point plugins before anything else, before coverage starts; a plugin
that imported the runner or ``harness9_ref`` would make every project with this package
installed pay for those imports, and would hide those modules' top-level lines from coverage.
"""

from __future__ import annotations

import json
import subprocess
import sys

from conformance.runner._cases import PROJECT_ROOT

PROBE = """
import json, sys
before = set(sys.modules)
import conformance.traffic.pytest_plugin
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_the_plugin_imports_only_itself_and_its_package() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE], check=True, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60
    )
    ours = [name for name in json.loads(result.stdout) if name.split(".")[0] in ("conformance", "harness9_ref")]
    assert ours == ["conformance", "conformance.traffic", "conformance.traffic.pytest_plugin"]
