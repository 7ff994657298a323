"""Rule quiet-after-reply: a late error after its reply, written on stdout."""

import threading
import time

from _speaker import send, serve


def after_reply(message, reply):
    def late():
        time.sleep(0.1)
        send({"seq": message["seq"], "crash": "late: a background task failed"})

    threading.Thread(target=late, daemon=True).start()


serve(after_reply=after_reply)
