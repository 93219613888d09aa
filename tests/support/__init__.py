"""Test helpers: a fault-injecting OpenAI-compatible server and a deterministic in-process transport."""
