"""pytc: a tensor compiler on MLIR."""
