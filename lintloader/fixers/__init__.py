"""Fixers: one module per strategy (relocate, remove-call, remove-sink) plus the shared writer."""
