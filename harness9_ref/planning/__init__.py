"""Planning state kept with a session: the todo list (SPEC R-SES-7) and how a plan is shown (R-RCL-7, R-RCL-8)."""

from . import _todo
from ._todo import *

__all__ = [*_todo.__all__]
