"""Everything a run leaves behind, rendered: results, terminal, HTML, matrix, claims.

Layer 5. ``results`` writes the results and baseline documents,
``coverage`` counts how much of a run was scored, ``terminal`` the progress
and summary, ``wire`` the wire view of a body (and its window around one
byte), ``pinpoint`` the byte where a failure arises, ``json_view`` JSON with
its diverging paths marked, ``failure_groups`` a run's failures by case,
``render`` loads the templates, ``fragments`` the pytest-html pieces,
``matrix`` the cross-adapter matrix, ``providers`` the provider report,
``verify`` checks a results file and makes its badge, ``run_files`` reads runs
back and ``diff`` compares two, ``known_failures`` writes an ``--expect``
file. May import ``checks``, ``harness``, ``corpus``, ``reference`` and the
foundation modules.
"""
