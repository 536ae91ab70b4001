"""CPU code generation: loop order, register-blocked vector code, and kernels lowered to scf loops over memrefs whose
outermost range a CPU runtime splits across cores."""
