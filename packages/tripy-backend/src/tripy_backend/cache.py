"""A bounded LRU cache of compiled programs, keyed by a structural key chosen by the caller. Safe to use from
several threads: lookups take no lock (a racing eviction is a miss), changes take one.

An evicted program goes at once (nothing else refers to it: its launchers hold no reference back), with its
compiled code and buffers; every `TRIM_EVERY` evictions the C allocator is asked to give the memory it holds
free back to the system (``memory.release_freed_memory``), so a process that compiles programs of ever-new
shapes stays at a plateau."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Generic, Hashable, Optional, TypeVar

from tripy_backend.memory import release_freed_memory

V = TypeVar("V")
TRIM_EVERY = 32


class ProgramCache(Generic[V]):
    def __init__(self, capacity: int = 256) -> None:
        self._items: "OrderedDict[Hashable, V]" = OrderedDict()
        self._lock = threading.Lock()
        self._capacity = _checked(capacity)
        self.hits = 0
        self.misses = 0
        self.evictions = 0

    @property
    def capacity(self) -> int:
        """The most programs kept; setting it lower evicts the least recently used ones at once."""
        return self._capacity

    @capacity.setter
    def capacity(self, capacity: int) -> None:
        with self._lock:
            self._capacity = _checked(capacity)
            self._evict()

    def get(self, key: Hashable) -> Optional[V]:
        value = self._items.get(key)
        if value is None:
            self.misses += 1
            return None
        self.hits += 1
        try:
            self._items.move_to_end(key)
        except KeyError:  # evicted by another thread meanwhile: the value is still good
            pass
        return value

    def put(self, key: Hashable, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            self._evict()

    def _evict(self) -> None:
        while len(self._items) > self._capacity:
            self._items.popitem(last=False)
            self.evictions += 1
            if self.evictions % TRIM_EVERY == 0:
                release_freed_memory()

    def clear(self) -> None:
        self._items.clear()
        self.hits = self.misses = 0
        release_freed_memory()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: Any) -> bool:
        return key in self._items


def _checked(capacity: Any) -> int:
    if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 0:
        raise ValueError(f"a program cache holds a whole number of programs (0 or more), not {capacity!r}")
    return capacity
