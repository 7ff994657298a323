"""A test adapter whose cost is a sleep proportional to the number of events.

The sleep dominates whatever else it does, so ``streamproof scaling`` must
call it linear however busy the machine is.
"""

import time

NAME = "sleeps-linear"
SECONDS_PER_EVENT = 0.0002  # 200 ms per thousand events


def parse(response):
    # Counting is all it reads: nothing but the sleep may cost time.
    events = sum(data.count(b"data:") for data in response.iter_bytes())
    time.sleep(SECONDS_PER_EVENT * events)
    return {"status": "complete", "choices": []}
