"""Conformance tests: public tool-call corpora converted to obelisk plans."""
