"""Errors the client raises: each carries the server's status and message,
and the field the message names when it names one."""

from __future__ import annotations

import re

# Messages name the offending field as `parameter 'a.b[0].c': ...`.
_FIELD = re.compile(r"parameter '([^']+)'")


class MarketlabError(Exception):
    """The server refused a request (4xx) or failed (5xx)."""

    def __init__(self, status: int, message: str, body: object = None):
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message
        self.body = body
        found = _FIELD.search(message)
        #: The request field the message names (`entry.condition.rule.type_name`), if any.
        self.field: str | None = found.group(1) if found else None


class RateLimited(MarketlabError):
    """429 that the client did not retry: more retries than allowed, or a
    `Retry-After` longer than the client waits."""

    def __init__(self, status: int, message: str, body: object, retry_after: float | None):
        super().__init__(status, message, body)
        self.retry_after = retry_after


class TaskFailed(MarketlabError):
    """A task or batch ended FAILED; `message` is its error."""


class TaskTimeout(MarketlabError, TimeoutError):
    """`wait(timeout)` ran out before the task finished."""


class WebhookVerificationError(Exception):
    """A webhook delivery that does not verify: a missing header, a
    timestamp out of tolerance, or no signature made with the secret."""


def message_of(body: object, fallback: str) -> str:
    """The message of any of the three services' error envelopes."""
    if isinstance(body, dict):
        for key in ("detail", "msg", "error", "message"):
            value = body.get(key)
            if isinstance(value, str) and value:
                return value
    return fallback
