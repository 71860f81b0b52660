#!/usr/bin/env python3
"""Runs a command on a pseudo-terminal, as a person at a terminal would, for the tests of what a
command asks there: once the command's output holds PROMPT, types ANSWER and Enter. Prints all the
command wrote (its standard output and error share the terminal) and exits with its status.

usage: pty_run.py PROMPT ANSWER COMMAND [ARG...]
"""
import os
import pty
import select
import sys
import time


def main() -> int:
    prompt, answer, argv = sys.argv[1].encode(), sys.argv[2].encode(), sys.argv[3:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    output, answered, deadline = b"", False, time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if fd not in ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the command ended and closed the terminal
            break
        if not chunk:
            break
        output += chunk
        if not answered and prompt in output:
            os.write(fd, answer + b"\n")
            answered = True
    _, status = os.waitpid(pid, 0)
    sys.stdout.buffer.write(output)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
