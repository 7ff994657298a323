"""Rule seq (reply shape): the outcome is a list, not an object."""

from _speaker import serve

serve(run=lambda message: {"seq": message["seq"], "outcome": []})
