"""pytc passes."""
