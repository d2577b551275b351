"""What ``mpirun`` starts for each rank of a ``torchrun`` job: set the rank's environment as
PyTorch's launcher does (from the engine's own numbering), then run the program as ``python``
would, writing an uncaught exception's traceback to the rank's error file for ``torchrun``.

Usage (``torchrun`` builds it): ``python -m torch.distributed._rank_entry [-m] target args...``
"""

from __future__ import annotations

import os
import runpy
import sys
import traceback

from .elastic.multiprocessing.errors import write_error_file


def _set_rank_environment() -> None:
    # Open MPI numbers the processes it starts; the node's first global rank comes from
    # torchrun (one node per mpirun).
    local_rank = int(os.environ["OMPI_COMM_WORLD_LOCAL_RANK"])
    rank = int(os.environ.get("TORCH_NODE_FIRST_RANK", "0")) + local_rank
    os.environ.update(LOCAL_RANK=str(local_rank), RANK=str(rank), ROLE_RANK=str(rank))
    error_dir = os.environ.get("TORCHELASTIC_ERROR_DIR")
    if error_dir:
        os.environ["TORCHELASTIC_ERROR_FILE"] = os.path.join(error_dir, f"rank{rank}.json")


def main() -> None:
    """Run the rank's program (a script path, or ``-m module``) with its arguments."""
    _set_rank_environment()
    arguments = sys.argv[1:]
    as_module = arguments[0] == "-m"
    if as_module:
        arguments = arguments[1:]
    target, sys.argv = arguments[0], arguments
    try:
        if as_module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
            runpy.run_path(target, run_name="__main__")
    except SystemExit as exit_:
        if exit_.code not in (None, 0):
            write_error_file(exit_)
            _leave_the_job(exit_.code if isinstance(exit_.code, int) else 1)
        raise
    except BaseException as error:
        write_error_file(error)
        traceback.print_exc()
        _leave_the_job(1)


def _leave_the_job(code: int) -> None:
    """Exit at once. MPI's orderly shutdown (run at interpreter exit) waits for every rank,
    and the others may be blocked in a collective this rank never joins; a rank that exits
    without it makes mpirun stop the whole job, which is what a failure should do."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
