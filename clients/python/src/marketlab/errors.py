"""Errors the client raises: each carries the server's status and message,
and the field the message names when it names one."""

from __future__ import annotations

import re

# Messages name the offending field as `parameter 'a.b[0].c': ...`.
_FIELD = re.compile(r"parameter '([^']+)'")


#: The HTTP status of the analytics service's codes that its JSON answers
#: carry in an HTTP 200 (the spec's), as the server answers them to a
#: request for a table: 407 (no data) is 404, 411 (insufficient data) 422.
ANALYTICS_STATUS = {407: 404, 411: 422}


class MarketlabError(Exception):
    """The server refused a request (4xx) or failed (5xx); `status` is the
    HTTP status of the answer, `None` when there was no answer. An
    analytics error that came in an HTTP 200 (the spec's JSON: codes 407
    and 411) has the status the server gives it elsewhere (404, 422);
    `code` is the envelope's own code (407, 411, ...; the status when the
    envelope has none)."""

    def __init__(self, status: int | None, message: str, body: object = None):
        super().__init__(f"{status}: {message}" if status is not None else message)
        self.status = status
        self.message = message
        self.body = body
        found = _FIELD.search(message)
        named = body.get("field") if isinstance(body, dict) else None
        #: The request field the error is about (`entry.condition.rule.type_name`), if any.
        self.field: str | None = named if isinstance(named, str) else (found.group(1) if found else None)
        code = _code(body)
        #: The service's code for the error: the analytics envelope's `code`, else `status`.
        self.code: int | None = code if code is not None else status


class UnknownSymbol(MarketlabError, LookupError):
    """A symbol or ticker the request named has no data (404 on every
    service); `field` names where it was sent (`symbol`, `ticker`,
    `stock_comparison`, `strategies[2].symbol`)."""


class NoData(MarketlabError, LookupError):
    """The request was understood but there is nothing to answer: the
    analytics code 407 (no scan has run yet, no signal fired, the date has
    no scan or no option chains, no pattern matched). `status` 404, `code`
    407, whether it came as the spec's JSON (in an HTTP 200) or as the
    answer to a request for a table."""


class InsufficientData(MarketlabError):
    """The data cannot support the answer: the analytics code 411 (too few
    common sessions for the window). `status` 422, `code` 411."""


def error_for(status: int, message: str, body: object = None) -> MarketlabError:
    """The exception for an error answer of any service: the analytics
    codes 407 and 411 are `NoData` and `InsufficientData`, and an unknown
    name (a 404 that names its field) is `UnknownSymbol` everywhere."""
    code = _code(body)
    if code == 407:
        return NoData(ANALYTICS_STATUS[407], message, body)
    if code == 411:
        return InsufficientData(ANALYTICS_STATUS[411], message, body)
    field = body.get("field") if isinstance(body, dict) else None
    if status == 404 and isinstance(field, str):
        return UnknownSymbol(status, message, body)
    return MarketlabError(status, message, body)


def envelope_error(body: object) -> MarketlabError | None:
    """The error an analytics answer of an HTTP 200 carries (its `code` is
    an error code: 407, 411, ...), or None for an answer with data."""
    code = _code(body)
    if code is None or code < 400:
        return None
    return error_for(ANALYTICS_STATUS.get(code, code), message_of(body, "refused"), body)


def _code(body: object) -> int | None:
    """The analytics envelope's `code`, when `body` is one."""
    code = body.get("code") if isinstance(body, dict) else None
    return code if isinstance(code, int) and not isinstance(code, bool) else None


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
