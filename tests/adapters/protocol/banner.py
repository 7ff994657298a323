"""Rule handshake: prints a banner on stdout before its handshake."""

import sys

from _speaker import serve

sys.stdout.write("broken parser 1.0 ready\n")
serve()
