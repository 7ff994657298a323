"""Rule call: the handshake says call is "yes"."""

from _speaker import HELLO, serve

serve(hello={**HELLO, "call": "yes"})
