"""The harness: a case through an adapter, judged.

Layer 3. ``transports`` cuts a body into reads; ``loader`` loads an
adapter and builds the replayed response it parses; ``worker`` is the
process an in-process adapter runs in and ``protocol`` the harness's side of
the JSON-lines protocol (``nodejs`` finds the Node runtime, ``strict_json``
keeps NaN and Infinity out of outcomes and replies); ``engine`` runs
case × transport and gives a verdict through ``comparison``,
``expectations`` (known failures) and ``incremental`` (delivery order). May
import ``corpus``, ``reference`` and the foundation modules.

This ``__init__`` imports nothing, so that the adapter worker loads only
the pieces it needs.
"""
