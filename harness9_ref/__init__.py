"""harness9-ref: a reference implementation of harness9's context engineering.

Subpackages: ``schema`` (messages), ``memory`` (tokens, repair, compaction), ``provider``
(model registry). Importing this package imports none of them; it holds the
root of every error, ``Harness9Error``.
"""

from ._errors import Harness9Error

__version__ = "0.1.0"
__all__ = ("Harness9Error", "__version__")
