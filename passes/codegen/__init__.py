"""Code generation any target shares: the scalar semantics of the uop ops as arith/math, transcendental functions as
polynomials, values as vectors of lanes, and the scalar loops of a kernel."""
