#!/usr/bin/python3
"""bench/fsynctester.py URI SECONDS: seed 000's fsync-tester over NBD.
Every 0.5 s, pwrite 1 MiB at offset 0 and flush; print one JSON line with
the times (s) of each write + flush."""
import json, sys, time, nbd
uri, duration = sys.argv[1], float(sys.argv[2])
h = nbd.NBD()
h.connect_uri(uri)
buf = b"\x5a" * (1 << 20)
times = []
end = time.monotonic() + duration
while time.monotonic() < end:
    t0 = time.monotonic()
    h.pwrite(buf, 0)
    h.flush()
    times.append(time.monotonic() - t0)
    time.sleep(0.5)
h.shutdown()
print(json.dumps(times))
