"""Rule large-body: never answers a body over 100 KB."""

import base64
import time

from _speaker import answer, serve


def run(message):
    if len(base64.b64decode(message["body"])) > 100_000:
        time.sleep(3600)
    return answer(message)


serve(run=run)
