"""``python -m conformance``: see ``conformance._cli``."""

from ._cli import main

raise SystemExit(main())
