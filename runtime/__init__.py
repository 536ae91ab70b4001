"""pytc's HCQ runtime: devices, buffers, signals and command queues."""
from pytc.runtime.hcq import DeviceError, HWQueue, Signal, SignalTimeout

DEVICES = ("CPU",)


def open_device(name: str) -> object:
  """Open the device named `name` (e.g. "CPU"); a name that is not available raises `ValueError`."""
  base = name.split(":")[0].upper()
  if base == "CPU":
    from pytc.runtime.ops_cpu import CPUDevice
    return CPUDevice(name)
  raise ValueError(f"device '{name}' is not available here (available: {', '.join(DEVICES)})")


__all__ = ["DEVICES", "DeviceError", "HWQueue", "Signal", "SignalTimeout", "open_device"]
