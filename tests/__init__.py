"""Shared test support (tests.testkit)."""
