"""Check WEFT_TRACE output: one Chrome trace-event JSON per rank that parses, names its lanes,
and holds shuffle and file-access spans of the collective engine with sane times.
Usage: check_trace.py DIR NRANKS"""
import json
import os
import sys

directory, nranks = sys.argv[1], int(sys.argv[2])
for rank in range(nranks):
    path = os.path.join(directory, f"weft-trace.{rank}.json")
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    spans = [e for e in events if e.get("ph") == "X"]
    names = {e["name"] for e in spans}
    assert any(e.get("ph") == "M" and e["args"].get("name") == "transfer backend" for e in events), path
    assert "plan + views" in names, (path, names)
    assert any(n.startswith("shuffle") for n in names), (path, names)
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in spans), path
    if rank == 0:  # the aggregator (one node): it wrote and read the file
        assert "file write" in names and "file read" in names, (path, names)
        assert any(e["tid"] == 1 for e in spans), "no span on the backend lane"
print(f"trace: {nranks} well-formed trace files in {directory}")
