"""A test adapter whose parser raises on every case."""

NAME = "raises"


def parse(response):
    raise ValueError("parser exploded\non two lines")
