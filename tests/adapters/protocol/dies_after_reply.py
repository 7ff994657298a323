"""Rule quiet-after-reply: dies a moment after each reply (a late fatal error)."""

import os
import threading
import time

from _speaker import serve


def after_reply(message, reply):
    def late():
        time.sleep(0.1)
        os._exit(3)

    threading.Thread(target=late, daemon=True).start()


serve(after_reply=after_reply)
