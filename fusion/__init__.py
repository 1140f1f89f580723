"""L4: parallel retrieval under timeouts and breakers, weighted RRF, rerank, threshold."""
