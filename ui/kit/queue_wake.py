"""gradio's queue, woken by work instead of looking for it.

gradio 6's queue (gradio.queueing.Queue) runs two loops on the server's event loop that poll while nothing happens:
`start_processing` looks for a new event every `sleep_when_free` (1 ms on Linux) and `start_progress_updates` looks
for progress to send every `progress_update_sleep_when_free` (10 ms). An idle server woke 1,100 times a second for
them; with the first at 5 ms, 300 times and 28 ms of CPU a second (measured on the 2-core machine), each wake-up
taking the interpreter lock from the threads that run the model. The class paid it at every click: a Step's server
CPU included it.

`wake_on_work(queue)` keeps gradio's loops and makes their sleeps end when there is work: an event pushed or a job
ended (its slot free for an event that waits) wakes them at once. While the queue holds no event and runs no job, that
is the only way they wake (or after IDLE_CAP_S, should a wake-up ever be missed); while it has work, they also wake
when gradio's sleep ends, so progress is sent as often as before. The loops' sleeps are recognised by their length's
type (`Idle`), not by gradio's code.
"""

import asyncio
import contextlib
import sys
import types

IDLE_CAP_S = 1.0  # the longest an idle loop sleeps without a wake-up: what a missed one could cost an event
# gradio's queue looks for a new event every 1 ms (queueing.Queue.sleep_when_free, on Linux): a thousand wake-ups a
# second of the server's one event loop, each taking the interpreter lock from the model's thread. `wake_on_work` makes
# its idle loops wait for work instead; this is how often it still looks while events wait for a free slot
POLL_S = 0.005


class Idle(float):
    """A queue loop's sleep length that, while its queue has nothing to do, lasts until the queue gets work."""

    def __new__(cls, seconds: float, queue, wake: asyncio.Event):
        idle = super().__new__(cls, seconds)
        idle.queue, idle.wake = queue, wake
        return idle

    def idle(self) -> bool:
        return len(self.queue) == 0 and all(job is None for job in self.queue.active_jobs)

    async def until_work(self) -> None:
        self.wake.clear()
        with contextlib.suppress(TimeoutError):  # the sleep's length, or IDLE_CAP_S, passed with no work
            await asyncio.wait_for(self.wake.wait(), IDLE_CAP_S if self.idle() else float(self))


async def _sleep(delay, result=None):
    """asyncio.sleep, except that an Idle sleep ends when its queue gets work."""
    if isinstance(delay, Idle):
        await delay.until_work()
        return result
    return await asyncio.sleep(delay, result)


def _woken(method, wake: asyncio.Event):
    async def woken(*args, **kwargs):
        try:
            return await method(*args, **kwargs)
        finally:
            wake.set()

    return woken


def wake_on_work(queue):
    """Make `queue`'s idle loops wait for work (see the module). Call before the app launches."""
    module = sys.modules[type(queue).__module__]
    if module.asyncio is asyncio:  # the queue module's asyncio, with its sleep the one above; the rest asyncio's own
        shim = types.SimpleNamespace(**{name: getattr(asyncio, name) for name in dir(asyncio) if name[0] != "_"})
        shim.sleep = _sleep
        module.asyncio = shim
    wake = asyncio.Event()
    queue.sleep_when_free = Idle(queue.sleep_when_free, queue, wake)
    queue.progress_update_sleep_when_free = Idle(queue.progress_update_sleep_when_free, queue, wake)
    queue.push = _woken(queue.push, wake)  # an event arrives
    queue.process_events = _woken(queue.process_events, wake)  # a job ends: its slot is free for a waiting event
    return queue
