"""A test adapter that is the reference parser, 0.2 s slower per case.

Each parse appends a line to the file named by ``STREAMPROOF_TEST_MARK`` (when
set) once it is done, so a test knows that case runs are under way.
"""

import os
import time

from streamproof.reference import ResponseReader

NAME = "slow-reference"
VERSION = "1"


def parse(response):
    time.sleep(0.2)
    reader = ResponseReader(response.status, response.headers, response.request)
    for data in response.iter_bytes():
        reader.feed(data)
    outcome = reader.close()
    mark = os.environ.get("STREAMPROOF_TEST_MARK")
    if mark:
        with open(mark, "a", encoding="utf-8") as out:
            out.write(".\n")
    return outcome
