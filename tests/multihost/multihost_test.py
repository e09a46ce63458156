#!/usr/bin/env python3
"""Several hosts' worth of charkit on one machine.

PostgreSQL and s3rver on loopback (the project's own scripts start them),
two `charkit serve` processes and two `charkit worker` processes sharing
them, API tokens on. Checks:
  - an upload through one server is visible, complete, through the other;
  - a worker killed with SIGKILL mid-job: the other claims the job within
    10 s of the kill (its lease is 3 s) and finishes it;
  - Range reads through either server are served from object storage;
  - deleting everything leaves nothing in the bucket or the catalogue;
  - every process stops cleanly on SIGTERM.
Usage: multihost_test.py CHARKIT_BIN REPO_ROOT WORK_DIR
Exit status: 0 passed, 1 failed, 77 PostgreSQL or s3rver not available.
"""
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

CHARKIT, ROOT, WORK = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
procs = []


def fail(msg):
    print("multihost: FAILED: " + msg, file=sys.stderr)
    for p in procs:
        if p.poll() is None:
            p.kill()
    sys.exit(1)


def run(args, env=None, check=True):
    r = subprocess.run(args, env=env, capture_output=True, text=True)
    if check and r.returncode != 0:
        fail("%s: exit %d\n%s%s" % (" ".join(args), r.returncode, r.stdout, r.stderr))
    return r


def start_service(script, name):
    r = subprocess.run([os.path.join(ROOT, "scripts", script), "start", os.path.join(WORK, name)],
                       capture_output=True, text=True)
    if r.returncode == 77:
        print("multihost: skipped: " + r.stderr.strip(), file=sys.stderr)
        sys.exit(77)
    if r.returncode != 0:
        fail("%s start: %s" % (script, r.stderr))


def stop_services():
    for script, name in (("pg_test_server", "pg"), ("s3_test_server", "s3")):
        subprocess.run([os.path.join(ROOT, "scripts", script), "stop", os.path.join(WORK, name)],
                       capture_output=True)


def spawn(args, env, log_name):
    log = open(os.path.join(WORK, log_name), "w+")
    p = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=log)
    p.log = log
    procs.append(p)
    return p


def listening_port(p, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        p.log.seek(0)
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/", p.log.read())
        if m:
            return int(m.group(1))
        if p.poll() is not None:
            p.log.seek(0)
            fail("server exited: " + p.log.read())
        time.sleep(0.05)
    fail("server did not start")


def http(port, method, path, body=None, token=None, headers=None):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), data=body, method=method)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read(), dict(e.headers)


def psql(url, sql):
    r = run(["psql", url, "-At", "-c", sql])
    return r.stdout.strip()


def bvh(frames):
    """A small skeleton with `frames` frames: big enough that preprocessing takes a while."""
    joints = ["Hips", "Spine", "Chest", "Neck", "Head", "LeftUpLeg", "LeftLeg", "LeftFoot",
              "RightUpLeg", "RightLeg", "RightFoot", "LeftArm", "LeftForeArm", "LeftHand",
              "RightArm", "RightForeArm", "RightHand"]
    parents = {"Spine": "Hips", "Chest": "Spine", "Neck": "Chest", "Head": "Neck",
               "LeftUpLeg": "Hips", "LeftLeg": "LeftUpLeg", "LeftFoot": "LeftLeg",
               "RightUpLeg": "Hips", "RightLeg": "RightUpLeg", "RightFoot": "RightLeg",
               "LeftArm": "Chest", "LeftForeArm": "LeftArm", "LeftHand": "LeftForeArm",
               "RightArm": "Chest", "RightForeArm": "RightArm", "RightHand": "RightForeArm"}
    children = {j: [c for c in joints if parents.get(c) == j] for j in joints}

    def node(j, depth):
        pad = "  " * depth
        kw = "ROOT" if depth == 0 else "JOINT"
        ch = ("CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"
              if depth == 0 else "CHANNELS 3 Zrotation Xrotation Yrotation")
        out = "%s%s %s\n%s{\n%s  OFFSET 0 %d 0\n%s  %s\n" % (pad, kw, j, pad, pad, 10 if depth else 0, pad, ch)
        for c in children[j]:
            out += node(c, depth + 1)
        if not children[j]:
            out += "%s  End Site\n%s  {\n%s    OFFSET 0 5 0\n%s  }\n" % (pad, pad, pad, pad)
        return out + pad + "}\n"

    text = "HIERARCHY\n" + node("Hips", 0) + "MOTION\nFrames: %d\nFrame Time: 0.0333333\n" % frames
    channels = 6 + 3 * (len(joints) - 1)
    rows = []
    for f in range(frames):
        a = (f % 360) * 0.5
        rows.append(" ".join(["0", "90", "0"] + ["%.1f" % a] * (channels - 3)))
    return (text + "\n".join(rows) + "\n").encode()


def main():
    os.makedirs(WORK, exist_ok=True)
    start_service("pg_test_server", "pg")
    start_service("s3_test_server", "s3")
    try:
        scenario()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        stop_services()


