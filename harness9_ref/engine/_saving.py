"""When a run stores its messages: the engine's saving part (SPEC R-ENG-11 … R-ENG-13, R-ENG-23 … R-ENG-26,
R-LONG-6, R-LONG-16).

``history[start_len:saved]`` of a run is what the session already holds and
``history[saved:committed]`` what is complete but not yet stored. ``SaveAtEnd``, the document's
engine, stores it all with one ``add_messages`` call at the end of the run (R-ENG-11).
``SaveAsItGoes`` stores the prompt before the first provider call and each step once complete
(R-ENG-23), so a killed process loses at most the step in flight; a failed save leaves its
messages for the next (R-ENG-25), a reply cut short keeps its text (R-ENG-24), and a run that
could not store everything ends with a ``save_failed`` event. Either way the run's checkpoint and
context state follow the messages at the end (R-LONG-6, R-LONG-16, R-ENG-26).
"""

from __future__ import annotations

import logging
from typing import Final

from ..memory.storage import ContextState, SessionError
from ..schema import ROLE_ASSISTANT, Message
from ._events import Event, EventType, SaveFailedData
from ._long_session import stateful
from ._run_errors import LOGGER_NAME, error_text, internal_message, one_line
from ._run_state import RunState

__all__ = ["PARTIAL_MARKER", "SaveAsItGoes", "SaveAtEnd"]

PARTIAL_MARKER: Final = "\n\n[reply cut off: "  # R-ENG-24: then the error's message and "]"

_log = logging.getLogger(LOGGER_NAME)


def save_progress(run: RunState) -> None:
    """Store ``history[saved:committed]`` by one ``add_messages`` call, if there is any (R-ENG-23).

    Without a session nothing happens. A failure is logged as a warning and leaves the messages
    pending, so the next save carries them first (R-ENG-13, R-ENG-25).
    """
    session = run.session
    if session is None or run.saved >= run.committed:
        return
    batch = run.history[run.saved : run.committed]
    try:
        session.add_messages(batch)
    except Exception as exc:
        run.save_error = error_text(exc) if isinstance(exc, SessionError) else internal_message(exc)
        name = getattr(session, "session_id", "(unknown id)")
        _log.warning("could not save %d messages to session %s: %s", len(batch), name, run.save_error)
        return
    run.saved = run.committed
    run.save_error = ""


def save_run(run: RunState, state: ContextState | None = None) -> Event | None:
    """The end-of-run save (R-ENG-11, R-ENG-23), then the checkpoint and ``state`` (R-LONG-6, R-LONG-16).

    The checkpoint and state follow only when every message of the run is stored, the state
    only when it differs from the one the run read; a failed save of either is logged and
    changes nothing else. Returns the ``save_failed`` event when messages are left unsaved
    (R-ENG-25), for a run that says so (a durable one); else None.
    """
    session = run.session
    save_progress(run)
    if session is None:
        return None
    if run.saved < run.committed:
        unsaved = run.committed - run.saved
        return Event(EventType.SAVE_FAILED, SaveFailedData(run.saved - run.start_len, unsaved, one_line(run.save_error)))
    checkpoint = run.context.checkpoint(run.history, run.committed)
    try:
        if checkpoint is not None:
            stateful(session).save_checkpoint(checkpoint)
    except Exception as exc:
        _log.warning("could not save the checkpoint of session %s: %s", session.session_id, internal_message(exc))
    try:
        if state is not None and state != run.context.stored_state:
            stateful(session).save_context_state(state)
    except Exception as exc:
        _log.warning("could not save the context state of session %s: %s", session.session_id, internal_message(exc))
    return None


class SaveAtEnd:
    """The document's saving (R-ENG-11): one ``add_messages`` call at the end of the run, nothing before.

    A failed save is only logged (R-ENG-13), a reply cut short leaves nothing (R-ENG-12).
    """

    def started(self, run: RunState) -> None:
        """The prompt is in ``history[:committed]``; the first provider call comes next."""

    def stepped(self, run: RunState) -> None:
        """A step (a reply and its observations) is complete and committed."""

    def cut_short(self, run: RunState, message: str) -> None:
        """The run fails with the one-line ``message``; ``run.partial`` is what the failing call streamed."""

    def ended(self, run: RunState, state: ContextState | None) -> Event | None:
        """The end-of-run save (``save_run``); returns the event to emit before the terminal one, if any."""
        save_run(run, state)
        return None


class SaveAsItGoes(SaveAtEnd):
    """A durable run's saving (R-ENG-23 … R-ENG-26): the prompt first, each step as it completes.

    The text of a reply cut short is kept (R-ENG-24), and a run that left messages unsaved says
    so with a ``save_failed`` event before its terminal one (R-ENG-25).
    """

    def started(self, run: RunState) -> None:
        save_progress(run)  # R-ENG-23 (1): stored before the first provider call

    def stepped(self, run: RunState) -> None:
        save_progress(run)  # R-ENG-23 (2): the step with all its results, in one call

    def cut_short(self, run: RunState, message: str) -> None:
        if run.partial:  # R-ENG-24: what the user saw is kept
            run.history.append(Message(ROLE_ASSISTANT, run.partial + PARTIAL_MARKER + message + "]"))
            run.committed = len(run.history)

    def ended(self, run: RunState, state: ContextState | None) -> Event | None:
        return save_run(run, state)
