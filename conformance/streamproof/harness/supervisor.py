"""The supervisor between the harness and one adapter process (Linux).

The harness runs it as ``python -I -S supervisor.py FD ARGV...`` in a session
of its own. ``FD`` is this end of a socket pair whose other end only the
harness holds: the *lifeline*. The supervisor

1. makes itself a child subreaper (``PR_SET_CHILD_SUBREAPER``): whatever the
   adapter starts, however it detaches (a double fork, ``setsid``, a process
   group of its own), becomes the supervisor's child when its parent dies,
   instead of the init process's;
2. starts ``ARGV`` in a process group of its own, with the supervisor's
   standard streams (the harness's pipes), and says ``started PID`` on the
   lifeline (or ``error ERRNO NAME`` when it cannot);
3. waits for the first of: the adapter's exit, the lifeline's end (the harness
   closed it, or died: the kernel closes it on any death, ``kill -9``
   included), SIGTERM, SIGINT or SIGHUP;
4. then kills the adapter's group and every process left below the supervisor,
   reaps them all, says ``swept`` on the lifeline, and exits the way the
   adapter did (its exit code, or its signal).

It is a separate interpreter from the adapter's, single-threaded, and imports
the standard library only, so no adapter can hold it up: a Python adapter
spinning under its GIL, an adapter ignoring SIGTERM and the end of its stdin,
or a helper that left its process group all end with it. What it cannot
survive is being killed itself, by the adapter or anyone else (then the
harness's own fallback, killing the adapter's group, is what is left):
docs/protocol.md, "Helpers never outlive the run".
"""

import contextlib
import os
import select
import signal
import sys

PR_SET_CHILD_SUBREAPER = 36
STOPPING = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
# While sweeping: how long to wait for a killed child's exit before looking again.
SWEEP_POLL_MS = 50


def become_subreaper() -> bool:
    """Adopt every orphaned descendant; False where the kernel cannot."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def children() -> list[int]:
    """The processes whose parent is this one (live or not yet reaped)."""
    me = os.getpid()
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{me}/task"):
            with open(f"/proc/{me}/task/{task}/children", "rb") as listing:
                found += [int(pid) for pid in listing.read().split()]
        return found
    except OSError:  # a kernel without the children file: read every process's parent
        pass
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and int(fields[1]) == me:
            found.append(int(name))
    return found


class Supervisor:
    def __init__(self, lifeline: int, argv: list[str]) -> None:
        self.lifeline = lifeline
        self.argv = argv
        self.child = 0
        self.status: int | None = None  # the adapter's wait status, once reaped
        self.wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        for number in (signal.SIGCHLD, *STOPPING):
            signal.signal(number, lambda *_: None)

    def say(self, line: str) -> None:
        with contextlib.suppress(OSError):  # the harness is gone already: the sweep follows
            os.write(self.lifeline, line.encode() + b"\n")

    def start(self) -> bool:
        try:
            self.child = os.posix_spawnp(
                self.argv[0],
                self.argv,
                dict(os.environ),
                setpgroup=0,
                # What Python's subprocess restores for its children: the
                # adapter gets default SIGPIPE and SIGXFSZ and no blocked signal.
                setsigdef=(signal.SIGPIPE, signal.SIGXFSZ, *STOPPING),
                setsigmask=(),
            )
        except OSError as exc:
            self.say(f"error {exc.errno or 0} {self.argv[0]}")
            return False
        self.say(f"started {self.child}")
        # From here only the adapter holds the harness's pipes: when it and
        # what it started are gone, the harness reads the end of its stdout.
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
        return True

    def reap(self) -> bool:
        """Reap every child that has ended; True once none is left at all."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return True
            if pid == 0:
                return False
            if pid == self.child and self.status is None:
                self.status = status

    def wait(self) -> None:
        """Until the adapter ends, the lifeline ends, or a stopping signal arrives."""
        poller = select.poll()
        poller.register(self.lifeline, select.POLLIN)
        poller.register(self.wake_r, select.POLLIN)
        while True:
            for fd, _ in poller.poll():
                if fd == self.lifeline:
                    try:
                        said = os.read(self.lifeline, 64)
                    except OSError:
                        said = b""
                    if not said or b"stop" in said:
                        return
                else:
                    woken = os.read(self.wake_r, 64)
                    if any(number in woken for number in STOPPING):
                        return
            self.reap()
            if self.status is not None:
                return

    def sweep(self) -> None:
        """Kill the adapter's group and every process below this one; reap them all."""
        if self.status is None:  # not reaped: its pid and group id are still its own
            for kill in (os.killpg, os.kill):
                with contextlib.suppress(OSError):
                    kill(self.child, signal.SIGKILL)
        poller = select.poll()
        poller.register(self.wake_r, select.POLLIN)
        while True:
            for pid in children():
                with contextlib.suppress(OSError):  # an unreaped child: its pid is not reused
                    os.kill(pid, signal.SIGKILL)
            if self.reap():
                return
            if poller.poll(SWEEP_POLL_MS):
                os.read(self.wake_r, 64)

    def exit(self) -> None:
        """End as the adapter ended: its exit code, or its signal (without a core file)."""
        status = self.status if self.status is not None else signal.SIGKILL
        if os.WIFEXITED(status):
            os._exit(os.WEXITSTATUS(status))
        number = os.WTERMSIG(status) if os.WIFSIGNALED(status) else signal.SIGKILL
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        except (ImportError, OSError, ValueError):
            pass
        signal.set_wakeup_fd(-1)
        signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        os.kill(os.getpid(), number)
        os._exit(128 + number)


def main(argv: list[str]) -> int:
    if len(argv) < 3 or not argv[1].isdigit():
        print("usage: python -I -S supervisor.py LIFELINE-FD COMMAND [ARG...]", file=sys.stderr)
        return 2
    lifeline = int(argv[1])
    os.set_inheritable(lifeline, False)  # the adapter must never hold the lifeline
    become_subreaper()
    supervisor = Supervisor(lifeline, argv[2:])
    if not supervisor.start():
        return 127
    supervisor.wait()
    supervisor.sweep()
    supervisor.say("swept")  # the harness's fallback is for a supervisor that never says it
    supervisor.exit()
    return 1  # not reached: exit() ends the process


if __name__ == "__main__":
    sys.exit(main(sys.argv))