def scenario():
    db = open(os.path.join(WORK, "pg", "url")).read().strip()
    blobs = open(os.path.join(WORK, "s3", "url")).read().strip()
    env = dict(os.environ)
    for line in open(os.path.join(WORK, "s3", "env")):
        k, _, v = line.strip().partition("=")
        if k:
            env[k] = v
    token = run([CHARKIT, "token", "create", "--scope", "admin", "--name", "multihost",
                 "--db", db, "--data", os.path.join(WORK, "t")], env).stdout.strip()

    common = ["--db", db, "--blobs", blobs, "--quiet"]
    servers = [spawn([CHARKIT, "serve", "--listen", "127.0.0.1:0", "--workers", "0",
                      "--data", os.path.join(WORK, "srv%d" % i)] + common, env, "serve%d.log" % i)
               for i in range(2)]
    ports = [listening_port(s) for s in servers]
    lease = ["--job-lease", "3"] if "--job-lease" in run([CHARKIT, "worker", "--help"], env).stdout else []
    workers = [spawn([CHARKIT, "worker", "--workers", "1", "--data", os.path.join(WORK, "w%d" % i)]
                     + lease + common[:4], env, "worker%d.log" % i) for i in range(2)]

    # 1. An upload through server 0 is seen through server 1.
    data = bvh(int(os.environ.get("CHARKIT_MULTIHOST_FRAMES", "20000")))
    status, body, _ = http(ports[0], "POST", "/api/motions?filename=long.bvh", data, token)
    if status != 201:
        fail("upload: %d %s" % (status, body))
    motion = json.loads(body)
    mid = motion["id"]
    status, body, _ = http(ports[1], "GET", "/api/motions/%d" % mid, token=token)
    if status != 200 or json.loads(body)["sha256"] != hashlib.sha256(data).hexdigest():
        fail("server 1 does not see the upload: %d %s" % (status, body))

    # 2. Kill the worker that holds the job, mid-job.
    holder = None
    deadline = time.time() + 30
    while time.time() < deadline and holder is None:
        row = psql(db, "SELECT worker FROM jobs WHERE state = 'running' LIMIT 1")
        m = re.match(r"worker-(\d+)-", row)
        if m:
            holder = int(m.group(1))
        else:
            time.sleep(0.02)
    if holder is None:
        fail("no worker ever held the job (did it finish first? raise CHARKIT_MULTIHOST_FRAMES)")
    os.kill(holder, signal.SIGKILL)
    killed_at = time.time()
    survivor = [w for w in workers if w.pid != holder]
    if len(survivor) != 1:
        fail("the job's holder %d is not one of our workers" % holder)
    # Fail-over is the surviving worker claiming the job once the dead one's
    # lease (3 s) runs out: that must happen within 10 s of the kill. The job
    # then runs as long as the motion takes on this machine (a long one, so
    # that the kill lands mid-job), bounded only by the 60 s wait.
    state, claimed = None, None
    while time.time() - killed_at < 60:
        if claimed is None:
            row = psql(db, "SELECT worker FROM jobs WHERE state = 'running' LIMIT 1")
            m = re.match(r"worker-(\d+)-", row)
            if m and int(m.group(1)) == survivor[0].pid:
                claimed = time.time() - killed_at
        _, body, _ = http(ports[1], "GET", "/api/motions/%d" % mid, token=token)
        state = json.loads(body)["preprocessState"]
        if state in ("done", "failed"):
            break
        time.sleep(0.1)
    took = time.time() - killed_at
    if state != "done":
        fail("after the kill the motion is %s" % state)
    if claimed is None:  # claimed and finished between two looks
        claimed = took
    print("multihost: the other worker claimed the job %.1f s after the kill and finished it "
          "%.1f s after" % (claimed, took))
    if claimed > 10:
        fail("the surviving worker claimed the job %.1f s after the kill (> 10 s)" % claimed)

    # 3. Range reads through both servers come from object storage.
    for port in ports:
        status, part, headers = http(port, "GET", "/api/assets/" + motion["sha256"], token=token,
                                     headers={"Range": "bytes=100-1099"})
        if status != 206 or part != data[100:1100]:
            fail("Range through %d: %d, %d bytes" % (port, status, len(part)))
    _, body, _ = http(ports[0], "GET", "/api/motions/%d/keypoints.ndjson" % mid, token=token)
    frames = body.count(b"\n")
    if frames != motion_frames(data):
        fail("keypoints: %d lines" % frames)

    # 4. Delete through server 1: nothing left in the bucket or the catalogue.
    status, body, _ = http(ports[1], "DELETE", "/api/motions/%d" % mid, token=token)
    if status != 200:
        fail("delete: %d %s" % (status, body))
    left = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(WORK, "s3", "data", "charkit-test"))
            for f in fs if not f.endswith("._S3rver_metadata.json")]
    objects = [f for f in left if "/charkit/" in f or "\\charkit\\" in f]
    if objects:
        fail("objects left in the bucket: %s" % objects[:5])
    assets = psql(db, "SELECT count(*) FROM assets")
    if assets != "0":
        fail("%s asset rows left" % assets)

    # 5. Everything stops cleanly.
    for p in servers + survivor:
        p.send_signal(signal.SIGTERM)
    for p in servers + survivor:
        try:
            rc = p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            fail("a process did not stop within 20 s of SIGTERM")
        if rc != 0:
            p.log.seek(0)
            fail("exit %d: %s" % (rc, p.log.read()[-2000:]))
    print("multihost: OK")


def motion_frames(data):
    m = re.search(rb"Frames:\s*(\d+)", data)
    return int(m.group(1))


if __name__ == "__main__":
    main()
