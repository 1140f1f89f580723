"""L3: choose a retrieval strategy, its sources, weights and timeouts for one request."""
