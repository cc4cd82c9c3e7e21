"""Ways to call an agent under test (SPEC §3)."""
