"""Properties every scheduling pass keeps: each is idempotent on its own output, and the passes compose. And the layers of
passes/ import downward only: target-neutral code imports no target's, and neither target the other's."""
import ast
from pathlib import Path

import pytest
from mlir import ir

from pytc.compiler import context
from pytc.passes import PASSES, pass_manager

GRAPHS = {
  "softmax": """func.func @graph(%a: tensor<4x8xf32>) {
  %m = uop.reduce max %a [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %me = uop.expand %m : tensor<4x1xf32> -> tensor<4x8xf32>
  %n = uop.neg %me : tensor<4x8xf32>
  %s = uop.add %a, %n : tensor<4x8xf32>
  %e = uop.exp2 %s : tensor<4x8xf32>
  %t = uop.reduce add %e [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %te = uop.expand %t : tensor<4x1xf32> -> tensor<4x8xf32>
  %r = uop.recip %te : tensor<4x8xf32>
  %o = uop.mul %e, %r : tensor<4x8xf32>
  uop.sink %o : tensor<4x8xf32>
  return
}""",
  "padded_matmul": """func.func @graph(%a: tensor<4x6xf32>, %b: tensor<8x3xf32>) {
  %p = uop.pad %a low [0, 1] high [0, 1] : tensor<4x6xf32> -> tensor<4x8xf32>
  %x = uop.reshape %p : tensor<4x8xf32> -> tensor<4x8x1xf32>
  %xe = uop.expand %x : tensor<4x8x1xf32> -> tensor<4x8x3xf32>
  %y = uop.reshape %b : tensor<8x3xf32> -> tensor<1x8x3xf32>
  %ye = uop.expand %y : tensor<1x8x3xf32> -> tensor<4x8x3xf32>
  %m = uop.mul %xe, %ye : tensor<4x8x3xf32>
  %s = uop.reduce add %m [1] : tensor<4x8x3xf32> -> tensor<4x1x3xf32>
  %c = uop.contiguous %m : tensor<4x8x3xf32>
  uop.sink %s, %c : tensor<4x1x3xf32>, tensor<4x8x3xf32>
  return
}""",
}
ORDER = ["pytc-rangeify", "pytc-fuse", "pytc-bufferize", "pytc-split-kernels", "pytc-schedule", "pytc-order-loops", "pytc-lower-kernels"]


def run(text: str, pipeline: list[str]) -> str:
  with context():
    module = ir.Module.parse(text)
    pass_manager("builtin.module(" + ",".join(pipeline) + ")", module.context).run(module.operation)
    return str(module)


def test_every_scheduling_pass_is_registered():
  assert set(ORDER) <= set(PASSES)


@pytest.mark.parametrize("graph", GRAPHS)
@pytest.mark.parametrize("position", range(len(ORDER)), ids=ORDER)
def test_pass_is_idempotent(graph, position):
  once = run(GRAPHS[graph], ORDER[:position + 1])
  assert run(once, [ORDER[position]]) == once


PASSES_FOLDER = Path(__file__).resolve().parents[3] / "passes"
LAYERS = sorted(p.name for p in PASSES_FOLDER.iterdir() if (p / "__init__.py").exists())
# the folders of passes/ that each folder may not import from
FORBIDDEN = {"common": {"scheduling", "cpu", "gpu"}, "codegen": {"scheduling", "cpu", "gpu"}, "cpu": {"gpu"}, "gpu": {"cpu"}}


def imported_folders(source: str, package: list[str]) -> set[str]:
  """The folders of passes/ that a module of `package` (["pytc", "passes", folder]) imports from, at module level or
  inside a function."""
  found = set()
  for node in ast.walk(ast.parse(source)):
    if isinstance(node, ast.Import): names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
      base = ".".join(package[:len(package) + 1 - node.level] + ([node.module] if node.module else [])) if node.level else node.module
      names = [f"{base}.{alias.name}" for alias in node.names]
    else: continue
    found |= {parts[2] for parts in (name.split(".") for name in names) if parts[:2] == ["pytc", "passes"] and len(parts) > 2 and parts[2] in LAYERS}
  return found


def test_imports_follow_the_layers():
  crossings = []
  for path in sorted(PASSES_FOLDER.rglob("*.py")):
    folders = path.relative_to(PASSES_FOLDER).parent.parts
    for folder in sorted(imported_folders(path.read_text(), ["pytc", "passes", *folders]) & FORBIDDEN.get(folders[0] if folders else "", set())):
      crossings.append(f"passes/{path.relative_to(PASSES_FOLDER)} imports from passes/{folder}/")
  assert crossings == []


def test_imported_folders_are_found():
  assert set(FORBIDDEN) <= set(LAYERS)
  source = ("from pytc.passes.cpu.vectorize import pack_values\nfrom ..gpu import map_kernels\nfrom . import scalar\n"
            "import pytc.passes.common.walk\nfrom pytc.passes import range_size\ndef f():\n  from pytc.passes import scheduling\n")
  assert imported_folders(source, ["pytc", "passes", "codegen"]) == {"cpu", "gpu", "codegen", "common", "scheduling"}
