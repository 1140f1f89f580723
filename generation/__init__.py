"""Answer generation: extractive (no LLM) or LLM answers, every citation label checked."""
