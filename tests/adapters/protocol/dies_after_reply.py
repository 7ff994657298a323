"""Rule quiet-after-reply: dies a moment after its reply (a late fatal error).

Only after a case whose id ends in "/quiet" (check-adapter's own such case),
so that the other rules' cases are not raced by the death.
"""

import os
import threading
import time

from _speaker import serve


def after_reply(message, reply):
    if not message["case"].endswith("/quiet"):
        return

    def late():
        time.sleep(0.1)
        os._exit(3)

    threading.Thread(target=late, daemon=True).start()


serve(after_reply=after_reply)
