import streamproof


def test_public_api_is_locked() -> None:
    assert sorted(streamproof.__all__) == [
        "Adapter",
        "AdapterError",
        "Case",
        "ContentPiece",
        "Corpus",
        "CorpusError",
        "Divergence",
        "Engine",
        "Event",
        "ReplayResponse",
        "ResponseReader",
        "Result",
        "SSEDecoder",
        "SSEProtocolError",
        "StreamAccumulator",
        "Verdict",
        "__version__",
        "compare",
        "load_adapter",
        "load_corpus",
        "read_response",
        "replay",
    ]
    for name in streamproof.__all__:
        assert getattr(streamproof, name) is not None, name
