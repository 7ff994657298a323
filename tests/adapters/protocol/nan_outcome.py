"""Rule seq (reply shape): the outcome holds NaN, which is not JSON."""

from _speaker import serve

serve(run=lambda message: {"seq": message["seq"], "outcome": {"usage": float("nan")}})
