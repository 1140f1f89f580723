"""L1: parse, mask PII, chunk by structure."""
