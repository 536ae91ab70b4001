// A malformed pipeline is one `pytc-opt: error:` line before any pass runs: exit 1, no IR, no traceback.
// RUN: not pytc-opt %s --pass-pipeline='builtin.module(pytc-rangeify,,cse)' 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not pytc-opt %s --pass-pipeline='builtin.module(canonicalize,)' 2>&1 | FileCheck %s --check-prefix=TRAILING
// RUN: not pytc-opt %s --pass-pipeline='builtin.module(pytc-rangeify))' 2>&1 | FileCheck %s --check-prefix=CLOSE
// RUN: not pytc-opt %s --pass-pipeline='builtin.module(pytc-vectorize{lanes=8)' 2>&1 | FileCheck %s --check-prefix=BRACE
// RUN: not pytc-opt %s --pass-pipeline='builtin.module(pytc-vectorize{lanes=8}{rows=2})' 2>&1 | FileCheck %s --check-prefix=TWO-BRACES
// RUN: not pytc-opt %s --pass-pipeline='builtin.module(pytc-rangeify{}x)' 2>&1 | FileCheck %s --check-prefix=TRAILING-TEXT
// RUN: not pytc-opt %s --pass-pipeline='builtin.module(func.func(pytc-rangeify))' 2>&1 | FileCheck %s --check-prefix=NESTED
// RUN: not pytc-opt %s --pass-pipeline='builtin.module(pytc_rangeify)' 2>&1 | FileCheck %s --check-prefix=UNDERSCORE
// RUN: not pytc-opt %s -pytc-rangeify stray 2>&1 | FileCheck %s --check-prefix=STRAY
// RUN: not pytc-opt %s -pytc-rangeify -pytc-vectorise 2>&1 | FileCheck %s --check-prefix=TYPO
// The whole pipeline is checked before the first pass runs: no IR, no error from pytc-rangeify's input.
// RUN: not pytc-opt %s -pytc-lower-kernels -no-such-pass 2>&1 | FileCheck %s --check-prefix=FIRST

// EMPTY: pytc-opt: error: empty pass name in pass pipeline 'pytc-rangeify,,cse' (a ',' too many?)
// TRAILING: pytc-opt: error: empty pass name in pass pipeline 'canonicalize,'
// CLOSE: pytc-opt: error: unbalanced ')' in pass pipeline
// BRACE: pytc-opt: error: unbalanced '(' in pass pipeline
// TWO-BRACES: pytc-opt: error: malformed pass 'pytc-vectorize{lanes=8}{rows=2}'
// TRAILING-TEXT: pytc-opt: error: malformed pass 'pytc-rangeify{}x'
// NESTED: pytc-opt: error: pytc-rangeify runs on the whole module: list it at the top level, not inside 'func.func(...)'
// UNDERSCORE: pytc-opt: error: unknown pass or malformed pipeline element 'pytc_rangeify' (see pytc-opt --list-passes)
// STRAY: pytc-opt: error: unexpected argument 'stray'
// TYPO: pytc-opt: error: unknown pass or malformed pipeline element 'pytc-vectorise'
// FIRST-NOT: pytc-lower-kernels expects
// FIRST: pytc-opt: error: unknown pass or malformed pipeline element 'no-such-pass'
// FIRST-NOT: func.func

func.func @graph(%a: tensor<4xf32>) {
  %n = uop.neg %a : tensor<4xf32>
  uop.sink %n : tensor<4xf32>
  return
}
