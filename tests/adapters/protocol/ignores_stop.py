"""Rule stop: keeps running after a stop."""

import time

from _speaker import serve

serve(on_stop=lambda: time.sleep(3600))
