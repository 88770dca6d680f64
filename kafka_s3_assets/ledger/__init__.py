"""The storage protocol that makes exports exactly-once, in one package (docs/exactly-once.md).

Everything under the manifests prefix is read and written here and nowhere else: the manifests
(``manifest``, their invariant ``contiguity``), where they live (``layout``), the last-manifest pointer
(``pointer``), the lease with take-over and replay (``lease``), the sweep of what a dead attempt left
(``sweep``), progress reports (``progress``) and how far the completeness check verified
(``check_state``). ``PartitionLedger`` is the one object, per topic-partition, that the rest of the code
asks.
"""

from .layout import LedgerLayout
from .lease import ConcurrentExportError, ExportLease, ExportTakenOverError, LeaseState
from .manifest import Manifest, ToleratedRange
from .partition import PartitionLedger

__all__ = [
    "ConcurrentExportError",
    "ExportLease",
    "ExportTakenOverError",
    "LeaseState",
    "LedgerLayout",
    "Manifest",
    "PartitionLedger",
    "ToleratedRange",
]
