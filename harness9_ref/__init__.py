"""harness9-ref: a reference implementation of harness9's context engineering.

Subpackages: ``schema`` (messages), ``memory`` (tokens, repair, compaction), ``provider``
(model registry). Importing this package imports none of them; it holds the
root of every error, ``Harness9Error``, and ``Said``, the key and fields a user-facing
error is worded by (``in_language`` writes it in a language).
"""

from ._errors import Harness9Error, Said, in_language

__version__ = "0.1.0"
__all__ = ("Harness9Error", "Said", "__version__", "in_language")
