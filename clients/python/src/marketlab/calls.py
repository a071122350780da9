"""How a call runs, apart from how it is sent. Every request the package
makes is an *operation*: a generator yielding `Request`s and `Sleep`s and
returning its answer. `Client` sends them with `httpx.Client` and
`time.sleep`, `AsyncClient` with `httpx.AsyncClient` and `asyncio.sleep`;
so both have one surface, one retry rule and one reading of each answer.

A method or property whose body is an operation is declared once with
`call` or `reading`: on a blocking client or task it gives the answer, on
an async one an awaitable of it."""

from __future__ import annotations

import asyncio
import functools
import time
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Concatenate, Coroutine, Generator, Generic, ParamSpec, TypeVar, overload

import httpx

T = TypeVar("T")
P = ParamSpec("P")


@dataclass(frozen=True, slots=True)
class Request:
    """One HTTP request; the operation gets its `httpx.Response` back, or
    the transport error thrown in."""

    method: str
    path: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Sleep:
    """A pause (a backoff, a poll interval); the operation gets None back."""

    seconds: float


#: An operation answering `T`.
Op = Generator["Request | Sleep", Any, T]


def drive(http: httpx.Client, op: Op[T]) -> T:
    """Runs an operation to its answer, blocking."""
    reply: Any = None
    error: BaseException | None = None
    while True:
        try:
            step = op.send(reply) if error is None else op.throw(error)
        except StopIteration as done:
            answer: T = done.value
            return answer
        reply, error = None, None
        if isinstance(step, Sleep):
            time.sleep(step.seconds)
            continue
        try:
            reply = http.request(step.method, step.path, **step.options)
        except httpx.TransportError as e:
            error = e


async def drive_async(http: httpx.AsyncClient, op: Op[T]) -> T:
    """Runs an operation to its answer on the running event loop."""
    reply: Any = None
    error: BaseException | None = None
    while True:
        try:
            step = op.send(reply) if error is None else op.throw(error)
        except StopIteration as done:
            answer: T = done.value
            return answer
        reply, error = None, None
        if isinstance(step, Sleep):
            await asyncio.sleep(step.seconds)
            continue
        try:
            reply = await http.request(step.method, step.path, **step.options)
        except httpx.TransportError as e:
            error = e


class Blocking:
    """A client or task whose calls answer values."""

    def _drive(self, op: Op[T]) -> T:
        raise NotImplementedError


class Awaiting:
    """A client or task whose calls answer awaitables."""

    async def _drive(self, op: Op[T]) -> T:
        raise NotImplementedError


class call(Generic[P, T]):
    """A method whose body is an operation: `client.prices(...)` answers a
    frame on a `Client` and an awaitable of it on an `AsyncClient`."""

    def __init__(self, fn: Callable[Concatenate[Any, P], Op[T]]) -> None:
        self.fn = fn
        self.__doc__, self.__name__ = fn.__doc__, fn.__name__

        @functools.wraps(fn)
        def blocking(owner: Blocking, *args: Any, **kwargs: Any) -> Any:
            return owner._drive(fn(owner, *args, **kwargs))

        @functools.wraps(fn)
        async def awaiting(owner: Awaiting, *args: Any, **kwargs: Any) -> Any:
            return await owner._drive(fn(owner, *args, **kwargs))

        self._blocking, self._awaiting = blocking, awaiting

    @overload
    def __get__(self, owner: None, cls: type) -> "call[P, T]": ...
    @overload
    def __get__(self, owner: Blocking, cls: type) -> Callable[P, T]: ...
    @overload
    def __get__(self, owner: Awaiting, cls: type) -> Callable[P, Coroutine[Any, Any, T]]: ...

    def __get__(self, owner: object, cls: type) -> Any:
        if owner is None:
            return self
        return types.MethodType(self._awaiting if isinstance(owner, Awaiting) else self._blocking, owner)


class reading(Generic[T]):
    """A property whose body is an operation: `task.equity` is a frame on a
    `BacktestTask` and an awaitable of it on an `AsyncBacktestTask`."""

    def __init__(self, fn: Callable[[Any], Op[T]]) -> None:
        self.fn = fn
        self.__doc__ = fn.__doc__

    @overload
    def __get__(self, owner: None, cls: type) -> "reading[T]": ...
    @overload
    def __get__(self, owner: Blocking, cls: type) -> T: ...
    @overload
    def __get__(self, owner: Awaiting, cls: type) -> Coroutine[Any, Any, T]: ...

    def __get__(self, owner: object, cls: type) -> Any:
        if owner is None:
            return self
        if isinstance(owner, (Blocking, Awaiting)):
            return owner._drive(self.fn(owner))
        raise TypeError(f"{type(owner).__name__} is neither blocking nor awaiting")
