"""Answers every case correctly."""

from _base import correct, serve

serve(correct)
