"""Test helpers for fix-config: a local Hub (olah serving git repos) and a fault-injecting proxy."""
