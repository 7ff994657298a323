"""Beyond the corpus: differential fuzzing against a model, and cost verdicts.

``model`` is the abstract response and its outcome by construction,
``generate`` draws one, ``render`` turns it into bytes, ``shrink`` makes a
disagreement small, ``case`` writes it as a candidate case, ``session`` runs
it all through an adapter; ``scaling`` measures how an adapter's cost grows
on the streams of ``families``, timed by ``timing``. docs/fuzzing.md has
the whole story.
"""

from __future__ import annotations

__all__: list[str] = []
