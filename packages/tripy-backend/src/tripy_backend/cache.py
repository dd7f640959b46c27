"""A bounded LRU cache of compiled programs, keyed by a structural key chosen by the caller. Safe to use from
several threads: lookups take no lock (a racing eviction is a miss), changes take one."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Generic, Hashable, Optional, TypeVar

V = TypeVar("V")


class ProgramCache(Generic[V]):
    def __init__(self, capacity: int = 256) -> None:
        self.capacity = capacity
        self._items: "OrderedDict[Hashable, V]" = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

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
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)

    def clear(self) -> None:
        self._items.clear()
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: Any) -> bool:
        return key in self._items
