"""The package's import graph, read from the sources: no module imports one that imports it back, at module level or
inside a function; and the runtime imports no MLIR.

Every module of pytc/, passes/ (installed as pytc.passes) and runtime/ (pytc.runtime) is parsed; each `import` and
`from ... import` statement anywhere in it is an edge, except those under `if TYPE_CHECKING:`, which never run. An edge goes
to the module imported (`from a import b` to a.b where b is a module, else to a's module or package __init__), and to the
package __init__ modules Python runs on the way there that are not the importer's own packages. A name pytc/__init__.py loads
on first use (`from pytc import Tensor`) is an edge to the module it comes from."""
import ast
import functools
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = {"pytc": ROOT / "pytc", "pytc.passes": ROOT / "passes", "pytc.runtime": ROOT / "runtime"}


def module_files() -> dict[str, Path]:
  """Module name -> source file, a package by its __init__.py."""
  files = {}
  for package, folder in PACKAGES.items():
    for path in folder.rglob("*.py"):
      parts = path.relative_to(folder).with_suffix("").parts
      files[".".join((package, *(parts[:-1] if parts[-1] == "__init__" else parts)))] = path
  return files


def is_package(name: str, files: dict[str, Path]) -> bool: return files[name].name == "__init__.py"


def lazy_names(files: dict[str, Path]) -> dict[str, str]:
  """The names pytc/__init__.py loads on first use (its _HOMES) -> the module each comes from."""
  for node in ast.parse(files["pytc"].read_text()).body:
    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_HOMES" for t in node.targets):
      return ast.literal_eval(node.value)
  return {}


def runtime_statements(nodes) -> Iterator[ast.Import | ast.ImportFrom]:
  """The import statements among `nodes` and inside them that can run: all but those under `if TYPE_CHECKING:`."""
  for node in nodes:
    if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
      yield from runtime_statements(node.orelse)
      continue
    if isinstance(node, ast.Import | ast.ImportFrom): yield node
    yield from runtime_statements(ast.iter_child_nodes(node))


def imported(statement: ast.Import | ast.ImportFrom, module: str, files: dict[str, Path], lazy: dict[str, str]) -> list[str]:
  """The package's modules that `statement` (in `module`) names."""
  if isinstance(statement, ast.Import): names = [alias.name for alias in statement.names]
  else:
    base = statement.module or ""
    if statement.level:
      package = module if is_package(module, files) else module.rpartition(".")[0]
      for _ in range(statement.level - 1): package = package.rpartition(".")[0]
      base = f"{package}.{base}" if base else package
    names = []
    for alias in statement.names:
      if f"{base}.{alias.name}" in files: names.append(f"{base}.{alias.name}")
      elif base == "pytc" and alias.name in lazy: names += [base, lazy[alias.name]]
      else: names.append(base)
  found = []
  for name in names:
    while name and name not in files: name = name.rpartition(".")[0]  # `import pytc.a.b` where only pytc.a is a module
    if name: found.append(name)
  return found


@functools.cache
def import_graph() -> dict[str, dict[str, int]]:
  """Module -> {module it imports: the line of the first statement doing so}."""
  files, graph = module_files(), {}
  lazy = lazy_names(files)
  for module, path in files.items():
    own = {module.rsplit(".", k)[0] for k in range(module.count(".") + 1)}  # the module and the packages it is in
    edges = graph.setdefault(module, {})
    for statement in runtime_statements([ast.parse(path.read_text(), str(path))]):
      for target in imported(statement, module, files, lazy):
        parents = [target.rsplit(".", k)[0] for k in range(target.count("."), 0, -1)]
        for name in [*parents, target]:
          if name in files and name not in own: edges.setdefault(name, statement.lineno)
  return graph


def shortest_cycle(start: str, group: set[str], graph: dict[str, dict[str, int]]) -> list[str]:
  """The shortest cycle from `start` back to it through the modules of `group` (a breadth-first search)."""
  parent, frontier = {}, [start]
  while frontier:
    reached = []
    for node in frontier:
      for target in graph[node]:
        if target == start:
          path = [node]
          while path[-1] != start: path.append(parent[path[-1]])
          return [*reversed(path), start]
        if target in group and target not in parent: parent[target] = node; reached.append(target)
    frontier = reached
  raise AssertionError(f"{start} is on no cycle of its group")


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
  """A shortest cycle through each strongly connected group of modules (Tarjan's algorithm), as the modules in import order."""
  index, low, stack, groups = {}, {}, [], []
  def visit(node: str) -> None:
    index[node] = low[node] = len(index)
    stack.append(node)
    for target in graph[node]:
      if target not in index: visit(target); low[node] = min(low[node], low[target])
      elif target in stack: low[node] = min(low[node], index[target])
    if low[node] == index[node]:
      group = set(stack[stack.index(node):])
      del stack[stack.index(node):]
      if len(group) > 1: groups.append(group)
  for node in sorted(graph):
    if node not in index: visit(node)
  return [shortest_cycle(min(group), group, graph) for group in groups]


def described(cycle: list[str], graph: dict[str, dict[str, int]], files: dict[str, Path]) -> str:
  return " -> ".join(f"{a} ({files[a].relative_to(ROOT)}:{graph[a][b]})" for a, b in zip(cycle, cycle[1:])) + f" -> {cycle[-1]}"


def test_the_package_has_no_import_cycle():
  graph, files = import_graph(), module_files()
  assert "pytc.movement" in graph["pytc.tensor"] and "pytc.passes.common.attributes" in graph["pytc.graph"] and "pytc.runtime" in graph["pytc.device"]
  assert [described(c, graph, files) for c in cycles(graph)] == []


def test_a_cycle_is_found_and_named():
  graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3, "d": 4}, "d": {}}
  assert cycles(graph) == [["a", "b", "c", "a"]]
  assert cycles({"a": {"b": 1}, "b": {}}) == []


def imports_mlir(path: Path) -> bool:
  for statement in runtime_statements([ast.parse(path.read_text(), str(path))]):
    if isinstance(statement, ast.ImportFrom) and statement.level: continue  # relative: the module's own package
    names = [a.name for a in statement.names] if isinstance(statement, ast.Import) else [statement.module]
    if any(name == "mlir" or name.startswith("mlir.") for name in names): return True
  return False


def test_the_runtime_imports_no_mlir():
  """Not its own modules, nor any pytc module they import: running exported graphs needs no MLIR."""
  graph, files = import_graph(), module_files()
  reached, frontier = set(), [m for m in files if m == "pytc.runtime" or m.startswith("pytc.runtime.")]
  while frontier:
    module = frontier.pop()
    if module not in reached: reached.add(module); frontier += graph[module]
  assert sorted(m for m in reached if imports_mlir(files[m])) == []
