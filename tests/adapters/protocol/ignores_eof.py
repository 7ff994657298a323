"""Rule stdin-closed: keeps running after its stdin closes."""

import time

from _speaker import serve

serve(at_eof=lambda: time.sleep(3600))
