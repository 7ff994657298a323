"""Rule keeps-serving: exits after its first crash reply."""

import sys

from _speaker import serve


def after_reply(message, reply):
    if "crash" in reply:
        sys.exit(1)


serve(after_reply=after_reply)
