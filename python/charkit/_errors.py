"""charkit's Python exceptions: a failed C call becomes a CharkitError.

Every C function returns a charkit_status; anything but CHARKIT_OK (0) is
raised as CharkitError with the thread's last error (code, message and
location) read right after the failing call. Status 4 (a progress callback
asked to stop) is raised as the subclass Cancelled.
"""

from __future__ import annotations

__all__ = ["CharkitError", "Cancelled", "STATUS_NAMES"]

#: charkit_status values (charkit/capi/c_api.h) and their names.
STATUS_NAMES = {
    0: "CHARKIT_OK",
    1: "CHARKIT_INVALID_INPUT",
    2: "CHARKIT_IO_ERROR",
    3: "CHARKIT_BAD_ARGUMENT",
    4: "CHARKIT_CANCELLED",
    5: "CHARKIT_INTERNAL",
}


class CharkitError(Exception):
    """A charkit C call failed.

    Attributes: ``status`` (the charkit_status, an int: 1 invalid input,
    2 I/O error, 3 bad argument, 4 cancelled, 5 internal), ``code`` (e.g.
    ``"MODEL_SHAPE"``, ``"IO_OPEN"``; see ``charkit errors``), ``message``
    (one line) and ``location`` (where in the input, or ``""``).
    ``str()`` gives ``"CODE: location: message"`` (empty parts left out).
    """

    def __init__(self, status: int, code: str = "", message: str = "", location: str = ""):
        self.status = int(status)
        self.code = code or ""
        self.message = message or ""
        self.location = location or ""
        super().__init__(self.status, self.code, self.message, self.location)

    def __str__(self) -> str:
        parts = [p for p in (self.code, self.location, self.message) if p]
        if not parts:
            parts = [STATUS_NAMES.get(self.status, "status %d" % self.status)]
        return ": ".join(parts)

    def __repr__(self) -> str:
        return "%s(status=%d, code=%r, message=%r, location=%r)" % (
            type(self).__name__, self.status, self.code, self.message, self.location)


class Cancelled(CharkitError):
    """A progress callback returned False: the call stopped and made nothing."""
