"""tenact stress end to end: the JSON report, and a wrong job's way out.

usage: check_stress.py TENACT WORKDIR

1. A run with faults on passes; its --json report adds up (every job is
   correct, failed as injected, wrong, an unexplained error, hung or lost)
   and agrees with the text report.
2. --plant-wrong I (the harness's self-check) makes job I wrong: exit 1, the
   job's program, inputs and replay command are written to --failures DIR,
   the program is valid, the inputs are .npy files of the job's N, and the
   replay command, run as written, replays job I alone and passes.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

import numpy as np

tenact, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def run(args, expect):
    p = subprocess.run([tenact] + args, capture_output=True, text=True, timeout=600)
    if p.returncode != expect:
        sys.exit(f"{args}: exit {p.returncode}, expected {expect}\n{p.stdout}\n{p.stderr}")
    return p.stdout


# 1. The JSON report.
report_path = os.path.join(work, "report.json")
text = run(["stress", "--jobs", "300", "--seed", "4", "--faults", "seed=4,transient=0.02,alloc=0.005",
            "--json", report_path, "--quiet"], 0)
report = json.load(open(report_path))
assert report["passed"] is True, report
parts = ["correct", "wrong", "failed_as_injected", "unexplained_errors", "hung", "lost"]
assert sum(report[k] for k in parts) == report["jobs"] == 300, report
assert report["retries"] > 0, report
assert report["leaks"] == {}, report
assert sum(v["runs"] for v in report["engines"].values()) >= 300, report
assert set(report["engines"]) <= {"sim:0", "sim:1", "sim:2", "sim:3"}, report
m = re.search(r"jobs 300: correct (\d+)", text)
assert m and int(m.group(1)) == report["correct"], text

# 2. A planted wrong job.
failures = os.path.join(work, "failures")
text = run(["stress", "--jobs", "40", "--plant-wrong", "3", "--failures", failures, "--quiet"], 1)
assert "wrong: job 3: output" in text, text
assert "FAILED" in text, text
job = os.path.join(failures, "job-3")
assert sorted(os.listdir(failures)) == ["job-3"], os.listdir(failures)
replay = open(os.path.join(job, "replay.txt")).read().splitlines()
sizes = re.search(r"# N = (\d+), M = (\d+);", replay[1])
n, m = int(sizes.group(1)), int(sizes.group(2))
program = os.path.join(job, "program.json")
run(["check", program], 0)
doc = json.load(open(program))
for i, declared in enumerate(doc["inputs"]):
    x = np.load(os.path.join(job, f"input-{i}.npy"))
    rows = m if declared["shape"] == ["M", "N"] else n
    assert x.shape == (rows, n), (x.shape, declared["shape"], n, m)
words = shlex.split(replay[0])
assert words[0] == "tenact" and words[-2:] == ["--job", "3"], replay[0]
again = run(words[1:], 0)
assert "jobs 1: correct 1" in again, again
print("ok")
