"""A test adapter whose parser kills its own process."""

import os
import sys

NAME = "exits"


def parse(response):
    print("parser giving up", file=sys.stderr)
    os._exit(3)
