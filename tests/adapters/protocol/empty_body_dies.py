"""Rule empty-body: dies (uncaught) when a case has no reads."""

from _speaker import answer, reads_of, serve


def run(message):
    reads_of(message)[-1]  # an IndexError outside any try: the process dies
    return answer(message)


serve(run=run)
