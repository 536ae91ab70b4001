"""Target-neutral scheduling: a tensor-level graph becomes kernels over buffers and an ordered list of their launches
(split-reduce, rangeify, fuse, bufferize, split-kernels, schedule)."""
