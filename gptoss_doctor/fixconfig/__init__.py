"""fix-config: plan a refresh of a gpt-oss copy's small files, apply it safely, back up, restore.

Safety model
------------
1. Everything that can fail slowly (Hub metadata, downloads, hash checks, disk
   space) happens first, into a scratch folder: a failure there changes nothing.
2. New content is then *staged* inside the model's own state folder (same file
   system), fsynced and re-verified; old files are copied to a timestamped backup.
3. A journal listing the renames is written (fsync). From this point the change
   is decided: the renames run with Ctrl-C deferred, and if the process dies
   anyway, any later run of fix-config on that copy finishes the journal first.
4. In the HF cache the renames only add blobs and a new ``snapshots/<commit>/``;
   the last rename swaps ``refs/main``, the single switch from the old to the new
   state that transformers and vLLM follow.
"""

from __future__ import annotations

from gptoss_doctor.fixconfig.apply import apply, recover
from gptoss_doctor.fixconfig.backup import list_backups, restore
from gptoss_doctor.fixconfig.compare import eos_change
from gptoss_doctor.fixconfig.durable import deferred_signals, write_durable
from gptoss_doctor.fixconfig.plan import ModelReport, build_report, local_eos_hint

# the stages, in order: locate -> hub/compare -> plan -> apply (durable, journal) -> backup
__all__ = ["ModelReport", "apply", "build_report", "deferred_signals", "eos_change", "list_backups",
           "local_eos_hint", "recover", "restore", "write_durable"]
