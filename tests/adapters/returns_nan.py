"""A test adapter whose outcome Python's json would write, but that is not strict JSON.

Under ``whole`` a usage count is NaN, under ``lines`` a key is an int, under
``bytes`` a usage count is -Infinity.
"""

from streamproof.reference import ResponseReader


def parse(response):
    reader = ResponseReader(response.status, response.headers, response.request)
    for data in response.iter_bytes():
        reader.feed(data)
    outcome = reader.close()
    if response.transport == "whole":
        outcome["usage"] = {
            "prompt_tokens": 1,
            "completion_tokens": 2,
            "total_tokens": float("nan"),
        }
    elif response.transport == "lines":
        outcome["choices"][0][7] = "seven"
    else:
        outcome["usage"] = {
            "prompt_tokens": float("-inf"),
            "completion_tokens": 2,
            "total_tokens": 3,
        }
    return outcome
