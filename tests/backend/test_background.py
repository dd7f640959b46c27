"""tripy_backend.background.Jobs: work off the caller's thread, in order, with a way to move an item first."""

import os
import sys
import threading
import time

import pytest

from tripy_backend import background


def test_every_item_runs_once_then_finished():
    done, finished = [], threading.Event()
    lock = threading.Lock()

    def work(item):
        with lock:
            done.append(item)

    jobs = background.Jobs(work, list(range(20)), finished=finished.set, threads=2).start()
    assert jobs.wait(timeout=60) and jobs.done
    assert sorted(done) == list(range(20))
    assert finished.wait(timeout=60)


def test_the_first_item_runs_alone_and_the_others_side_by_side():
    lock, running, seen = threading.Lock(), [], []
    both = threading.Barrier(2, timeout=60)  # (items 1 and 2 meet: they run side by side)

    def work(item):
        with lock:
            running.append(item)
            seen.append(list(running))
        if item == 0:
            time.sleep(0.2)  # (long enough for the other thread to take an item, were it free to)
        if item in (1, 2):
            both.wait()
        with lock:
            running.remove(item)

    jobs = background.Jobs(work, [0, 1, 2], threads=2).start()
    assert jobs.wait(timeout=60)
    assert seen[0] == [0] and all(0 not in s for s in seen[1:]) and not both.broken


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own CPU priority is Linux's")
def test_the_first_item_runs_at_the_callers_priority_and_the_others_at_the_lowest():
    caller = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    seen = []

    def work(item):
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    assert background.Jobs(work, [0, 1, 2], threads=1).start().wait(timeout=60)
    assert seen == [caller, 19, 19]


def test_an_item_whose_work_raises_is_reported_and_the_others_still_run(monkeypatch):
    reported, seen, finished = [], [], threading.Event()
    monkeypatch.setattr(threading, "excepthook", reported.append)

    def work(item):
        if item == 1:
            raise BrokenPipeError("the log's pipe is closed")
        seen.append(item)

    jobs = background.Jobs(work, [1, 2, 3], finished=finished.set, threads=1).start()
    assert jobs.wait(timeout=60) and jobs.done  # (not a wait for items that no thread is left to take)
    assert seen == [2, 3] and finished.wait(timeout=60)
    assert [type(r.exc_value) for r in reported] == [BrokenPipeError]


def test_cancel_drops_the_items_not_started_and_finished_is_not_called():
    started, release, seen, finished = threading.Event(), threading.Event(), [], threading.Event()

    def work(item):
        seen.append(item)
        started.set()
        release.wait(timeout=60)

    jobs = background.Jobs(work, [1, 2, 3, 4], finished=finished.set, threads=1).start()
    assert started.wait(timeout=60)
    assert jobs.cancel() == 3 and not jobs.add([5])
    release.set()
    assert jobs.wait(timeout=60) and jobs.done
    assert seen == [1] and not finished.is_set()


def test_first_moves_an_item_ahead_of_the_others():
    order = []
    jobs = background.Jobs(order.append, ["a", "b", "c"], threads=1)
    jobs.first("c")
    jobs.first("missing")  # (not an item: nothing happens)
    assert jobs.start().wait(timeout=60)
    assert order == ["c", "a", "b"]


def test_wait_with_a_timeout_says_whether_the_items_are_done():
    gate = threading.Event()
    jobs = background.Jobs(lambda item: gate.wait(timeout=60), [1], threads=1).start()
    assert not jobs.wait(timeout=0.05) and not jobs.done
    gate.set()
    assert jobs.wait(timeout=60)


def test_work_adds_items_for_the_threads_still_running():
    seen, made, holder = [], threading.Event(), []

    def work(item):
        made.wait(timeout=60)
        seen.append(item)
        if item < 3:
            assert holder[0].add([item + 10])

    holder.append(background.Jobs(work, [1, 2], threads=1).start())
    made.set()
    assert holder[0].wait(timeout=60)
    assert sorted(seen) == [1, 2, 11, 12]


def test_jobs_whose_threads_have_ended_take_no_more_items():
    seen = []
    jobs = background.Jobs(seen.append, [1], threads=1).start()
    assert jobs.wait(timeout=60)
    for t in jobs._threads:
        t.join(timeout=60)
    assert not jobs.add([2])  # (no thread would run it: the caller starts new jobs)
    assert seen == [1] and jobs.done


def test_the_switch_interval_is_short_while_jobs_run_and_restored_after():
    before = sys.getswitchinterval()
    gate, seen = threading.Event(), []

    def work(item):
        seen.append(sys.getswitchinterval())
        gate.wait(timeout=60)

    jobs = background.Jobs(work, [1], threads=1).start()
    while not seen:
        pass
    assert seen[0] == min(before, background.SWITCH_INTERVAL)
    gate.set()
    jobs.wait(timeout=60)
    for t in jobs._threads:
        t.join(timeout=60)
    assert sys.getswitchinterval() == before
