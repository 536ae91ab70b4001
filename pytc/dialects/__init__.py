"""MLIR dialects defined by pytc."""
