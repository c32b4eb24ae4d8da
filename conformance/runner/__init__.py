"""The runner and its reports: cases, the adapter protocol's driver, verdicts, JSON comparison,
the scratch folder a case runs in, and the text, JSON and JUnit reports."""
