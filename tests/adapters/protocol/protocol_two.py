"""Rule protocol: the handshake claims protocol 2."""

from _speaker import HELLO, serve

serve(hello={**HELLO, "protocol": 2})
