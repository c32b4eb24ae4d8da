"""Answers every case with an error whose message is missing (valid only without --validate)."""

from _base import serve

serve(lambda request: {"seq": request["seq"], "error": {"code": "invalid_input"}})
