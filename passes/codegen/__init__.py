"""Code generation any target shares: the scalar semantics of the uop ops as arith/math, transcendental functions as
polynomials, values as vectors of lanes, a kernel's scalar loops and its vector code along a range."""
