"""Work that runs off the caller's thread: the programs of a range plan that ``tp.compile`` does not wait for (see
``ranges``). ``Jobs(work, items).start()`` runs ``work(item)`` for each item on daemon threads (as many as the host has
cores), in order, the first one alone (the one calls want soonest: two compiles side by side take each other's cores
and GIL) and at the caller's CPU priority, the others at the lowest, so that calls running meanwhile keep the cores
they need; ``first(item)`` moves an item to the front (a call that waits on it), ``wait()`` waits for all of them.

(The first item at the caller's priority: calls made meanwhile run in a stand-in, the whole range's program, until
it is ready, and at the lowest priority it waited for them. ResNet-18 over batch 1..32, calls right after
``tp.compile`` returns: 1.76-1.84x exact programs instead of 2.11-2.27x; GPT-2 small, whose first call at one token
runs ~2.5 s in the 1024-token program either way: 2.5-3.3x against 2.4-3.2x, within the noise;
``benchmarks/compile_once.py --ready``.)

While jobs run, the interpreter switches threads every `SWITCH_INTERVAL` seconds instead of every 5 ms (Python's
default, restored when the last jobs end): the jobs' Python (the pass pipeline) then keeps a call on another thread
waiting for the GIL a tenth as long (measured: calls of a small program during its plan's compile went from 2.7x
to 1.7x the time of its static program).

An item whose work raises is reported (``threading.excepthook``, as for a thread that raises) and counts as done:
the other items still run, and ``wait()`` returns.

An interpreter that exits while jobs run neither hangs nor crashes: the jobs not started are dropped and the
ones running (one XLA compile each) are waited for, before Python finalizes (an ``atexit`` hook, registered when
the first jobs start, so it runs before jaxlib's own exit hooks)."""

from __future__ import annotations

import atexit
import os
import sys
import threading
import weakref
from typing import Any, Callable, Generic, List, Optional, TypeVar

from tripy_flatir.logging import logger
from tripy_backend import _xla

T = TypeVar("T")

_exiting = threading.Event()
_running: "weakref.WeakSet[Jobs[Any]]" = weakref.WeakSet()
_hook_lock = threading.Lock()
_hooked = False
SWITCH_INTERVAL = 0.0005
_active_jobs = 0  # Jobs with threads running (guarded by _hook_lock)
_saved_interval = 0.0


class Jobs(Generic[T]):
    """``work(item)`` for each of `items`, on up to `threads` daemon threads (default: one per core), from `start`,
    the first one with no other beside it, at the caller's priority; then `finished()`, once, unless the interpreter
    is exiting."""

    def __init__(
        self,
        work: Callable[[T], None],
        items: List[T],
        finished: Optional[Callable[[], None]] = None,
        threads: Optional[int] = None,
    ) -> None:
        self._work = work
        self._finished = finished
        self._items = list(items)
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._active = 0
        self._cancelled = False  # (`cancel`: the items left are dropped, `finished` is not called)
        self._alone = True  # the first item has not finished: no other starts beside it
        count = max(1, min(len(self._items), threads or os.cpu_count() or 1))
        self._threads = [threading.Thread(target=self._run, name="tripy-compile", daemon=True) for _ in range(count)]
        self._live = len(self._threads)  # threads still running (the last one out restores the switch interval)

    def start(self) -> "Jobs[T]":
        """Start the threads; returns self."""
        _hook_exit()
        _running.add(self)
        _started()
        for thread in self._threads:
            thread.start()
        return self

    def first(self, item: T) -> None:
        """Start `item` next (if it has not started)."""
        with self._lock:
            if item in self._items:
                self._items.remove(item)
                self._items.insert(0, item)

    def add(self, items: List[T]) -> bool:
        """More items, for the threads still running; False if the jobs are stopping or their threads have ended
        (the items are not taken: start new jobs for them)."""
        with self._lock:
            if _exiting.is_set() or self._live == 0 or self._cancelled:
                return False
            self._items.extend(items)
            return True

    def cancel(self) -> int:
        """Drop the items not started (those running finish; `finished` is not called); how many were dropped.
        Does not wait: it may be called from a finalizer, on any thread."""
        with self._lock:
            dropped = len(self._items)
            self._cancelled = True
            self._items.clear()
            self._idle.notify_all()
        return dropped

    @property
    def done(self) -> bool:
        with self._lock:
            return not self._items and self._active == 0

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Wait until every item is done (or `timeout` seconds); whether they are."""
        with self._lock:
            return self._idle.wait_for(lambda: not self._items and self._active == 0, timeout)

    def _run(self) -> None:
        last = False
        try:
            last = self._loop()
        except BaseException:
            with self._lock:
                self._live -= 1
                last = self._live == 0
            raise
        finally:
            if last:
                _ended()

    def _loop(self) -> bool:
        """Work until no item is left; whether this was the last thread running (counted out with the lock held,
        as it found no item: `add` then knows that no thread will take more)."""
        _xla.compile_in_background()
        with logger.background():
            while True:
                with self._lock:
                    self._idle.wait_for(lambda: not (self._alone and self._active) or _exiting.is_set())
                    if not self._items or _exiting.is_set():
                        if self._active == 0:
                            self._items.clear()
                            self._idle.notify_all()
                        self._live -= 1
                        return self._live == 0
                    item = self._items.pop(0)
                    first = self._alone
                    self._active += 1
                if not first:  # (never back: a thread may lower its priority, not raise it)
                    _lowest_priority()
                try:
                    self._work(item)
                except Exception:  # (work reports its own failures: one that escapes must not stop the others)
                    _report()
                finally:
                    with self._lock:
                        self._active -= 1
                        last = not self._items and self._active == 0
                        if self._alone:
                            self._alone = False
                            self._idle.notify_all()
                    if last and self._finished is not None and not (_exiting.is_set() or self._cancelled):
                        try:
                            self._finished()
                        except Exception:
                            _report()
                    if last:
                        with self._lock:
                            self._idle.notify_all()

    def _stop(self) -> None:
        with self._lock:
            self._items.clear()
            self._idle.notify_all()  # (threads waiting for the first item to finish)
        for thread in self._threads:
            thread.join()


def wait_all() -> None:
    """Wait until every job running in this process is done (a profile counts the programs that run)."""
    for jobs in list(_running):
        jobs.wait()


def _report() -> None:
    """The exception being handled, reported as Python reports one that ends a thread (``threading.excepthook``),
    while the thread goes on with its other items: waiters would otherwise wait for items no thread takes."""
    exc_type, exc_value, exc_traceback = sys.exc_info()
    threading.excepthook(threading.ExceptHookArgs((exc_type, exc_value, exc_traceback, threading.current_thread())))


def _lowest_priority() -> None:
    """This thread at the lowest CPU priority, where the OS lets a thread have one (Linux: a thread is a task)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):
        pass


def _started() -> None:
    global _active_jobs, _saved_interval
    with _hook_lock:
        if _active_jobs == 0:
            _saved_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(_saved_interval, SWITCH_INTERVAL))
        _active_jobs += 1


def _ended() -> None:
    global _active_jobs
    with _hook_lock:
        _active_jobs -= 1
        if _active_jobs == 0:
            sys.setswitchinterval(_saved_interval)


def _hook_exit() -> None:
    global _hooked
    with _hook_lock:
        if not _hooked:
            atexit.register(_stop_all)
            _hooked = True


def _stop_all() -> None:
    """At exit: drop the jobs not started, wait for the running ones."""
    _exiting.set()
    for jobs in list(_running):
        jobs._stop()
