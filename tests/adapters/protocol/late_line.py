"""Rule quiet-after-reply: a late error after its reply, written on stdout.

Only after a case whose id ends in "/quiet" (check-adapter's own such case),
so that the other rules' cases are not raced by the late line.
"""

import threading
import time

from _speaker import send, serve


def after_reply(message, reply):
    if not message["case"].endswith("/quiet"):
        return

    def late():
        time.sleep(0.1)
        send({"seq": message["seq"], "crash": "late: a background task failed"})

    threading.Thread(target=late, daemon=True).start()


serve(after_reply=after_reply)
