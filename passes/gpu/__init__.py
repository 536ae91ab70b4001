"""GPU code generation: kernels mapped onto the upstream `gpu` dialect (workgroups, threads, workgroup memory), then
lowered through ROCDL or NVVM. Each pass is one module here, registered like the others."""
