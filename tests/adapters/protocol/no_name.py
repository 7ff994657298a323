"""Rule name: the handshake has no name."""

from _speaker import HELLO, serve

serve(hello={k: v for k, v in HELLO.items() if k != "name"})
