"""Prints a line that is not JSON on stdout instead of answering."""

from _base import serve

serve(lambda request: "Loading model... done")
