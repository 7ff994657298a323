"""A test adapter whose cost is a sleep proportional to the square of the events.

The sleep dominates whatever else it does, so ``streamproof scaling`` must
call it superlinear (exponent near 2) however busy the machine is.
"""

import time

NAME = "sleeps-quadratic"
SECONDS_PER_THOUSAND_SQUARED = 0.25  # 40 ms at 400 events, 640 ms at 1600


def parse(response):
    # Counting is all it reads: nothing but the sleep may cost time.
    events = sum(data.count(b"data:") for data in response.iter_bytes())
    time.sleep(SECONDS_PER_THOUSAND_SQUARED * (events / 1000) ** 2)
    return {"status": "complete", "choices": []}
