"""Another worker process for the Redis relay tests: it follows, stops or produces a message.

``python _relay_worker.py MODE REDIS_URL PREFIX MESSAGE_ID [LAST_EVENT_ID]`` prints one JSON
object a line, flushed as it goes:

- ``follow``: every frame as it comes (``{"frame": ...}``), then ``{"replay": [...], "status"}``,
  the frames after LAST_EVENT_ID read again once the message ended;
- ``cancel``: the frames as they come, cancelling the message after the first one
  (``{"cancelled": bool}``), then ``{"status", "stopped"}``;
- ``produce``: produces a long message itself, says ``{"ready": true}`` after three frames and
  keeps producing (the test kills it).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator

from unicite.wire import Frame, Relay
from unicite.wire.redis import RedisRelayStore


def emit(value: object) -> None:
    print(json.dumps(value), flush=True)


def dumped(frame: Frame) -> dict[str, str | None]:
    return {"id": frame.id, "event": frame.event, "data": frame.data}


def follow(store: RedisRelayStore, message_id: str, after: str | None) -> None:
    follower = Relay.follow(message_id, store=store)
    if follower is None:
        emit({"missing": message_id})
        return
    for frame in follower.subscribe(timeout=20):
        emit({"frame": dumped(frame)})
    replay = [dumped(frame) for frame in follower.subscribe(after, timeout=0)]
    emit({"replay": replay, "status": follower.status})


def cancel(store: RedisRelayStore, message_id: str) -> None:
    follower = Relay.follow(message_id, store=store)
    assert follower is not None
    cancelled: bool | None = None
    for frame in follower.subscribe(timeout=20):
        emit({"frame": dumped(frame)})
        if cancelled is None:
            cancelled = follower.cancel()
            emit({"cancelled": cancelled})
    answer = follower.answer
    emit({"status": follower.status, "stopped": None if answer is None else answer.extras})


def produce(store: RedisRelayStore, message_id: str) -> None:
    def words() -> Iterator[object]:
        for n in range(10_000):
            time.sleep(0.02)
            yield f"mot {n} "

    relay = Relay(words(), message_id=message_id, store=store)
    while len(relay.frames) < 3:
        time.sleep(0.01)
    emit({"ready": True})
    relay.wait()


def main() -> None:
    mode, url, prefix, message_id, *rest = sys.argv[1:]
    store = RedisRelayStore(url, prefix=prefix, stale_after=1.0)
    try:
        if mode == "follow":
            follow(store, message_id, rest[0] if rest else None)
        elif mode == "cancel":
            cancel(store, message_id)
        else:
            produce(store, message_id)
    finally:
        store.close()


if __name__ == "__main__":
    main()
