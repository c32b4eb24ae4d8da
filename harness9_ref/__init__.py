"""harness9-ref: a reference implementation of harness9's context engineering.

Subpackages: the core (``schema``, ``planning``, ``memory``, ``provider``, ``engine``, ``testing``) and the
product built on it (``tools``, ``text``, ``offline``, ``cli``, ``tui``); README's "Layout" draws
the line. Importing this package imports none of them; it holds the root of every error,
``Harness9Error``, and ``Said``, the key and fields a user-facing error is worded by
(``harness9_ref.text.in_language`` writes it in a language).
"""

from ._harness9_error import Harness9Error, Said

__version__ = "0.1.0"
__all__ = ("Harness9Error", "Said", "__version__")
