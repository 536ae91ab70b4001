// The CPU queue's host packets (their opcodes) and what running them stops at (pytc_queue_run's result), defined once for
// the command processor (packets.c) and the calling thread's runs (immediate.c). runtime/hcq.py (Op) and runtime/native.py
// spell the same values for Python; test_runtime.py checks them against this file.
#ifndef PYTC_HCQ_CODES_H
#define PYTC_HCQ_CODES_H

enum { EXEC = 1, SIGNAL, WAIT, TIMESTAMP, BARRIER, COPY, OPS };
enum { DONE, SIGNALED, MALFORMED, TIMED_OUT, NO_MEMORY };

#endif
