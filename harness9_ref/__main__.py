"""``python -m harness9_ref``: the same program as the ``harness9-ref`` command (SPEC R-CLI-1)."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
