"""Keep zarr3c's asv history: benchmark the commits of main that changed the package,
publish the HTML history, and flag what got slower.

```sh
python asv_benchmarks/history.py run                 # every package commit without results
python asv_benchmarks/history.py run --last 3 --bench bench_codecs
python asv_benchmarks/history.py publish             # HTML under asv_benchmarks/.asv/html
python asv_benchmarks/history.py compare             # HEAD against the previous results
```

``run`` asks git for the first-parent commits of ``--branch`` (main) that touched the package
(``src/``, ``setup.py``, ``pyproject.toml``) and hands them to ``asv run`` as a hash file with
``--skip-existing-commits``, so a second run benchmarks only the new ones; asv builds each in
its own virtualenv (``asv.conf.json``). Results go to ``asv_benchmarks/results/<machine>/``,
which is committed, so that the next run on the same machine (asv's machine name, from
``~/.asv-machine.json``) finds them.

``compare`` picks the newest commit before HEAD with results for this machine and runs
``asv compare`` between it and HEAD (which must have results: ``run`` first); every benchmark
asv finds significantly more than ``--factor`` (1.2) slower is printed, and the exit status
is 1 if there is any, 0 otherwise.  Those above the factor but within the noise of their
samples (asv's ``~``) are listed too, without failing.  ``publish`` runs ``asv publish``
over every result kept.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
#: The paths whose changes make a commit worth benchmarking.
PACKAGE_PATHS = ("src", "setup.py", "pyproject.toml")


@dataclass(frozen=True)
class Regression:
    """One line of ``asv compare`` slower than the factor: the benchmark's name, its time
    before and after, their ratio, and whether asv found the change significant (``+``;
    ``~`` is within the noise of the samples)."""

    name: str
    before: str
    after: str
    ratio: str
    significant: bool


def git(*args: str) -> str:
    """Run git in the repository and return its output."""
    return subprocess.run(["git", *args], cwd=REPO, check=True, capture_output=True,
                          text=True).stdout


def asv(*args: str) -> int:
    """Run asv from the benchmark folder (where ``asv.conf.json`` is); its exit status."""
    return subprocess.run([sys.executable, "-m", "asv", *args], cwd=HERE).returncode


def package_commits(branch: str, last: int | None) -> list[str]:
    """The first-parent commits of ``branch`` that touched the package, newest first."""
    out = git("rev-list", "--first-parent", branch, "--", *PACKAGE_PATHS).split()
    return out[:last] if last else out


def machine_name(given: str | None) -> str:
    """``given``, or the machine asv recorded in ``~/.asv-machine.json`` (made if absent)."""
    if given:
        return given
    path = Path.home() / ".asv-machine.json"
    if not path.exists():
        asv("machine", "--yes")
    names = [k for k in json.loads(path.read_text()) if k != "version"]
    if len(names) != 1:
        raise SystemExit(f"{path} describes {len(names)} machines: pass --machine")
    return names[0]


def commits_with_results(machine: str) -> set[str]:
    """The full hashes of the commits this machine has results for."""
    found = set()
    for path in (HERE / "results" / machine).glob("*.json"):
        if path.name in ("machine.json", "benchmarks.json"):
            continue
        commit = json.loads(path.read_text()).get("commit_hash")
        if commit:
            found.add(commit)
    return found


def parse_compare(text: str, factor: float) -> list[Regression]:
    """The rows of ``asv compare`` output slower than ``factor``: those asv marked ``+``
    and those whose ratio is above it but within the noise (``~``)."""
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("|"):  # asv 0.6: a Markdown table
            cells = [cell.strip() for cell in line.strip("|").split("|")]
        else:  # older asv: columns separated by spaces (the name last, maybe with spaces)
            cells = line.split(None, 4)
        if len(cells) != 5 or cells[0] not in ("+", ""):
            continue
        try:
            ratio = float(cells[3].lstrip("~"))
        except ValueError:
            continue
        if cells[0] == "+" or ratio > factor:
            rows.append(Regression(name=cells[4], before=cells[1], after=cells[2],
                                   ratio=cells[3], significant=cells[0] == "+"))
    return rows


def cmd_run(args: argparse.Namespace) -> int:
    commits = package_commits(args.branch, args.last)
    if not commits:
        print("no commit touched the package")
        return 0
    machine = machine_name(args.machine)
    with tempfile.TemporaryDirectory() as tmp:
        hashes = Path(tmp) / "hashes.txt"
        hashes.write_text("\n".join(commits) + "\n")
        extra = ["--bench", args.bench] if args.bench else []
        extra += ["--quick"] if args.quick else []
        return asv("run", "--skip-existing-commits", "--machine", machine,
                   "--launch-method", "spawn", *extra, f"HASHFILE:{hashes}")


def cmd_publish(args: argparse.Namespace) -> int:
    return asv("publish")


def cmd_compare(args: argparse.Namespace) -> int:
    machine = machine_name(args.machine)
    have = commits_with_results(machine)
    head = git("rev-parse", args.head).strip()
    if head not in have:
        print(f"no results for {args.head} ({head[:8]}) on {machine}: run "
              "`python asv_benchmarks/history.py run --last 1` first")
        return 2
    earlier = [c for c in git("rev-list", "--first-parent", f"{head}~1").split() if c in have]
    if not earlier:
        print(f"no results before {head[:8]} on {machine}: nothing to compare with")
        return 0
    proc = subprocess.run(
        [sys.executable, "-m", "asv", "compare", "--machine", machine, "--factor",
         str(args.factor), "--split", earlier[0], head],
        cwd=HERE, capture_output=True, text=True)
    if proc.returncode:
        print(proc.stdout + proc.stderr)
        return proc.returncode
    slower = parse_compare(proc.stdout, args.factor)
    significant = [row for row in slower if row.significant]
    print(f"{head[:8]} against {earlier[0][:8]} on {machine}: {len(significant)} "
          f"benchmark(s) more than {args.factor}x slower, {len(slower) - len(significant)} "
          "more within the noise (~)")
    for row in slower:
        print(f"  {'+' if row.significant else '~'} {row.ratio.lstrip('~'):>6}  "
              f"{row.before:>14} -> {row.after:<14} {row.name}")
    return 1 if significant else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--machine", help="asv machine name (default: ~/.asv-machine.json)")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="benchmark the package commits without results")
    run.add_argument("--branch", default="main")
    run.add_argument("--last", type=int, help="only the newest N package commits")
    run.add_argument("--bench", help="asv's --bench regex (a subset of benchmarks)")
    run.add_argument("--quick", action="store_true", help="asv's --quick (one sample)")
    run.set_defaults(fn=cmd_run)
    sub.add_parser("publish", help="asv publish: the HTML history").set_defaults(fn=cmd_publish)
    compare = sub.add_parser("compare", help="HEAD against the previous results")
    compare.add_argument("--head", default="HEAD")
    compare.add_argument("--factor", type=float, default=1.2)
    compare.set_defaults(fn=cmd_compare)
    args = parser.parse_args(argv)
    return int(args.fn(args))


if __name__ == "__main__":
    sys.exit(main())
