"""Memory: the two halves of what an agent remembers (SPEC sections 2.2–2.4, 3, 4.1 and 4.2 and R-SES onwards).

- ``memory.context``, context engineering: token estimation, tool-pair repair, the three
  compactors (sliding window, token budget, summarisation with long-session folding) and
  shortening. It maps ``list[Message]`` to ``list[Message]`` (or a number): no clock, no
  database, no network.
- ``memory.storage``: sessions and where they are kept (``Manager``, ``SQLiteSession``,
  ``MemorySession``, and PostgreSQL's sessions behind ``Manager("postgresql://…")``), with
  finding, search, prune, copy and checkpoints. It is the only part that does I/O.

Each half exports its own names (``from harness9_ref.memory.context import estimate_tokens``,
``from harness9_ref.memory.storage import Manager``); this package exports none.
"""
