"""What an answer says of the rate limit it counted against: its
`RateLimit-Policy` and `RateLimit` headers (IETF httpapi draft), read into
`RateLimit`, and which mode answered (`MarketLab-Mode`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping


@dataclass(frozen=True, slots=True)
class RateLimit:
    """The last counted answer's rate limit.

    `policy` names it (the service: `backtest`, `analytics` or `data`);
    `limit` requests are allowed per `window` seconds, `remaining` of them
    are left, and the window ends in `reset` seconds."""

    policy: str
    limit: int
    window: int
    remaining: int
    reset: int


def _items(value: str) -> dict[str, dict[str, str]]:
    """A structured-field list of `"name";k=v;...` items, by name."""
    out: dict[str, dict[str, str]] = {}
    for member in value.split(","):
        parts = [p.strip() for p in member.split(";")]
        if not parts or not parts[0]:
            continue
        name = parts[0].strip('"')
        params = {}
        for p in parts[1:]:
            key, _, v = p.partition("=")
            params[key.strip()] = v.strip()
        out[name] = params
    return out


def rate_limit_of(headers: Mapping[str, str]) -> RateLimit | None:
    """The rate limit an answer's headers state, or None when they state none."""
    policy, now = headers.get("ratelimit-policy"), headers.get("ratelimit")
    if policy is None or now is None:
        return None
    try:
        policies, current = _items(policy), _items(now)
        name = next(iter(current))
        return RateLimit(
            policy=name,
            limit=int(policies[name]["q"]),
            window=int(policies[name].get("w", "60")),
            remaining=int(current[name]["r"]),
            reset=int(current[name]["t"]),
        )
    except (KeyError, ValueError, StopIteration):
        return None
