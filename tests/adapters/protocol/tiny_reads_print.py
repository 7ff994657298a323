"""Rule tiny-reads: prints a debug line on stdout when reads are many."""

from _speaker import answer, reads_of, serve


def run(message):
    if len(reads_of(message)) > 100:
        print(f"debug: {len(reads_of(message))} reads")  # on stdout: breaks the protocol
    return answer(message)


serve(run=run)
