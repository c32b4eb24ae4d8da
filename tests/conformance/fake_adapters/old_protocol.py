"""Speaks protocol 0, so its start handshake fails."""

from _base import correct, serve

serve(correct, protocol=0)
