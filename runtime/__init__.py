"""pytc runtime."""
