"""Seeded bugs, each judged on a patched copy of the project: the catalogue of
``conformance/mutants/`` (caught by cases; its ``pytest/`` folder, by the project's tests) and
generated AST mutants."""
