"""The one error engram's client raises for a refused request."""

from __future__ import annotations

from typing import Optional


class EngramError(Exception):
    """A refusal from engram: ``code`` is engram's error code (invalid,
    unauthorized, not_found, conflict, quota_exceeded, rate_limited, …),
    ``message`` its explanation, ``status`` the HTTP status and
    ``request_id`` the X-Request-ID to find it in the server's log."""

    def __init__(self, code: str, message: str, status: int, request_id: Optional[str] = None) -> None:
        super().__init__("%s (%d): %s" % (code, status, message))
        self.code = code
        self.message = message
        self.status = status
        self.request_id = request_id
