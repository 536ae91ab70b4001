"""pytc's HCQ runtime: devices, buffers, signals and command queues.

Backends are found by name: the device "FOO" (or "FOO:1") is the class `FOODevice` of the module `pytc.runtime.ops_foo`
(a file runtime/ops_foo.py, or a module registered under that name in `sys.modules`). The device contract they implement
is runtime/device.py."""

import importlib
import pkgutil
import sys

from pytc.runtime.hcq import DeviceError, HWQueue, Signal, SignalTimeout

PREFIX = f"{__name__}.ops_"


def backends() -> list[str]:
  """The device names this installation can open: CPU, and any other backend module present."""
  found = {m.name.removeprefix("ops_").upper() for m in pkgutil.iter_modules(__path__) if m.name.startswith("ops_")}
  return sorted(found | {name.removeprefix(PREFIX).upper() for name in list(sys.modules) if name.startswith(PREFIX)})


def open_device(name: str) -> object:
  """Open the device named `name` (e.g. "CPU", "CPU:1"); a name no backend provides raises `ValueError`."""
  base = name.split(":")[0].upper()
  if base not in backends():
    raise ValueError(f"device '{name}' is not available here (available: {', '.join(backends())})")
  module = importlib.import_module(PREFIX + base.lower())
  if (device := getattr(module, f"{base}Device", None)) is None:
    raise ValueError(f"backend module {module.__name__} has no class {base}Device")
  return device(name)


__all__ = ["DeviceError", "HWQueue", "Signal", "SignalTimeout", "backends", "open_device"]
