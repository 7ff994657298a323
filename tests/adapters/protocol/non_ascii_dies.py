"""Rule non-ascii: decodes every read on its own, strictly, and dies on a split character."""

from _speaker import answer, reads_of, serve


def run(message):
    for read in reads_of(message):
        read.decode("utf-8")  # outside any try: the process dies
    return answer(message)


serve(run=run)
