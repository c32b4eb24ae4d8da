"""Seeded bugs: the catalogue of ``conformance/mutants/`` and generated AST mutants, each judged
on a patched copy of the project."""
