"""Errors the client raises: each carries the server's status and message,
and the field the message names when it names one."""

from __future__ import annotations

import re

# Messages name the offending field as `parameter 'a.b[0].c': ...`.
_FIELD = re.compile(r"parameter '([^']+)'")


class MarketlabError(Exception):
    """The server refused a request (4xx) or failed (5xx); `status` is the
    HTTP status of the answer, `None` when there was no answer."""

    def __init__(self, status: int | None, message: str, body: object = None):
        super().__init__(f"{status}: {message}" if status is not None else message)
        self.status = status
        self.message = message
        self.body = body
        found = _FIELD.search(message)
        named = body.get("field") if isinstance(body, dict) else None
        #: The request field the error is about (`entry.condition.rule.type_name`), if any.
        self.field: str | None = named if isinstance(named, str) else (found.group(1) if found else None)


class UnknownSymbol(MarketlabError, LookupError):
    """A symbol or ticker the request named has no data (404 on every
    service); `field` names where it was sent (`symbol`, `ticker`,
    `stock_comparison`, `strategies[2].symbol`)."""


def error_for(status: int, message: str, body: object = None) -> MarketlabError:
    """The exception for an error answer of any service: an unknown name
    (a 404 that names its field) is `UnknownSymbol` everywhere."""
    field = body.get("field") if isinstance(body, dict) else None
    if status == 404 and isinstance(field, str):
        return UnknownSymbol(status, message, body)
    return MarketlabError(status, message, body)


class ConnectionFailed(MarketlabError, ConnectionError):
    """No answer: the connection could not be made, or broke (or timed
    out) on a request the client does not send twice. `status` is None."""

    def __init__(self, message: str):
        super().__init__(None, message)


class RateLimited(MarketlabError):
    """429 that the client did not retry: more retries than allowed, or a
    `Retry-After` longer than the client waits."""

    def __init__(self, status: int, message: str, body: object, retry_after: float | None):
        super().__init__(status, message, body)
        self.retry_after = retry_after


class TaskFailed(MarketlabError):
    """A task or batch ended FAILED; `message` is its error."""


class TaskTimeout(MarketlabError, TimeoutError):
    """`wait(timeout)` ran out before the task finished; `status` is None
    (the task is still running: no answer refused anything)."""


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
