// Bad command lines fail with one `pytc-opt: error:` line and no Python traceback.
// RUN: not pytc-opt %s -no-such-pass 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not pytc-opt %s --pass-pipeline='builtin.module(canonicalize,no-such-pass)' 2>&1 | FileCheck %s --check-prefix=UNKNOWN-PIPELINE
// RUN: not pytc-opt %s --pass-pipeline='builtin.module(canonicalize' 2>&1 | FileCheck %s --check-prefix=UNBALANCED
// RUN: not pytc-opt %s -canonicalize --pass-pipeline='builtin.module(cse)' 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not pytc-opt %s -pytc-rangeify='bogus=1' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not pytc-opt %s.missing 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not pytc-opt %s -o %t.missing/out.mlir 2>&1 | FileCheck %s --check-prefix=NOWRITE
// RUN: printf "\xff\xfe" > %t.bin && not pytc-opt %t.bin 2>&1 | FileCheck %s --check-prefix=BINARY
// RUN: printf "func.func @f() {\n  return\n}\n\xff" | not pytc-opt - 2>&1 | FileCheck %s --check-prefix=BINARY-STDIN

// UNKNOWN-NOT: Traceback
// UNKNOWN: pytc-opt: error: unknown pass or malformed pipeline element 'no-such-pass' (see pytc-opt --list-passes)
// UNKNOWN-NOT: Traceback

// UNKNOWN-PIPELINE-NOT: Traceback
// UNKNOWN-PIPELINE: pytc-opt: error: unknown pass or malformed pipeline element 'no-such-pass'
// UNKNOWN-PIPELINE-NOT: Traceback

// UNBALANCED-NOT: Traceback
// UNBALANCED: pytc-opt: error: unbalanced '(' in pass pipeline 'builtin.module(canonicalize'
// UNBALANCED-NOT: Traceback

// BOTH-NOT: Traceback
// BOTH: pytc-opt: error: use one of --pass-pipeline, --stage or -<pass> flags
// BOTH-NOT: Traceback

// OPTION-NOT: Traceback
// OPTION: pytc-opt: error: pytc-rangeify has no option 'bogus'
// OPTION-NOT: Traceback

// MISSING-NOT: Traceback
// MISSING: pytc-opt: error: cannot read '{{.*}}errors.mlir.missing': No such file or directory
// MISSING-NOT: Traceback

// NOWRITE-NOT: Traceback
// NOWRITE: pytc-opt: error: cannot write '{{.*}}.missing/out.mlir': No such file or directory
// NOWRITE-NOT: Traceback

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// BINARY-NOT: Traceback
// BINARY: pytc-opt: error: '{{.*}}.bin' is not UTF-8 text (byte 0)

// BINARY-STDIN-NOT: Traceback
// BINARY-STDIN: pytc-opt: error: '<stdin>' is not UTF-8 text (byte 28)
