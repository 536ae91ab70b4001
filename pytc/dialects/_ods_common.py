"""What the generated op classes import: upstream's ODS helpers."""
from mlir.dialects._ods_common import *  # noqa: F403
from mlir.dialects._ods_common import _cext  # noqa: F401
