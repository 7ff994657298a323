"""The CPU time the reference adapter spends parsing given case runs, in one process.

Run with a revision's ``conformance/`` first on ``PYTHONPATH`` (``bench_harness``
does); reads ``[[case id, transport], ...]`` on stdin and prints
``{"adapter_cpu": seconds, "runs": n}``: the sum over the case runs of the
process CPU time spent in ``adapter.run(response)`` (the adapter's ``parse``
and its reads of the replayed body), after one untimed pass. It uses only
module paths every revision has (``streamproof.adapter``, ``streamproof.chunking``).
"""

from __future__ import annotations

import contextlib
import json
import sys
import time

from streamproof.adapter import ReplayResponse, load_adapter
from streamproof.chunking import boundaries
from streamproof.corpus import load_corpus


def main() -> int:
    wanted = [tuple(pair) for pair in json.load(sys.stdin)]
    by_id = {case.id: case for case in load_corpus().cases}
    adapter = load_adapter("reference")
    work = []
    for case_id, transport in wanted:
        case = by_id[case_id]
        ends = boundaries(case.body, transport, seed=1, case_dir=case.dir)
        work.append((case, transport, ends))
    spent = 0.0
    for _ in range(2):  # the first pass warms up; the second is timed
        spent = 0.0
        for case, transport, ends in work:
            response = ReplayResponse(
                status=case.status,
                headers=case.headers,
                request=case.request,
                case_id=case.id,
                transport=transport,
                body=case.body,
                ends=ends,
            )
            started = time.process_time()
            with contextlib.suppress(Exception):  # a crash costs what it cost; the run judged it
                adapter.run(response)
            spent += time.process_time() - started
    print(json.dumps({"adapter_cpu": spent, "runs": len(work)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
