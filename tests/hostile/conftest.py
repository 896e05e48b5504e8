"""Fixture ``probe``: run code in a subprocess with a capped address space and report how it ended.

Hostile-input tests (issue 35) must show that zarr3c refuses bad input without allocating
what the input claims: the probe runs under ``RLIMIT_AS`` so that an attempted huge
allocation fails there instead of on the test machine, and the child reports the exception
it ended with and its peak resident memory, which the test bounds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

import pytest

#: The address-space cap of a probe: room for the interpreter, numpy and zarr3c's thread
#: pool, far below what the hostile inputs claim.
DEFAULT_LIMIT = 1 << 30

_WRAPPER = """
import json, resource, sys, traceback
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
outcome = {{"error": None, "module": None, "message": None, "result": None}}
try:
    namespace = {{}}
    exec(compile(sys.stdin.read(), "<probe>", "exec"), namespace)
    outcome["result"] = repr(namespace.get("result"))
except BaseException as exc:
    outcome["error"] = type(exc).__name__
    outcome["module"] = type(exc).__module__
    outcome["message"] = str(exc)[:2000]
    outcome["traceback"] = traceback.format_exc()[-4000:]
# VmHWM is this interpreter's own peak; ru_maxrss would also count the parent's resident
# memory at the fork (Linux keeps the larger across execve).
try:
    with open("/proc/self/status") as status:
        hwm = [line for line in status if line.startswith("VmHWM:")]
    outcome["peak_mib"] = int(hwm[0].split()[1]) / 1024
except (OSError, IndexError, ValueError):
    outcome["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print("@@OUTCOME@@" + json.dumps(outcome))
"""


@dataclass(frozen=True)
class Outcome:
    """How a probe ended: the exception's class name and module (None if it returned), its
    message, ``repr`` of the probe's ``result`` variable, and the peak resident memory."""

    error: str | None
    module: str | None
    message: str | None
    result: str | None
    peak_mib: float
    traceback: str | None = None

    @property
    def zarr3c_error(self) -> bool:
        """Whether the probe ended with one of zarr3c's own errors."""
        return self.module is not None and self.module.startswith("zarr3c")


def run_probe(code: str, *, limit: int = DEFAULT_LIMIT, timeout: float = 120) -> Outcome:
    """Run ``code`` (which may set ``result``) in a fresh interpreter under ``RLIMIT_AS``.

    A crash of the interpreter fails the calling test with the child's output.
    """
    proc = subprocess.run(
        [sys.executable, "-c", _WRAPPER.format(limit=limit)],
        input=textwrap.dedent(code), capture_output=True, text=True, timeout=timeout,
    )
    for line in proc.stdout.splitlines():
        if line.startswith("@@OUTCOME@@"):
            return Outcome(**json.loads(line[len("@@OUTCOME@@"):]))
    raise AssertionError(
        f"probe died (exit {proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    )


@pytest.fixture
def probe() -> Callable[..., Outcome]:
    """:func:`run_probe`, for hostile-input tests under ``tests/hostile``."""
    return run_probe
