"""Rule seq: numbers its replies itself instead of echoing seq."""

import itertools

from _speaker import answer, serve

counter = itertools.count(1)
serve(run=lambda message: {**answer(message), "seq": next(counter)})
