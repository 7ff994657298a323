"""A test adapter whose parser never returns."""

import time

NAME = "hangs"


def parse(response):
    while True:
        time.sleep(60)
