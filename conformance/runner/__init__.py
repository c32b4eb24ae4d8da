"""The runner, the bottom layer: cases and their linter, the adapter protocol's driver, verdicts,
JSON comparison, the session backends and the scratch folder a case runs in, the results and
their text, JSON and JUnit reports. It imports nothing from ``porting``, ``traffic`` or
``mutation``, which build on it; ``conformance._suite`` joins them to run a case."""
