"""Rule version: the handshake has no version."""

from _speaker import HELLO, serve

serve(hello={k: v for k, v in HELLO.items() if k != "version"})
