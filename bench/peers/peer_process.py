"""A long-lived `peer_tenact --serve` process, shared by run_peers.py and cli_repeat.py.

The protocol: peer_tenact prints one JSON line when it is ready ({"threads": N})
and one per request; a request is a line "run WORKLOAD REPS" (the answer holds
"times_s", the per-call wall times, and "check", the result check against the
workload's expected values) or "quit". An answer holding "error" ends the
calling script with that message; so does the process ending early.
"""
import json
import subprocess
import sys


class PeerProcess:
    def __init__(self, path, threads, caller):
        """Starts `path --serve --threads THREADS`; `caller` names the script in messages."""
        self.caller = caller
        self.proc = subprocess.Popen([path, "--serve", "--threads", str(threads)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self.ready = self.read()

    def read(self):
        line = self.proc.stdout.readline()
        if not line:
            sys.exit("%s: peer_tenact ended (exit status %d); its message is above" % (self.caller, self.proc.wait()))
        msg = json.loads(line)
        if "error" in msg:
            sys.exit("%s: peer_tenact: %s" % (self.caller, msg["error"]))
        return msg

    def run(self, name, reps):
        """Runs workload `name` `reps` times; returns the answer (times_s, check)."""
        self.proc.stdin.write("run %s %d\n" % (name, reps))
        self.proc.stdin.flush()
        return self.read()

    def close(self):
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        self.proc.wait()
