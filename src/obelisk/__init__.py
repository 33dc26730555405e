"""obelisk."""
