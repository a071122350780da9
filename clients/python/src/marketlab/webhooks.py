"""Verifying the webhooks a marketlab server sends (Standard Webhooks:
`webhook-id`, `webhook-timestamp`, `webhook-signature`), with the standard
library only.

    from marketlab import verify_webhook
    event = verify_webhook(secret, request.body, request.headers)
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any, Mapping

from .errors import WebhookVerificationError

#: How old (or how far ahead) a delivery's timestamp may be, in seconds.
TOLERANCE = 300


def _key(secret: str | bytes) -> bytes:
    if isinstance(secret, bytes):
        return secret
    if secret.startswith("whsec_"):
        secret = secret[len("whsec_"):]
    return base64.b64decode(secret + "==")


def sign(secret: str | bytes, msg_id: str, timestamp: int, body: str | bytes) -> str:
    """The `v1,<base64>` signature of a delivery."""
    data = body.encode() if isinstance(body, str) else body
    mac = hmac.new(_key(secret), f"{msg_id}.{timestamp}.".encode() + data, hashlib.sha256)
    return "v1," + base64.b64encode(mac.digest()).decode()


def verify_webhook(
    secret: str | bytes,
    body: str | bytes,
    headers: Mapping[str, str],
    *,
    tolerance: float = TOLERANCE,
    now: float | None = None,
) -> dict[str, Any]:
    """The delivery's event (a JSON object) if `secret` signed it and its
    timestamp is within `tolerance` seconds of now; raises
    `WebhookVerificationError` otherwise. During a rotation's overlap the
    server signs with both secrets: either verifies."""
    lower = {k.lower(): v for k, v in headers.items()}
    msg_id = lower.get("webhook-id")
    stamp = lower.get("webhook-timestamp")
    signatures = lower.get("webhook-signature")
    if not (msg_id and stamp and signatures):
        raise WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature")
    try:
        timestamp = int(stamp)
    except ValueError:
        raise WebhookVerificationError(f"webhook-timestamp {stamp!r} is not a number") from None
    current = time.time() if now is None else now
    if timestamp < current - tolerance:
        raise WebhookVerificationError("timestamp too old")
    if timestamp > current + tolerance:
        raise WebhookVerificationError("timestamp too far in the future")
    expected = sign(secret, msg_id, timestamp, body).split(",", 1)[1].encode()
    for given in signatures.split(" "):
        version, _, value = given.partition(",")
        if version == "v1" and hmac.compare_digest(expected, value.encode()):
            event = json.loads(body)
            if not isinstance(event, dict):
                raise WebhookVerificationError("the signed body is not a JSON object")
            return event
    raise WebhookVerificationError("no matching signature")
