"""Rule capabilities: the handshake names a capability that does not exist."""

from _speaker import HELLO, serve

serve(hello={**HELLO, "capabilities": ["content", "telepathy"]})
